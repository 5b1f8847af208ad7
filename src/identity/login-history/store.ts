/** The Drizzle queries of the login history: one table, `login_events`. */
import { desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { loginEvents } from '../../db/schema';

export type LoginEventRow = typeof loginEvents.$inferSelect;
export type NewLoginEvent = typeof loginEvents.$inferInsert;

/** Adds an attempt; one with a `dedupeKey` already recorded is skipped. */
export async function insertEvent(db: Db, row: NewLoginEvent): Promise<void> {
  await db.insert(loginEvents).values(row).onConflictDoNothing();
}

/** Every kept attempt, newest first (retention bounds how many, see src/scheduled.ts). */
export async function listEvents(db: Db): Promise<LoginEventRow[]> {
  return db.select().from(loginEvents).orderBy(desc(loginEvents.id));
}

/** Deletes one attempt; whether it existed. */
export async function deleteEvent(db: Db, id: number): Promise<boolean> {
  const result = await db.delete(loginEvents).where(eq(loginEvents.id, id)).returning({ id: loginEvents.id });
  return result.length > 0;
}

/** Deletes every attempt; how many. */
export async function deleteAll(db: Db): Promise<number> {
  const result = await db.run(sql`DELETE FROM ${loginEvents}`);
  return result.meta.changes;
}
