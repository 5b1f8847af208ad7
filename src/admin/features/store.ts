/**
 * Drizzle queries for features and the rows that hang off them. Table semantics the rest of
 * the service (and the import job, which writes the same tables in bulk) relies on:
 * - `features.archived_at` NULL means active;
 * - one `feature_environments` row per environment attached to the feature's project,
 *   created disabled with the feature (and when an environment is attached later);
 * - `feature_lifecycles` holds one row per stage reached; the newest `created_at` is the
 *   current stage (`initial` on create, `archived` on archive, `completed` on request);
 * - every change writes an `events` row in the same batch.
 * The writes are statements for the caller's batch, or, where they re-check in SQL what the
 * service checked before, batches of their own that say whether they wrote.
 */
import { and, asc, eq, isNotNull, isNull, sql, type SQL } from 'drizzle-orm';
import { chunkedInsert } from '../../db/chunk';
import type { Db, Statement } from '../../db/client';
import { d1Statement, runD1Batch } from '../../db/client';
import { auditEvent, auditEventWhere, type Actor, type AuditEvent } from '../../db/events';
import {
  clientMetricsEnv,
  dependentFeatures,
  environments,
  events,
  favoriteFeatures,
  featureEnvironments,
  featureLifecycles,
  featureStrategies,
  features,
  projectEnvironments,
  projects,
  users,
  type VariantDoc,
} from '../../db/schema';
import { segmentLinksOfStrategies, STRATEGY_ORDER } from '../../db/lookups';

// The SDK engine and the playground read strategies in this order too (src/db/strategy-order.ts).

export type FeatureRow = typeof features.$inferSelect;
export type StrategyRow = typeof featureStrategies.$inferSelect;

export async function findFeature(db: Db, name: string): Promise<FeatureRow | undefined> {
  const [row] = await db.select().from(features).where(eq(features.name, name)).limit(1);
  return row;
}

