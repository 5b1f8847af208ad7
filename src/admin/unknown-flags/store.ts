/** The Drizzle queries of the unknown-flags registry (written by the metrics consumer, sdk/client-api/usage-queue.ts). */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { events, features, unknownFlags } from '../../db/schema';

/** How long a report is shown and kept (Unleash 8: 24 hours). */
export const UNKNOWN_FLAGS_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface UnknownFlagRow {
  name: string;
  appName: string;
  environment: string;
  seenAt: string;
  lastEventAt: string | null;
}

/**
 * The reports since `since` of names that are still not flags (archived flags are flags), by
 * name, application and environment, for the first `limit` names; with each name's latest
 * audit event (a flag that was deleted leaves its events).
 */
export async function recentReports(db: Db, since: string, limit: number): Promise<UnknownFlagRow[]> {
  return db.all<UnknownFlagRow>(sql`
    WITH names AS (
      SELECT DISTINCT u.name FROM ${unknownFlags} u
      WHERE u.seen_at >= ${since} AND NOT EXISTS (SELECT 1 FROM ${features} f WHERE f.name = u.name)
      ORDER BY u.name LIMIT ${limit}
    )
    SELECT u.name AS name, u.app_name AS appName, u.environment AS environment, u.seen_at AS seenAt,
      (SELECT max(e.created_at) FROM ${events} e WHERE e.feature_name = u.name) AS lastEventAt
    FROM ${unknownFlags} u JOIN names n ON n.name = u.name
    WHERE u.seen_at >= ${since}
    ORDER BY u.name, u.app_name, u.environment`);
}

/** Forgets reports older than `before` (the scheduled expiry). */
export async function expire(db: Db, before: string): Promise<number> {
  const result = await db.run(sql`DELETE FROM ${unknownFlags} WHERE seen_at < ${before}`);
  return result.meta.changes;
}
