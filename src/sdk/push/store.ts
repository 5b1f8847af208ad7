/** The reads of the change feed: what the newest committed changes SDKs can see are. */
import { desc, gt } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { sdkChanges } from '../../db/schema';

/** The newest rows of the SDK change log after `after`, newest first, at most `limit`. */
export function newestChanges(db: Db, after: number, limit: number) {
  return db
    .select({
      eventId: sdkChanges.eventId,
      kind: sdkChanges.kind,
      featureName: sdkChanges.featureName,
      environment: sdkChanges.environment,
    })
    .from(sdkChanges)
    .where(gt(sdkChanges.eventId, after))
    .orderBy(desc(sdkChanges.eventId))
    .limit(limit);
}
