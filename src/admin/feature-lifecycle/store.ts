/**
 * Drizzle queries of flag lifecycles: `feature_lifecycles` holds one row per stage a flag
 * reached; the newest `created_at` is its current stage.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import { featureLifecycles } from '../../db/schema';

export async function stagesOf(db: Db, feature: string) {
  return db.select().from(featureLifecycles).where(eq(featureLifecycles.feature, feature)).orderBy(featureLifecycles.createdAt);
}

/** Enters (or re-enters) the `completed` stage with its outcome. */
export function complete(db: Db, feature: string, status: 'kept' | 'discarded', statusValue: string | null, enteredAt: string): Statement {
  return db
    .insert(featureLifecycles)
    .values({ feature, stage: 'completed', status, statusValue, createdAt: enteredAt })
    .onConflictDoUpdate({
      target: [featureLifecycles.feature, featureLifecycles.stage],
      set: { status, statusValue, createdAt: enteredAt },
    });
}

export function uncomplete(db: Db, feature: string): Statement {
  return db.delete(featureLifecycles).where(and(eq(featureLifecycles.feature, feature), eq(featureLifecycles.stage, 'completed')));
}

/** How many flags are in each lifecycle stage (the stage entered last). */
export async function stageCounts(db: Db) {
  return db.all<{ stage: string; count: number }>(sql`SELECT stage, count(*) AS count FROM (
      SELECT l.feature, l.stage FROM ${featureLifecycles} l
      WHERE l.rowid = (SELECT l2.rowid FROM ${featureLifecycles} l2 WHERE l2.feature = l.feature ORDER BY l2.created_at DESC, l2.rowid DESC LIMIT 1)
    ) GROUP BY stage`);
}
