/** The Drizzle queries of the feedback a person has given. */
import { and, asc, count, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { userFeedback } from '../../db/schema';

export type FeedbackRow = typeof userFeedback.$inferSelect;

export function ofUser(db: Db, userId: number): Promise<FeedbackRow[]> {
  return db.select().from(userFeedback).where(eq(userFeedback.userId, userId)).orderBy(asc(userFeedback.feedbackId));
}

export async function countOfUser(db: Db, userId: number): Promise<number> {
  const [row] = await db.select({ n: count() }).from(userFeedback).where(eq(userFeedback.userId, userId));
  return row?.n ?? 0;
}

export async function exists(db: Db, userId: number, feedbackId: string): Promise<boolean> {
  const rows = await db
    .select({ id: userFeedback.feedbackId })
    .from(userFeedback)
    .where(and(eq(userFeedback.userId, userId), eq(userFeedback.feedbackId, feedbackId)))
    .limit(1);
  return rows.length > 0;
}

/** Writes the person's answer to a questionnaire (again: replaces it) and answers the stored row. */
export async function upsert(db: Db, row: FeedbackRow): Promise<FeedbackRow> {
  const [stored] = await db
    .insert(userFeedback)
    .values(row)
    .onConflictDoUpdate({ target: [userFeedback.userId, userFeedback.feedbackId], set: { given: row.given, neverShow: row.neverShow } })
    .returning();
  return stored!;
}
