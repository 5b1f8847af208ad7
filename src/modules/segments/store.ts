/** The Drizzle queries of segments. */
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import { d1Statement, runBatch, runD1Batch, type Db } from '../../db/client';
import { auditEvent, auditEventWhere, type Actor, type AuditEvent } from '../../db/events';
import { featureStrategySegment, projects, segments } from '../../db/schema';

export type SegmentRow = typeof segments.$inferSelect;
export type SegmentValues = Pick<typeof segments.$inferInsert, 'name' | 'description' | 'constraints' | 'segmentProjectId'>;

export function listAll(db: Db) {
  return db.select().from(segments).orderBy(asc(segments.id));
}

export async function byId(db: Db, id: number): Promise<SegmentRow | undefined> {
  const [row] = await db.select().from(segments).where(eq(segments.id, id)).limit(1);
  return row;
}

export async function projectExists(db: Db, project: string): Promise<boolean> {
  const rows = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, project)).limit(1);
  return rows.length > 0;
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

export async function update(db: Db, actor: Actor, id: number, values: SegmentValues, event: AuditEvent): Promise<void> {
  await runBatch(db, [db.update(segments).set(values).where(eq(segments.id, id)), auditEvent(db, actor, event)]);
}

/**
 * Deletes the segment only if no strategy uses it — checked by the delete itself, as a
 * strategy linked after a separate check would lose the segment to the cascade and silently
 * reach everyone. The event is written only when the delete removed the row. Returns whether
 * it deleted.
 */
export async function deleteIfUnused(db: Db, actor: Actor, id: number, event: AuditEvent): Promise<boolean> {
  const unused = sql`NOT EXISTS (SELECT 1 FROM ${featureStrategySegment} WHERE ${featureStrategySegment.segmentId} = ${id})`;
  const [deleted] = await runD1Batch(db, [
    d1Statement(db, db.delete(segments).where(and(eq(segments.id, id), unused))),
    // changes(): the rows the delete just above removed, in this same batch.
    d1Statement(db, auditEventWhere(actor, event, sql`changes() = 1`)),
  ]);
  return deleted!.meta.changes > 0;
}
