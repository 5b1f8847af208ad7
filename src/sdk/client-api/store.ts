/**
 * Reads everything the SDK side serves for one environment, in one D1 batch (one consistent
 * snapshot) together with the data revision it belongs to. The tables are the shared model
 * (src/db/schema.ts); this module only reads them.
 */
import { and, asc, eq, inArray, max, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import {
  dependentFeatures,
  environments,
  featureEnvironments,
  featureStrategies,
  featureStrategySegment,
  featureTag,
  features,
  sdkChanges,
  segments,
} from '../../db/schema';
import { segmentLinksOfStrategies, STRATEGY_ORDER } from '../../db/lookups';

/**
 * The data revision: the id of the newest audit event SDKs can see, which is the newest row of
 * the `sdk_changes` log (every flag write records an audit event; the log's trigger skips the
 * kinds that change nothing SDKs are served: API tokens, users, roles, projects, ...). As in
 * Unleash, a token or user created leaves every SDK's ETag as it was.
 */
export function revisionQuery(db: Db) {
  return db.select({ revision: max(sdkChanges.eventId) }).from(sdkChanges);
}

export async function readRevision(db: Db): Promise<number> {
  const [row] = await revisionQuery(db);
  return row?.revision ?? 0;
}

export async function readEnvironmentRows(db: Db, environment: string) {
  const [
    revision,
    environmentState,
    featureRows,
    environmentRows,
    strategyRows,
    strategySegmentRows,
    segmentRows,
    dependencyRows,
    tagRows,
  ] = await db.batch([
    revisionQuery(db),
    db.select({ enabled: environments.enabled }).from(environments).where(eq(environments.name, environment)).limit(1),
    db
      .select({
        name: features.name,
        type: features.type,
        project: features.project,
        stale: features.stale,
        description: features.description,
        impressionData: features.impressionData,
      })
      .from(features)
      .where(sql`${features.archivedAt} IS NULL`)
      .orderBy(asc(features.createdAt), asc(features.name)),
    db
      .select({
        featureName: featureEnvironments.featureName,
        enabled: featureEnvironments.enabled,
        variants: featureEnvironments.variants,
      })
      .from(featureEnvironments)
      .where(eq(featureEnvironments.environment, environment)),
    db
      .select({
        id: featureStrategies.id,
        featureName: featureStrategies.featureName,
        name: featureStrategies.strategyName,
        parameters: featureStrategies.parameters,
        constraints: featureStrategies.constraints,
        variants: featureStrategies.variants,
      })
      .from(featureStrategies)
      .where(and(eq(featureStrategies.environment, environment), eq(featureStrategies.disabled, false)))
      .orderBy(...STRATEGY_ORDER),
    segmentLinksOfStrategies(db, eq(featureStrategies.environment, environment)),
    // Unleash lists every segment some strategy uses, whatever its environment or project.
    db
      .select({ id: segments.id, name: segments.name, constraints: segments.constraints })
      .from(segments)
      .where(inArray(segments.id, db.selectDistinct({ id: featureStrategySegment.segmentId }).from(featureStrategySegment)))
      .orderBy(asc(segments.id)),
    db
      .select({
        parent: dependentFeatures.parent,
        child: dependentFeatures.child,
        enabled: dependentFeatures.enabled,
        variants: dependentFeatures.variants,
      })
      .from(dependentFeatures),
    db.select({ featureName: featureTag.featureName, type: featureTag.tagType, value: featureTag.tagValue }).from(featureTag),
  ]);
  return {
    revision: revision[0]?.revision ?? 0,
    /** A disabled environment serves every flag disabled (an unknown one is left as its rows say). */
    environmentEnabled: environmentState[0]?.enabled ?? true,
    featureRows,
    environmentRows,
    strategyRows,
    strategySegmentRows,
    segmentRows,
    dependencyRows,
    tagRows,
  };
}

export type EnvironmentRows = Awaited<ReturnType<typeof readEnvironmentRows>>;
