/**
 * The batch statement that keeps a project's segment to its project on strategy writes: the
 * strategy writes and `POST /api/admin/segments/strategies` check it before, and this re-checks
 * it inside their batch, after the links, so a segment given another project meanwhile (its
 * update re-checks the other way round) leaves the strategy's write unwritten.
 */
import { eq, sql } from 'drizzle-orm';
import type { Db, Statement } from './client';
import { featureStrategies } from './schema';

/**
 * SQLite raises on malformed JSON: the batch stops if the strategy now links another project's
 * segment. A select builder (drizzle's batch binds no parameters of a raw `db.run`), read on the
 * strategy's own row, which the batch wrote before.
 */
export function failOnForeignSegments(db: Db, strategyId: string): Statement {
  return db
    .select({
      ok: sql`CASE WHEN EXISTS (SELECT 1 FROM feature_strategy_segment l JOIN segments s ON s.id = l.segment_id
        WHERE l.feature_strategy_id = feature_strategies.id
        AND s.segment_project_id IS NOT NULL AND s.segment_project_id <> feature_strategies.project_name)
        THEN json('strategy not written: it would use a segment of another project') ELSE 1 END`,
    })
    .from(featureStrategies)
    .where(eq(featureStrategies.id, strategyId));
}

/** Whether a batch stopped on such a guard (or another `json()` guard). */
export function isGuardAbort(error: unknown): boolean {
  return error instanceof Error && /malformed JSON/i.test(`${error.message} ${String(error.cause ?? '')}`);
}
