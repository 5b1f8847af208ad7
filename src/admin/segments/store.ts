/** The Drizzle queries of segments. */
import { and, asc, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { d1Statement, runBatch, runD1Batch, type Db, type Statement } from '../../db/client';
import { auditEvent, auditEventWhere, type Actor, type AuditEvent } from '../../db/events';
import { featureStrategies, featureStrategySegment, features, segments } from '../../db/schema';
import { segmentInOpenChangeRequests } from '../../db/change-request-segment-usage';
import { failOnForeignSegments } from '../../db/segment-project-guard';

export type SegmentRow = typeof segments.$inferSelect;
export type SegmentValues = Pick<typeof segments.$inferInsert, 'name' | 'description' | 'constraints' | 'segmentProjectId'>;

// Unleash counts the projects and flags (not archived) whose strategies use the segment.
const usedBy = (column: 'project_name' | 'feature_name') =>
  sql<number>`(SELECT count(DISTINCT fs.${sql.raw(column)}) FROM feature_strategy_segment l
    JOIN feature_strategies fs ON fs.id = l.feature_strategy_id JOIN features f ON f.name = fs.feature_name
    WHERE l.segment_id = segments.id AND f.archived_at IS NULL)`;

/** All segments by name, with how many projects and flags use each. */
export function listWithUsage(db: Db) {
  return db
    .select({
      id: segments.id,
      name: segments.name,
      description: segments.description,
      constraints: segments.constraints,
      segmentProjectId: segments.segmentProjectId,
      createdBy: segments.createdBy,
      createdAt: segments.createdAt,
      usedInProjects: usedBy('project_name'),
      usedInFeatures: usedBy('feature_name'),
    })
    .from(segments)
    .orderBy(asc(segments.name), asc(segments.id));
}

/** The segments a strategy uses. */
export function byStrategy(db: Db, strategyId: string) {
  return db
    .select({
      id: segments.id,
      name: segments.name,
      description: segments.description,
      constraints: segments.constraints,
      segmentProjectId: segments.segmentProjectId,
      createdBy: segments.createdBy,
      createdAt: segments.createdAt,
    })
    .from(segments)
    .innerJoin(featureStrategySegment, eq(featureStrategySegment.segmentId, segments.id))
    .where(eq(featureStrategySegment.featureStrategyId, strategyId))
    .orderBy(asc(segments.id));
}

/** The strategies of flags not archived that use the segment. */
export function strategiesUsing(db: Db, segmentId: number) {
  return db
    .select({
      id: featureStrategies.id,
      projectId: featureStrategies.projectName,
      featureName: featureStrategies.featureName,
      strategyName: featureStrategies.strategyName,
      environment: featureStrategies.environment,
    })
    .from(featureStrategies)
    .innerJoin(featureStrategySegment, eq(featureStrategySegment.featureStrategyId, featureStrategies.id))
    .innerJoin(features, eq(features.name, featureStrategies.featureName))
    .where(and(eq(featureStrategySegment.segmentId, segmentId), isNull(features.archivedAt)))
    .orderBy(asc(featureStrategies.featureName), asc(featureStrategies.environment), asc(featureStrategies.sortOrder));
}

export async function strategyById(db: Db, strategyId: string) {
  const [row] = await db.select().from(featureStrategies).where(eq(featureStrategies.id, strategyId)).limit(1);
  return row;
}

/** The segments among `ids` that exist, with their name and project. */
export function segmentsAmong(db: Db, ids: readonly number[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .select({ id: segments.id, name: segments.name, project: segments.segmentProjectId })
    .from(segments)
    .where(inArray(segments.id, [...ids]));
}

/**
 * Replaces the segments a strategy uses, with its event, in one batch. The links' foreign
 * keys re-check that the segments still exist: one deleted meanwhile fails the whole batch, as
 * does one given another project meanwhile.
 */
export async function replaceStrategySegments(db: Db, actor: Actor, strategyId: string, segmentIds: readonly number[], event: AuditEvent) {
  await runBatch(db, [
    db.delete(featureStrategySegment).where(eq(featureStrategySegment.featureStrategyId, strategyId)),
    ...segmentIds.map((segmentId) => db.insert(featureStrategySegment).values({ featureStrategyId: strategyId, segmentId })),
    ...(segmentIds.length === 0 ? [] : [failOnForeignSegments(db, strategyId)]),
    auditEvent(db, actor, event),
  ]);
}

export async function byId(db: Db, id: number): Promise<SegmentRow | undefined> {
  const [row] = await db.select().from(segments).where(eq(segments.id, id)).limit(1);
  return row;
}

/** Whether another segment (not `exceptId`) has this name. */
export async function nameTaken(db: Db, name: string, exceptId?: number): Promise<boolean> {
  const rows = await db
    .select({ id: segments.id })
    .from(segments)
    .where(exceptId === undefined ? eq(segments.name, name) : and(eq(segments.name, name), ne(segments.id, exceptId)))
    .limit(1);
  return rows.length > 0;
}

export async function insert(db: Db, actor: Actor, values: SegmentValues, event: AuditEvent): Promise<SegmentRow> {
  const [inserted] = await db.batch([
    db
      .insert(segments)
      .values({ ...values, createdBy: actor.actorName })
      .returning(),
    auditEvent(db, actor, event),
  ]);
  return inserted[0]!;
}

/** A strategy of a flag not archived uses the segment (with `outside`, one of another project than that). */
const usedByFlags = (id: number, outside?: string) =>
  sql`EXISTS (SELECT 1 FROM feature_strategy_segment l JOIN feature_strategies fs ON fs.id = l.feature_strategy_id
    JOIN features f ON f.name = fs.feature_name WHERE l.segment_id = ${id} AND f.archived_at IS NULL
    AND ${outside === undefined ? sql`1` : sql`fs.project_name <> ${outside}`})`;

/**
 * No strategy of a flag not archived uses the segment (archived flags' strategies lose it, as in
 * Unleash), and no open change request would give a strategy it (Unleash Enterprise's `isInUse`).
 */
const unusedSegment = (id: number) => sql`(NOT ${usedByFlags(id)} AND NOT ${segmentInOpenChangeRequests(id)})`;

/**
 * The update of a segment with its event, for one batch (the direct write's or a change
 * request's). A project's segment is written only while no other project's strategy uses it
 * (the service's check, re-checked by the update itself): otherwise the batch aborts, so a
 * strategy that took it up meanwhile leaves nothing written, the event included.
 */
export function updateStatements(db: Db, actor: Actor, id: number, values: SegmentValues, event: AuditEvent): Statement[] {
  const project = values.segmentProjectId;
  const where = project
    ? and(eq(segments.id, id), sql`NOT ${usedByFlags(id, project)} AND NOT ${segmentInOpenChangeRequests(id, project)}`)
    : eq(segments.id, id);
  return [
    db.update(segments).set(values).where(where),
    // SQLite raises on malformed JSON: the batch stops unless the update wrote the row.
    db.run(sql`SELECT CASE WHEN changes() = 1 THEN 1 ELSE json('segment not updated: it changed meanwhile') END`),
    auditEvent(db, actor, event),
  ];
}

/**
 * The delete of a segment that no strategy of a flag not archived uses, with its event, for a
 * change request's batch: the delete removes nothing when one uses it (the caller checks that a
 * row went, as `deleteIfUnused` does).
 */
export function deleteUnusedStatements(db: Db, actor: Actor, id: number, event: AuditEvent): { remove: Statement; event: Statement } {
  return { remove: db.delete(segments).where(and(eq(segments.id, id), unusedSegment(id))), event: auditEvent(db, actor, event) };
}

/** Whether a strategy of a flag not archived uses the segment. */
export async function inUse(db: Db, id: number): Promise<boolean> {
  const rows = await db
    .select({ id: segments.id })
    .from(segments)
    .where(and(eq(segments.id, id), sql`NOT ${unusedSegment(id)}`))
    .limit(1);
  return rows.length > 0;
}

/**
 * Deletes the segment only if no strategy of a flag not archived uses it (archived flags'
 * strategies lose it, as in Unleash) — checked by the delete itself, as a
 * strategy linked after a separate check would lose the segment to the cascade and silently
 * reach everyone. The event is written only when the delete removed the row. Returns whether
 * it deleted.
 */
export async function deleteIfUnused(db: Db, actor: Actor, id: number, event: AuditEvent): Promise<boolean> {
  const [deleted] = await runD1Batch(db, [
    d1Statement(db, db.delete(segments).where(and(eq(segments.id, id), unusedSegment(id)))),
    // changes(): the rows the delete just above removed, in this same batch.
    d1Statement(db, auditEventWhere(actor, event, sql`changes() = 1`)),
  ]);
  return deleted!.meta.changes > 0;
}
