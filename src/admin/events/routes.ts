/**
 * The audit trail: `GET /api/admin/search/events` (what the UI's event log and flag history
 * call), `GET /api/admin/events` and `GET /api/admin/events/:featureName`. Every event names
 * its actor: `createdBy` (a person's username or email, or a token's name) and
 * `createdByUserId` (the person, -42 for admin tokens).
 */
import { getDb, type Db } from '../../db/client';
import { json } from '../../http/responses';
import { labelOf } from './labels';
import { parseEventSearch } from './params';
import * as store from './store';
import { ADMIN } from '../../auth/permissions';
import { admin, authenticated, route, type Route } from '../../http/route';
import {
  SearchEventsResponse,
  GetEventsResponse,
  GetEventsForToggleResponse,
  GetEventCreatorsResponse,
  DeprecatedSearchEventsSchema,
  EventsQuery,
  SearchEventsQuery,
} from './schema';

/** Unleash's event keys, in its order (without the search's label and summary). */
async function eventBodies(db: Db, rows: store.EventRow[]) {
  const tags = await store.tagsOf(
    db,
    rows.flatMap((row) => (row.featureName ? [row.featureName] : [])),
  );
  return rows.map((row) => ({
    id: row.id,
    type: row.type,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    createdByUserId: row.createdByUserId,
    data: row.data ?? null,
    preData: row.preData ?? null,
    tags: (row.featureName && tags.get(row.featureName)) || [],
    featureName: row.featureName,
    project: row.project,
    environment: row.environment,
  }));
}

const LEGACY_LIMIT = 100;

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/search/events',
    access: authenticated(),
    tag: 'Events',
    operationId: 'searchEvents',
    summary: 'Search the event log',
    query: SearchEventsQuery,
    queryReadByHandler: true,
    responses: { 200: { description: 'Success', schema: SearchEventsResponse } },
    errors: [400, 403],
    handler: async ({ request, env }) => {
      const params = parseEventSearch(new URL(request.url).searchParams);
      const db = getDb(env);
      const { rows, total } = await store.searchEvents(db, params);
      const events = (await eventBodies(db, rows)).map((event) => ({
        ...event,
        // Unleash formats a markdown summary per event type; we give its generic form.
        label: labelOf(event.type),
        summary: `**${event.createdBy}** triggered **${event.type}**`,
      }));
      return json({ events, total });
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/events',
    access: admin(ADMIN),
    tag: 'Events',
    operationId: 'getEvents',
    summary: 'List recent events',
    query: EventsQuery,
    queryReadByHandler: true,
    responses: { 200: { description: 'Success', schema: GetEventsResponse } },
    errors: [403],
    handler: async ({ request, env }) => {
      const project = new URL(request.url).searchParams.get('project') || undefined;
      const db = getDb(env);
      const { rows, total } = await store.searchEvents(db, {
        project: project === undefined ? undefined : [project],
        offset: 0,
        limit: LEGACY_LIMIT,
      });
      return json({ version: 1, events: await eventBodies(db, rows), totalEvents: total });
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/events/:featureName',
    access: authenticated(),
    tag: 'Events',
    operationId: 'getEventsForToggle',
    summary: 'List the events of one feature flag',
    responses: { 200: { description: 'Success', schema: GetEventsForToggleResponse } },
    errors: [400],
    handler: async ({ env, params }) => {
      const featureName = params.featureName;
      const db = getDb(env);
      const { rows, total } = await store.searchEvents(db, { feature: [featureName], offset: 0, limit: LEGACY_LIMIT });
      return json({ version: 1, toggleName: featureName, events: await eventBodies(db, rows), totalEvents: total });
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/events/search',
    access: authenticated(),
    tag: 'Events',
    operationId: 'deprecatedSearchEvents',
    summary: 'Search for events (deprecated)',
    body: DeprecatedSearchEventsSchema,
    responses: { 200: { description: 'Success', schema: GetEventsResponse } },
    errors: [400],
    /**
     * `POST /api/admin/events/search` (deprecated): newest first; the total counts the events of the
     * type, project and flag asked for, whatever the free text (as Unleash counts them).
     */
    handler: async ({ env, body }) => {
      const db = getDb(env);
      const filters = {
        type: body.type === undefined ? undefined : [body.type],
        project: body.project === undefined ? undefined : [body.project],
        feature: body.feature === undefined ? undefined : [body.feature],
      };
      const { rows, total } = await store.searchEvents(
        db,
        { ...filters, anyText: body.query || undefined, offset: body.offset, limit: body.limit },
        filters,
      );
      return json({ version: 1, events: await eventBodies(db, rows), totalEvents: total });
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/event-creators',
    access: authenticated(),
    tag: 'Events',
    operationId: 'getEventCreators',
    summary: 'List who has created events',
    responses: { 200: { description: 'Success', schema: GetEventCreatorsResponse } },
    /** `GET /api/admin/event-creators`: the event log's "created by" filter. */
    handler: async ({ env }) => json(await store.creators(getDb(env))),
  }),
];