/** A project's naming pattern for flag names, with its example and description (all null when it has none). */
export async function namingPattern(db: Db, projectId: string) {
  const [row] = await db
    .select({
      pattern: projects.featureNamingPattern,
      example: projects.featureNamingExample,
      description: projects.featureNamingDescription,
    })
    .from(projects)
    .where(eq(projects.id, projectId))
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

export async function activeChildren(db: Db, parent: string): Promise<string[]> {
  const rows = await db
    .select({ child: dependentFeatures.child })
    .from(dependentFeatures)
    .innerJoin(features, eq(features.name, dependentFeatures.child))
    .where(and(eq(dependentFeatures.parent, parent), isNull(features.archivedAt)));
  return rows.map((row) => row.child);
}

// ---------------------------------------------------------------------------------------
// Writes

export type NewFeatureRow = typeof features.$inferInsert;

/**
 * A new flag's rows: the flag, a disabled `feature_environments` row per environment of its
 * project and the `initial` lifecycle stage.
 */
export function insertFeature(db: Db, row: NewFeatureRow & { createdAt: string }, environmentNames: readonly string[]): Statement[] {
  const statements: Statement[] = [db.insert(features).values(row)];
  const featureEnvironmentRows = environmentNames.map((environment) => ({ featureName: row.name, environment, enabled: false }));
  statements.push(...chunkedInsert(featureEnvironmentRows, 3, (run) => db.insert(featureEnvironments).values(run)));
  statements.push(
    db.insert(featureLifecycles).values({ feature: row.name, stage: 'initial', createdAt: row.createdAt }).onConflictDoNothing(),
  );
  return statements;
}

export function updateFeature(db: Db, name: string, changes: Partial<NewFeatureRow>): Statement {
  return db.update(features).set(changes).where(eq(features.name, name));
}

/** Marks the named flags stale or active (the names travel as one JSON parameter). */
export function setStale(db: Db, names: readonly string[], stale: boolean): Statement {
  return db
    .update(features)
    .set({ stale })
    .where(sql`${features.name} IN (SELECT value FROM json_each(${JSON.stringify(names)}))`);
}

/**
 * Archives the flag only if it is still active and no active flag depends on it, re-checked in
 * SQL (a dependency added after the service's check would otherwise hang off an archived
 * parent): drops its own parents (an archived flag depends on nothing), enters the `archived`
 * stage and records `event`, each only if this batch's stamp is the one stored. Returns
 * whether it archived.
 */
/** The archive of `name` unless it is archived already or an active flag depends on it. */
function archiveUnlessDepended(db: Db, name: string, archivedAt: string) {
  return db
    .update(features)
    .set({ archivedAt })
    .where(
      and(
        eq(features.name, name),
        isNull(features.archivedAt),
        sql`NOT EXISTS (SELECT 1 FROM ${dependentFeatures} JOIN ${features} AS child ON child.name = ${dependentFeatures.child}
          WHERE ${dependentFeatures.parent} = ${name} AND child.archived_at IS NULL)`,
      ),
    );
}

/** What follows an archive that took place (`archivedNow`): its own dependencies go, its lifecycle moves, its event. */
function afterArchive(name: string, archivedAt: string, actor: Actor, event: AuditEvent): SQL[] {
  const archivedNow = sql`EXISTS (SELECT 1 FROM ${features} WHERE ${features.name} = ${name} AND ${features.archivedAt} = ${archivedAt})`;
  return [
    sql`DELETE FROM ${dependentFeatures} WHERE ${dependentFeatures.child} = ${name} AND ${archivedNow}`,
    sql`INSERT INTO ${featureLifecycles} (feature, stage, created_at) SELECT ${name}, 'archived', ${archivedAt} WHERE ${archivedNow}
        ON CONFLICT (feature, stage) DO UPDATE SET created_at = excluded.created_at, status = NULL, status_value = NULL`,
    auditEventWhere(actor, event, archivedNow),
  ];
}

export async function archiveIfUnused(db: Db, actor: Actor, name: string, archivedAt: string, event: AuditEvent): Promise<boolean> {
  const [archived] = await runD1Batch(db, [
    d1Statement(db, archiveUnlessDepended(db, name, archivedAt)),
    ...afterArchive(name, archivedAt, actor, event).map((query) => d1Statement(db, query)),
  ]);
  return archived!.meta.changes > 0;
}

/**
 * The same archive as statements of a larger batch (a change request's), which it aborts
 * unless the flag was archived (a dependency added meanwhile, an archive already done); what
 * follows then needs no condition of its own.
 */
export function archiveStatements(db: Db, actor: Actor, name: string, archivedAt: string, event: AuditEvent): Statement[] {
  return [
    archiveUnlessDepended(db, name, archivedAt),
    db.run(sql`SELECT CASE WHEN changes() = 1 THEN 1 ELSE json('flag not archived: it changed meanwhile') END`),
    db.delete(dependentFeatures).where(eq(dependentFeatures.child, name)),
    db
      .insert(featureLifecycles)
      .values({ feature: name, stage: 'archived', createdAt: archivedAt })
      .onConflictDoUpdate({
        target: [featureLifecycles.feature, featureLifecycles.stage],
        set: { createdAt: archivedAt, status: null, statusValue: null },
      }),
    auditEvent(db, actor, event),
  ];
}

/** Brings the named archived flags back: active again, disabled everywhere, out of the `archived` stage. */
export function revive(db: Db, names: readonly string[]): Statement[] {
  const list = JSON.stringify(names);
  return [
    db
      .update(featureEnvironments)
      .set({ enabled: false })
      .where(sql`${featureEnvironments.featureName} IN (SELECT value FROM json_each(${list}))`),
    db
      .update(features)
      .set({ archivedAt: null })
      .where(sql`${features.name} IN (SELECT value FROM json_each(${list}))`),
    db
      .delete(featureLifecycles)
      .where(and(eq(featureLifecycles.stage, 'archived'), sql`${featureLifecycles.feature} IN (SELECT value FROM json_each(${list}))`)),
  ];
}

/** Deletes a flag for good, with the links that name it as a parent (its own rows cascade). */
export function deleteFeature(db: Db, name: string): Statement[] {
  return [db.delete(dependentFeatures).where(eq(dependentFeatures.parent, name)), db.delete(features).where(eq(features.name, name))];
}

/** A disabled `feature_environments` row for every feature of the project (when attaching an environment). */
export function attachEnvironmentToFeatures(db: Db, projectId: string, environment: string): Statement {
  return db
    .insert(featureEnvironments)
    .select(
      db
        .select({
          featureName: features.name,
          environment: sql<string>`${environment}`.as('environment'),
          enabled: sql<boolean>`0`.as('enabled'),
          variants: sql<VariantDoc[]>`'[]'`.as('variants'),
          lastSeenAt: sql<string | null>`NULL`.as('last_seen_at'),
        })
        .from(features)
        .where(eq(features.project, projectId)),
    )
    .onConflictDoNothing();
}
