import * as v from 'valibot';

/**
 * An event as the admin API answers it (Unleash's eventSchema). Its data and preData are
 * whatever the change recorded: any JSON value, or null.
 */
const EventAnswer = v.object({
  id: v.number(),
  type: v.string(),
  createdBy: v.nullable(v.string()),
  createdAt: v.string(),
  createdByUserId: v.number(),
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
  events: v.array(v.object({ ...EventAnswer.entries, featureName: v.string() })),
  totalEvents: v.number(),
});

/** What `GET /api/admin/event-creators` answers with status 200. */
export const GetEventCreatorsResponse = v.array(
  v.object({
    id: v.number(),
    name: v.nullable(v.string()),
  }),
);
