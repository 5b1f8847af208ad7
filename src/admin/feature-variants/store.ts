/** Drizzle queries of a flag's environment variants (a JSON list on each `feature_environments` row). */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import { featureEnvironments, type VariantDoc } from '../../db/schema';

/** A flag's environments with their variants, in the order they were attached. */
export async function featureEnvironmentVariants(db: Db, featureName: string) {
  return db
    .select({ environment: featureEnvironments.environment, variants: featureEnvironments.variants })
    .from(featureEnvironments)
    .where(eq(featureEnvironments.featureName, featureName))
    .orderBy(sql`${featureEnvironments}.rowid`);
}

/** Sets the same variants in some (or, without `environments`, all) of a flag's environments. */
export function setEnvironmentVariants(db: Db, featureName: string, variants: VariantDoc[], environments?: readonly string[]): Statement {
  return db
    .update(featureEnvironments)
    .set({ variants })
    .where(
      and(
        eq(featureEnvironments.featureName, featureName),
        environments === undefined ? undefined : inArray(featureEnvironments.environment, [...environments]),
      ),
    );
}
