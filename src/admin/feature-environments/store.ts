/** Drizzle writes of a flag in one environment (`feature_environments`: one row per flag and environment of its project). */
import { and, eq } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import { featureEnvironments } from '../../db/schema';

export function setEnabled(db: Db, featureName: string, environment: string, enabled: boolean): Statement {
  return db
    .update(featureEnvironments)
    .set({ enabled })
    .where(and(eq(featureEnvironments.featureName, featureName), eq(featureEnvironments.environment, environment)));
}
