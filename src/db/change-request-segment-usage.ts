/**
 * Segments used by open change requests (Draft, In review, Approved, Scheduled): the strategies
 * an `addStrategy` or `updateStrategy` change would give a segment, as Unleash Enterprise's
 * segment-usage read model lists them. The segment module reads them (the segment's users, and
 * "in use" for a delete) without importing the change-request module.
 */
import { asc, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { changeRequestChanges, changeRequests } from './schema';

const OPEN_STATES = ['Draft', 'In review', 'Approved', 'Scheduled'];

const OPEN = sql.join(
  OPEN_STATES.map((state) => sql`${state}`),
  sql`, `,
);

/**
 * Holds for a change of an open request that gives a strategy the segment (written with the
 * tables' names, so it reads the same inside any statement, a delete's condition included).
 */
const openStrategyChange = (segmentId: number) =>
  sql`(cr.state IN (${OPEN}) AND c.action IN ('addStrategy', 'updateStrategy')
    AND json_type(c.payload, '$.segments') = 'array'
    AND EXISTS (SELECT 1 FROM json_each(c.payload, '$.segments') s WHERE s.value = ${segmentId}))`;

/** The ids of the changes of open requests that give a strategy the segment (of requests `also` holds for: `cr.`). */
const changesUsing = (segmentId: number, also: SQL = sql`1`) =>
  sql`SELECT c.id FROM change_request_changes c JOIN change_requests cr ON cr.id = c.change_request_id
    WHERE ${openStrategyChange(segmentId)} AND ${also}`;

/**
 * SQL that holds when an open change request would give a strategy the segment (for a write's
 * own condition); with `outside`, only a request of another project than that.
 */
export function segmentInOpenChangeRequests(segmentId: number, outside?: string): SQL {
  return sql`EXISTS (${changesUsing(segmentId, outside === undefined ? undefined : sql`cr.project <> ${outside}`)})`;
}

/**
 * The strategies open change requests would give the segment, in Unleash's shape: `id` only for
 * a strategy that exists (an update), and the request's id and title (null when untitled).
 */
export async function strategiesInOpenChangeRequests(db: Db, segmentId: number) {
  const rows = await db
    .select({
      payload: changeRequestChanges.payload,
      featureName: changeRequestChanges.feature,
      projectId: changeRequests.project,
      environment: changeRequests.environment,
      requestId: changeRequests.id,
      title: changeRequests.title,
    })
    .from(changeRequestChanges)
    .innerJoin(changeRequests, eq(changeRequests.id, changeRequestChanges.changeRequestId))
    .where(sql`${changeRequestChanges.id} IN (${changesUsing(segmentId)})`)
    .orderBy(asc(changeRequests.id), asc(changeRequestChanges.id));
  return rows.map((row) => ({
    ...(typeof row.payload.id === 'string' ? { id: row.payload.id } : {}),
    projectId: row.projectId,
    featureName: row.featureName,
    strategyName: String(row.payload.name),
    environment: row.environment,
    changeRequest: { id: row.requestId, title: row.title || null },
  }));
}
