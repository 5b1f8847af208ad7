import type { Db } from '../../db/client';
import { expire, UNKNOWN_FLAGS_WINDOW_MS } from './store';

/** Unknown-flag reports are shown and kept for 24 hours, as Unleash 8 keeps them. */
export async function expireUnknownFlagReports(db: Db, now: Date): Promise<{ deleted: number; before: string }> {
  const before = new Date(now.getTime() - UNKNOWN_FLAGS_WINDOW_MS).toISOString();
  return { deleted: await expire(db, before), before };
}
