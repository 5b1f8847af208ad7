/**
 * Drizzle queries for features and the rows that hang off them. Table semantics the rest of
 * the service (and the import job, which writes the same tables in bulk) relies on:
 * - `features.archived_at` NULL means active;
 * - one `feature_environments` row per environment attached to the feature's project,
 *   created disabled with the feature (and when an environment is attached later);
 * - `feature_lifecycles` holds one row per stage reached; the newest `created_at` is the
 *   current stage (`initial` on create, `archived` on archive, `completed` on request);
 * - every change writes an `events` row in the same batch.
 */
import { and, asc, eq, inArray, isNotNull, isNull, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client';
import {
  clientMetricsEnv,
  dependentFeatures,
  environments,
  events,
  favoriteFeatures,
  featureEnvironments,
  featureLifecycles,
  featureStrategies,
  featureStrategySegment,
  features,
  projectEnvironments,
  projects,
  segments,
  strategies,
  users,
  type VariantDoc,
} from '../../db/schema';

/** Unleash's order of a feature's strategies: sort order, then creation, then id. */
export const STRATEGY_ORDER = [asc(featureStrategies.sortOrder), asc(featureStrategies.createdAt), asc(featureStrategies.id)] as const;

/** The segments used by the strategies `where` picks, as (strategy, segment) links by segment id. */
export function segmentLinksOfStrategies(db: Db, where: SQL | undefined) {
  return db
    .select({ strategyId: featureStrategySegment.featureStrategyId, segmentId: featureStrategySegment.segmentId })
    .from(featureStrategySegment)
    .innerJoin(featureStrategies, eq(featureStrategies.id, featureStrategySegment.featureStrategyId))
    .where(where)
    .orderBy(asc(featureStrategySegment.segmentId));
}

export type FeatureRow = typeof features.$inferSelect;
export type StrategyRow = typeof featureStrategies.$inferSelect;

export async function findFeature(db: Db, name: string): Promise<FeatureRow | undefined> {
  const [row] = await db.select().from(features).where(eq(features.name, name)).limit(1);
  return row;
}

export async function findActiveProject(db: Db, id: string) {
  const [row] = await db
    .select()
    .from(projects)
    .where(and(eq(projects.id, id), isNull(projects.archivedAt)))
    .limit(1);
  return row;
}

/** Names of the environments attached to a project, in environment order. */
export async function projectEnvironmentNames(db: Db, projectId: string): Promise<string[]> {
  const rows = await db
    .select({ name: environments.name })
    .from(projectEnvironments)
    .innerJoin(environments, eq(environments.name, projectEnvironments.environmentName))
    .where(eq(projectEnvironments.projectId, projectId))
    .orderBy(asc(environments.sortOrder), asc(environments.name));
  return rows.map((row) => row.name);
}

export async function projectEnvironment(db: Db, projectId: string, environment: string) {
  const [row] = await db
    .select()
    .from(projectEnvironments)
    .where(and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environmentName, environment)))
    .limit(1);
  return row;
}

export async function featureEnvironmentRow(db: Db, featureName: string, environment: string) {
  const [row] = await db
    .select()
    .from(featureEnvironments)
    .where(and(eq(featureEnvironments.featureName, featureName), eq(featureEnvironments.environment, environment)))
    .limit(1);
  return row;
}

