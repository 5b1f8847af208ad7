/** The Drizzle queries of the login history: one table, `login_events`. */
import { desc, eq, sql } from 'drizzle-orm';
import { d1Statement, runD1Batch, type Db } from '../../db/client';
import { auditEventFromSql, type Actor } from '../../db/events';
import { loginEvents } from '../../db/schema';

export type LoginEventRow = typeof loginEvents.$inferSelect;
export type NewLoginEvent = typeof loginEvents.$inferInsert;

/** Unleash has no event type for deleting login history; ours, named as its other `-deleted` ones. */
const LOGIN_HISTORY_DELETED = 'login-history-deleted';

/** Adds an attempt; one with a `dedupeKey` already recorded is skipped. */
export async function insertEvent(db: Db, row: NewLoginEvent): Promise<void> {
  await db.insert(loginEvents).values(row).onConflictDoNothing();
}

/** Every kept attempt, newest first (retention bounds how many, see src/scheduled.ts). */
export async function listEvents(db: Db): Promise<LoginEventRow[]> {
  return db.select().from(loginEvents).orderBy(desc(loginEvents.id));
}

/**
 * Deletes one attempt and records who did it (`login-history-deleted` with its id, never its
 * contents) in the same batch; whether it existed (nothing is recorded when it did not).
 */
export async function deleteEvent(db: Db, actor: Actor, id: number): Promise<boolean> {
  const [deleted] = await runD1Batch(db, [
    d1Statement(db, db.delete(loginEvents).where(eq(loginEvents.id, id))),
    d1Statement(
      db,
      auditEventFromSql(actor, LOGIN_HISTORY_DELETED, sql`json_object('id', ${id}, 'deleted', changes())`, sql`changes() > 0`),
    ),
  ]);
  return deleted!.meta.changes > 0;
}

/** Deletes every attempt, recording who did it and how many rows went (none: nothing recorded); how many. */
export async function deleteAll(db: Db, actor: Actor): Promise<number> {
  const [deleted] = await runD1Batch(db, [
    d1Statement(db, db.delete(loginEvents)),
    d1Statement(db, auditEventFromSql(actor, LOGIN_HISTORY_DELETED, sql`json_object('deleted', changes())`, sql`changes() > 0`)),
  ]);
  return deleted!.meta.changes;
}
