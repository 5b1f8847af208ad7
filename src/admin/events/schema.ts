import * as v from 'valibot';
import { EVENT_TYPES } from './types';

/**
 * An event as the admin API answers it (Unleash's eventSchema). Its data and preData are
 * whatever the change recorded: any JSON value, or null.
 */
const EventAnswer = v.object({
  id: v.number(),
  type: v.string(),
  createdBy: v.nullable(v.string()),
  createdAt: v.string(),
  createdByUserId: v.nullable(v.number()),
  data: v.unknown(),
  preData: v.unknown(),
  tags: v.array(v.object({ value: v.optional(v.string()), type: v.string() })),
  featureName: v.nullable(v.string()),
  project: v.nullable(v.string()),
  environment: v.nullable(v.string()),
});

/** What `GET /api/admin/search/events` answers with status 200: each event with its label and summary. */
export const SearchEventsResponse = v.object({
  events: v.array(v.object({ ...EventAnswer.entries, label: v.string(), summary: v.string() })),
  total: v.number(),
});

/** What `GET /api/admin/events` answers with status 200. */
export const GetEventsResponse = v.object({
  version: v.number(),
  events: v.array(EventAnswer),
  totalEvents: v.number(),
});

/** What `GET /api/admin/events/:featureName` answers with status 200. */
export const GetEventsForToggleResponse = v.object({
  version: v.number(),
  toggleName: v.string(),
  events: v.array(EventAnswer),
  totalEvents: v.number(),
});

/** What `GET /api/admin/event-creators` answers with status 200. */
export const GetEventCreatorsResponse = v.array(
  v.object({
    id: v.number(),
    name: v.nullable(v.string()),
  }),
);

/** `POST /api/admin/events/search` (deprecated): events of a type, project or flag, or naming some text; 100 at most per page. */
export const DeprecatedSearchEventsSchema = v.object({
  type: v.optional(v.picklist(EVENT_TYPES, 'must be equal to one of the allowed event types')),
  project: v.optional(v.string()),
  feature: v.optional(v.string()),
  query: v.optional(v.pipe(v.string(), v.maxLength(1000, 'must be at most 1000 characters long'))),
  limit: v.optional(
    v.pipe(v.number(), v.integer('must be integer'), v.minValue(1, 'must be >= 1'), v.maxValue(100, 'must be <= 100')),
    100,
  ),
  offset: v.optional(v.pipe(v.number(), v.integer('must be integer'), v.minValue(0, 'must be >= 0')), 0),
});

/** `GET /api/admin/search/events`: documented here; params.ts reads it with Unleash's messages. */
export const SearchEventsQuery = v.object({
  query: v.optional(v.string()),
  feature: v.optional(v.string()),
  project: v.optional(v.string()),
  type: v.optional(v.string()),
  createdBy: v.optional(v.string()),
  from: v.optional(v.string()),
  to: v.optional(v.string()),
  offset: v.optional(v.string()),
  limit: v.optional(v.string()),
});

/** `GET /api/admin/events`: the project whose events to list (an empty one lists all). */
export const EventsQuery = v.object({ project: v.optional(v.string()) });
