/** The Drizzle queries of flag links. */
import { and, asc, eq, sql } from 'drizzle-orm';
import { d1Statement, runD1Batch, type Db } from '../../db/client';
import { auditEventWhere, type Actor, type AuditEvent } from '../../db/events';
import { featureLinks, features } from '../../db/schema';

export type LinkRow = typeof featureLinks.$inferSelect;

/** The flag a link belongs to: its project and whether it is archived. */
export async function featureOf(db: Db, name: string) {
  const [row] = await db
    .select({ name: features.name, project: features.project, archivedAt: features.archivedAt })
    .from(features)
    .where(eq(features.name, name))
    .limit(1);
  return row;
}

/** A flag's links in creation order (their ULIDs sort by time). */
export function ofFeature(db: Db, featureName: string) {
  return db.select().from(featureLinks).where(eq(featureLinks.featureName, featureName)).orderBy(asc(featureLinks.id));
}

export async function byId(db: Db, id: string): Promise<LinkRow | undefined> {
  const [row] = await db.select().from(featureLinks).where(eq(featureLinks.id, id)).limit(1);
  return row;
}

export async function countOf(db: Db, featureName: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)` })
    .from(featureLinks)
    .where(eq(featureLinks.featureName, featureName));
  return row?.n ?? 0;
}

/**
 * Adds the link unless, by the time the batch runs, the flag is gone or archived or already has
 * `limit` links (a concurrent add); the event is written only with the row. True when added.
 */
export async function insertIfRoom(db: Db, actor: Actor, row: LinkRow, limit: number, event: AuditEvent): Promise<boolean> {
  const [inserted] = await runD1Batch(db, [
    d1Statement(
      db,
      sql`INSERT INTO ${featureLinks} (id, feature_name, url, title, domain)
        SELECT ${row.id}, ${row.featureName}, ${row.url}, ${row.title}, ${row.domain}
        WHERE EXISTS (SELECT 1 FROM ${features} WHERE name = ${row.featureName} AND archived_at IS NULL)
        AND (SELECT count(*) FROM ${featureLinks} WHERE feature_name = ${row.featureName}) < ${limit}`,
    ),
    d1Statement(db, auditEventWhere(actor, event, sql`changes() = 1`)),
  ]);
  return inserted!.meta.changes > 0;
}

/** Rewrites the link's url, title and domain while it still belongs to the flag; true when written. */
export async function update(db: Db, actor: Actor, row: LinkRow, event: AuditEvent): Promise<boolean> {
  const [updated] = await runD1Batch(db, [
    d1Statement(
      db,
      db
        .update(featureLinks)
        .set({ url: row.url, title: row.title, domain: row.domain })
        .where(and(eq(featureLinks.id, row.id), eq(featureLinks.featureName, row.featureName))),
    ),
    d1Statement(db, auditEventWhere(actor, event, sql`changes() = 1`)),
  ]);
  return updated!.meta.changes > 0;
}

/** Removes the link while it still belongs to the flag; true when removed. */
export async function remove(db: Db, actor: Actor, id: string, featureName: string, event: AuditEvent): Promise<boolean> {
  const [deleted] = await runD1Batch(db, [
    d1Statement(db, db.delete(featureLinks).where(and(eq(featureLinks.id, id), eq(featureLinks.featureName, featureName)))),
    d1Statement(db, auditEventWhere(actor, event, sql`changes() = 1`)),
  ]);
  return deleted!.meta.changes > 0;
}
