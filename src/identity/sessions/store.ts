import { and, count, eq, gt, lte } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { sessions } from '../../db/schema';

export function insertSessionStatement(db: Db, session: typeof sessions.$inferInsert) {
  return db.insert(sessions).values(session);
}

/** Expired sessions are useless: they go when their user signs in again (and by the sweep). */
export function deleteExpiredStatement(db: Db, userId: number, now: string) {
  return db.delete(sessions).where(and(eq(sessions.userId, userId), lte(sessions.expiresAt, now)));
}

export async function countActive(db: Db, userId: number, now: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(sessions)
    .where(and(eq(sessions.userId, userId), gt(sessions.expiresAt, now)));
  return row?.n ?? 0;
}