export async function featureDetailRows(db: Db, featureName: string) {
  const hourAgo = new Date(Date.now() - 60 * 60 * 1000).toISOString();
  const [envRows, strategyRows, links, creator, parents, children, lifecycle, collaborators] = await db.batch([
    db
      .select({
        name: environments.name,
        type: environments.type,
        sortOrder: environments.sortOrder,
        enabled: featureEnvironments.enabled,
        variants: featureEnvironments.variants,
        lastSeenAt: featureEnvironments.lastSeenAt,
        // Evaluations SDKs reported in this environment in the last hour (Unleash: hourly buckets from an hour ago on).
        yes: sql<number>`coalesce((SELECT sum(${clientMetricsEnv.yes}) FROM ${clientMetricsEnv} WHERE ${clientMetricsEnv.featureName} = ${featureEnvironments.featureName} AND ${clientMetricsEnv.environment} = ${featureEnvironments.environment} AND ${clientMetricsEnv.timestamp} >= ${hourAgo}), 0)`,
        no: sql<number>`coalesce((SELECT sum(${clientMetricsEnv.no}) FROM ${clientMetricsEnv} WHERE ${clientMetricsEnv.featureName} = ${featureEnvironments.featureName} AND ${clientMetricsEnv.environment} = ${featureEnvironments.environment} AND ${clientMetricsEnv.timestamp} >= ${hourAgo}), 0)`,
      })
      .from(featureEnvironments)
      .innerJoin(environments, eq(environments.name, featureEnvironments.environment))
      .where(eq(featureEnvironments.featureName, featureName))
      .orderBy(asc(environments.sortOrder), asc(environments.name)),
    db
      .select()
      .from(featureStrategies)
      .where(eq(featureStrategies.featureName, featureName))
      .orderBy(...STRATEGY_ORDER),
    segmentLinksOfStrategies(db, eq(featureStrategies.featureName, featureName)),
    db
      .select({ id: users.id, name: users.name, username: users.username, email: users.email })
      .from(features)
      .innerJoin(users, eq(users.id, features.createdByUserId))
      .where(eq(features.name, featureName)),
    db.select().from(dependentFeatures).where(eq(dependentFeatures.child, featureName)).orderBy(asc(dependentFeatures.parent)),
    db
      .select({ child: dependentFeatures.child })
      .from(dependentFeatures)
      .where(eq(dependentFeatures.parent, featureName))
      .orderBy(asc(dependentFeatures.child)),
    db.select().from(featureLifecycles).where(eq(featureLifecycles.feature, featureName)).orderBy(asc(featureLifecycles.createdAt)),
    // The people who wrote the flag's events, the latest writer first (Unleash's collaborators).
    db
      .select({ id: users.id, name: users.name, username: users.username, email: users.email })
      .from(events)
      .innerJoin(users, eq(users.id, events.createdByUserId))
      .where(eq(events.featureName, featureName))
      .groupBy(users.id)
      .orderBy(sql`max(${events.createdAt}) DESC`, sql`max(${events.id}) DESC`),
  ]);
  return { envRows, strategyRows, links, creator: creator[0], parents, children, lifecycle, collaborators };
}

export async function strategyWithSegments(db: Db, featureName: string, environment: string, id: string) {
  const [rows, links] = await db.batch([
    db
      .select()
      .from(featureStrategies)
      .where(
        and(eq(featureStrategies.id, id), eq(featureStrategies.featureName, featureName), eq(featureStrategies.environment, environment)),
      )
      .limit(1),
    db
      .select({ segmentId: featureStrategySegment.segmentId })
      .from(featureStrategySegment)
      .where(eq(featureStrategySegment.featureStrategyId, id))
      .orderBy(asc(featureStrategySegment.segmentId)),
  ]);
  const row = rows[0];
  return row ? { row, segmentIds: links.map((link) => link.segmentId) } : undefined;
}

export async function strategiesWithSegments(db: Db, featureName: string, environment: string) {
  const [rows, links] = await db.batch([
    db
      .select()
      .from(featureStrategies)
      .where(and(eq(featureStrategies.featureName, featureName), eq(featureStrategies.environment, environment)))
      .orderBy(...STRATEGY_ORDER),
    segmentLinksOfStrategies(db, and(eq(featureStrategies.featureName, featureName), eq(featureStrategies.environment, environment))),
  ]);
  return { rows, links };
}

export async function strategyExists(db: Db, name: string): Promise<boolean> {
  const rows = await db.select({ name: strategies.name }).from(strategies).where(eq(strategies.name, name)).limit(1);
  return rows.length > 0;
}

export async function existingSegmentIds(db: Db, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: segments.id })
    .from(segments)
    .where(inArray(segments.id, [...ids]));
  return new Set(rows.map((row) => row.id));
}

export async function nextStrategySortOrder(db: Db, featureName: string, environment: string): Promise<number> {
  const [row] = await db
    .select({ next: sql<number>`coalesce(max(${featureStrategies.sortOrder}) + 1, 0)` })
    .from(featureStrategies)
    .where(and(eq(featureStrategies.featureName, featureName), eq(featureStrategies.environment, environment)));
  return row?.next ?? 0;
}

