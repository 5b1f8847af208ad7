/** The Drizzle queries of message banners; every write records its event in the same batch. */
import { asc, eq, sql } from 'drizzle-orm';
import { d1Statement, runD1Batch, type Db } from '../../db/client';
import { auditEventFromSql, auditEventWhere, type Actor, type AuditEvent } from '../../db/events';
import { banners } from '../../db/schema';

export type BannerRow = typeof banners.$inferSelect;
export type BannerValues = Omit<BannerRow, 'id' | 'createdAt'>;

const bool = (column: string) => sql.raw(`json(CASE b.${column} WHEN 1 THEN 'true' ELSE 'false' END)`);

/** The banner just inserted (AUTOINCREMENT: the highest id), as the event's data, in the answer's key order. */
const newestAsJson = sql`(SELECT json_object('id', b.id, 'message', b.message, 'enabled', ${bool('enabled')},
  'variant', b.variant, 'sticky', ${bool('sticky')}, 'icon', b.icon, 'link', b.link, 'linkText', b.link_text,
  'dialogTitle', b.dialog_title, 'dialog', b.dialog, 'createdAt', b.created_at)
  FROM ${banners} b WHERE b.id = last_insert_rowid())`;

export function all(db: Db): Promise<BannerRow[]> {
  return db.select().from(banners).orderBy(asc(banners.id));
}

export async function byId(db: Db, id: number): Promise<BannerRow | undefined> {
  const [row] = await db.select().from(banners).where(eq(banners.id, id)).limit(1);
  return row;
}

/** Inserts the banner and its `banner-created` event (carrying the id the database gave). */
export async function insert(db: Db, actor: Actor, values: BannerValues): Promise<BannerRow> {
  const [inserted] = await runD1Batch(db, [
    d1Statement(db, db.insert(banners).values(values).returning({ id: banners.id })),
    d1Statement(db, auditEventFromSql(actor, 'banner-created', newestAsJson)),
  ]);
  const id = Number((inserted!.results[0] as { id: number }).id);
  return (await byId(db, id))!;
}

/** Rewrites the banner if it still exists; the event is written only with the row. True when written. */
export async function update(db: Db, actor: Actor, id: number, values: BannerValues, event: AuditEvent): Promise<boolean> {
  const [updated] = await runD1Batch(db, [
    d1Statement(db, db.update(banners).set(values).where(eq(banners.id, id))),
    d1Statement(db, auditEventWhere(actor, event, sql`changes() = 1`)),
  ]);
  return updated!.meta.changes > 0;
}

/** Deletes the banner if it still exists, with its event. True when deleted. */
export async function remove(db: Db, actor: Actor, id: number, event: AuditEvent): Promise<boolean> {
  const [deleted] = await runD1Batch(db, [
    d1Statement(db, db.delete(banners).where(eq(banners.id, id))),
    d1Statement(db, auditEventWhere(actor, event, sql`changes() = 1`)),
  ]);
  return deleted!.meta.changes > 0;
}