export async function strategyCount(db: Db, featureName: string, environment: string): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)` })
    .from(featureStrategies)
    .where(and(eq(featureStrategies.featureName, featureName), eq(featureStrategies.environment, environment)));
  return row?.count ?? 0;
}

export async function archivedFeatures(db: Db, projectId?: string): Promise<FeatureRow[]> {
  return db
    .select()
    .from(features)
    .where(projectId === undefined ? isNotNull(features.archivedAt) : and(isNotNull(features.archivedAt), eq(features.project, projectId)))
    .orderBy(asc(features.archivedAt), asc(features.name));
}

/**
 * Where archived flags were last seen, per environment (only sightings): the `environments`
 * of the archived list, as Unleash joins its last-seen table there.
 */
export async function archivedSightings(
  db: Db,
  projectId?: string,
): Promise<{ featureName: string; environment: string; lastSeenAt: string }[]> {
  const rows = await db
    .select({
      featureName: featureEnvironments.featureName,
      environment: featureEnvironments.environment,
      lastSeenAt: featureEnvironments.lastSeenAt,
    })
    .from(featureEnvironments)
    .innerJoin(features, eq(features.name, featureEnvironments.featureName))
    .where(
      and(
        isNotNull(features.archivedAt),
        isNotNull(featureEnvironments.lastSeenAt),
        projectId === undefined ? undefined : eq(features.project, projectId),
      ),
    )
    .orderBy(asc(featureEnvironments.featureName), asc(featureEnvironments.environment));
  return rows.map((row) => ({ ...row, lastSeenAt: row.lastSeenAt! }));
}

/** Whether the person marked the flag as a favourite. */
export async function isFavoriteFeature(db: Db, featureName: string, userId: number): Promise<boolean> {
  const rows = await db
    .select({ feature: favoriteFeatures.feature })
    .from(favoriteFeatures)
    .where(and(eq(favoriteFeatures.feature, featureName), eq(favoriteFeatures.userId, userId)));
  return rows.length > 0;
}

export async function featuresByName(db: Db, names: readonly string[]): Promise<FeatureRow[]> {
  if (names.length === 0) return [];
  // json_each keeps this one bound parameter however many names are asked for.
  return db
    .select()
    .from(features)
    .where(sql`${features.name} IN (SELECT value FROM json_each(${JSON.stringify(names)}))`);
}

export async function dependencyLinks(db: Db, name: string) {
  const [asChild, asParent] = await db.batch([
    db.select().from(dependentFeatures).where(eq(dependentFeatures.child, name)),
    db.select().from(dependentFeatures).where(eq(dependentFeatures.parent, name)),
  ]);
  return { asChild, asParent };
}

export async function activeChildren(db: Db, parent: string): Promise<string[]> {
  const rows = await db
    .select({ child: dependentFeatures.child })
    .from(dependentFeatures)
    .innerJoin(features, eq(features.name, dependentFeatures.child))
    .where(and(eq(dependentFeatures.parent, parent), isNull(features.archivedAt)));
  return rows.map((row) => row.child);
}

/** A flag's environments with their variants, in the order they were attached. */
export async function featureEnvironmentVariants(db: Db, featureName: string) {
  return db
    .select({ environment: featureEnvironments.environment, variants: featureEnvironments.variants })
    .from(featureEnvironments)
    .where(eq(featureEnvironments.featureName, featureName))
    .orderBy(sql`${featureEnvironments}.rowid`);
}

/** Sets the same variants in some (or, without `environments`, all) of a flag's environments. */
export function setEnvironmentVariants(db: Db, featureName: string, variants: VariantDoc[], environments?: readonly string[]) {
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

export function setStrategySortOrder(db: Db, featureName: string, environment: string, id: string, sortOrder: number) {
  return db
    .update(featureStrategies)
    .set({ sortOrder })
    .where(
      and(eq(featureStrategies.id, id), eq(featureStrategies.featureName, featureName), eq(featureStrategies.environment, environment)),
    );
}
