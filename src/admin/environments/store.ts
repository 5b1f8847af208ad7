/** The Drizzle queries of environments and of their attachment to projects. */
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { chunkedInsert, chunksOf, D1_MAX_BOUND_PARAMETERS } from '../../db/chunk';
import { d1Statement, runBatch, runD1Batch, type Db } from '../../db/client';
import { auditEvent, auditEvents, type Actor, type AuditEvent } from '../../db/events';
import {
  environments,
  featureEnvironments,
  features,
  featureStrategies,
  featureStrategySegment,
  projectEnvironments,
  projects,
  rolePermission,
  type DefaultStrategyDoc,
} from '../../db/schema';

export type EnvironmentRow = typeof environments.$inferSelect;

const order = [asc(environments.sortOrder), asc(environments.createdAt), asc(environments.name)];

/** All environments in sort order, with how many projects, API keys and enabled flags use each. */
export function listWithCounts(db: Db) {
  return db
    .select({
      name: environments.name,
      type: environments.type,
      sortOrder: environments.sortOrder,
      enabled: environments.enabled,
      protected: environments.protected,
      requiredApprovals: environments.requiredApprovals,
      projectCount: sql<number>`(SELECT count(*) FROM project_environments pe WHERE pe.environment_name = ${environments.name})`,
      apiTokenCount: sql<number>`(SELECT count(*) FROM api_tokens t WHERE t.environment = ${environments.name})`,
      enabledToggleCount: sql<number>`(SELECT count(*) FROM feature_environments fe JOIN features f ON f.name = fe.feature_name
        WHERE fe.environment = ${environments.name} AND fe.enabled = 1 AND f.archived_at IS NULL)`,
    })
    .from(environments)
    .orderBy(asc(environments.sortOrder), asc(environments.name));
}

export async function byName(db: Db, name: string): Promise<EnvironmentRow | undefined> {
  const [row] = await db.select().from(environments).where(eq(environments.name, name)).limit(1);
  return row;
}

/** Every environment as seen from a project: its API keys, enabled flags, default strategy and whether the project uses it. */
export function forProject(db: Db, projectId: string) {
  return db
    .select({
      name: environments.name,
      type: environments.type,
      sortOrder: environments.sortOrder,
      enabled: environments.enabled,
      protected: environments.protected,
      requiredApprovals: environments.requiredApprovals,
      projectApiTokenCount: sql<number>`(SELECT count(*) FROM api_tokens t WHERE t.environment = environments.name
        AND (NOT EXISTS (SELECT 1 FROM api_token_project p WHERE p.secret_hash = t.secret_hash)
          OR EXISTS (SELECT 1 FROM api_token_project p WHERE p.secret_hash = t.secret_hash AND p.project = ${projectId})))`,
      projectEnabledToggleCount: sql<number>`(SELECT count(*) FROM feature_environments fe JOIN features f ON f.name = fe.feature_name
        WHERE fe.environment = environments.name AND fe.enabled = 1 AND f.project = ${projectId})`,
      defaultStrategy: sql<string | null>`(SELECT pe.default_strategy FROM project_environments pe
        WHERE pe.environment_name = environments.name AND pe.project_id = ${projectId})`,
      visible: sql<number>`EXISTS (SELECT 1 FROM project_environments pe WHERE pe.environment_name = environments.name AND pe.project_id = ${projectId})`,
    })
    .from(environments)
    .orderBy(...order);
}

export async function setEnabled(db: Db, actor: Actor, name: string, enabled: boolean, event: AuditEvent): Promise<void> {
  await runBatch(db, [db.update(environments).set({ enabled }).where(eq(environments.name, name)), auditEvent(db, actor, event)]);
}

/** Gives the named environments their sort order (unknown names are skipped, as Unleash does). */
export async function setSortOrder(db: Db, actor: Actor, sortOrder: Readonly<Record<string, number>>, event: AuditEvent): Promise<void> {
  await runBatch(db, [
    ...Object.entries(sortOrder).map(([name, value]) =>
      db.update(environments).set({ sortOrder: value }).where(eq(environments.name, name)),
    ),
    auditEvent(db, actor, event),
  ]);
}

export async function projectEnvironment(db: Db, projectId: string, environment: string) {
  const [row] = await db
    .select()
    .from(projectEnvironments)
    .where(and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environmentName, environment)))
    .limit(1);
  return row;
}

/**
 * Takes the environment out of the project: the project's flags lose their state there (their
 * strategies stay, as in Unleash, and come back if the environment is added again).
 */
export async function detach(db: Db, actor: Actor, projectId: string, environment: string, event: AuditEvent): Promise<void> {
  const projectFeatures = db.select({ name: features.name }).from(features).where(eq(features.project, projectId));
  await runBatch(db, [
    db
      .delete(featureEnvironments)
      .where(and(eq(featureEnvironments.environment, environment), inArray(featureEnvironments.featureName, projectFeatures))),
    db
      .delete(projectEnvironments)
      .where(and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environmentName, environment))),
    auditEvent(db, actor, event),
  ]);
}

export async function setDefaultStrategy(
  db: Db,
  actor: Actor,
  projectId: string,
  environment: string,
  strategy: DefaultStrategyDoc,
  event: AuditEvent,
) {
  await runBatch(db, [
    db
      .update(projectEnvironments)
      .set({ defaultStrategy: strategy })
      .where(and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environmentName, environment))),
    auditEvent(db, actor, event),
  ]);
}

export async function insert(db: Db, actor: Actor, row: typeof environments.$inferInsert, event: AuditEvent): Promise<void> {
  await runBatch(db, [db.insert(environments).values(row), auditEvent(db, actor, event)]);
}

export async function update(
  db: Db,
  actor: Actor,
  name: string,
  changes: { type?: string; sortOrder?: number; requiredApprovals?: number | null },
  event: AuditEvent,
): Promise<void> {
  const change = Object.keys(changes).length === 0 ? [] : [db.update(environments).set(changes).where(eq(environments.name, name))];
  await runBatch(db, [...change, auditEvent(db, actor, event)]);
}

/** The environment and everything hanging off it, in one batch with its event. */
export async function remove(db: Db, actor: Actor, name: string, event: AuditEvent): Promise<void> {
  await runBatch(db, [
    db.delete(featureStrategies).where(eq(featureStrategies.environment, name)),
    db.delete(featureEnvironments).where(eq(featureEnvironments.environment, name)),
    db.delete(projectEnvironments).where(eq(projectEnvironments.environmentName, name)),
    db.delete(rolePermission).where(eq(rolePermission.environment, name)),
    db.delete(environments).where(eq(environments.name, name)),
    auditEvent(db, actor, event),
  ]);
}

/** Which of these project ids exist. */
export async function existingProjects(db: Db, ids: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const run of chunksOf([...new Set(ids)], D1_MAX_BOUND_PARAMETERS)) {
    const rows = await db.select({ id: projects.id }).from(projects).where(inArray(projects.id, run));
    for (const row of rows) found.add(row.id);
  }
  return found;
}

/** The projects that use the environment. */
export async function projectsUsing(db: Db, environment: string): Promise<string[]> {
  const rows = await db
    .select({ id: projectEnvironments.projectId })
    .from(projectEnvironments)
    .where(eq(projectEnvironments.environmentName, environment))
    .orderBy(asc(projectEnvironments.projectId));
  return rows.map((row) => row.id);
}

/** The ids of the environment's strategies, with the project of each one's flag. */
export function strategiesIn(db: Db, environment: string) {
  return db
    .select({ id: featureStrategies.id, project: features.project })
    .from(featureStrategies)
    .innerJoin(features, eq(features.name, featureStrategies.featureName))
    .where(eq(featureStrategies.environment, environment));
}

export interface ClonePlan {
  source: string;
  environment: typeof environments.$inferInsert & { name: string };
  projects: readonly string[];
  /** Each copied strategy's id and the new strategy's id. */
  strategies: readonly (readonly [string, string])[];
  clonePermissions: boolean;
  events: readonly AuditEvent[];
}

/**
 * The new environment with the source's flag states and strategies (with their segment links)
 * in the chosen projects, and optionally the source's role permissions: one atomic batch. The
 * environment's insert comes first, so a name taken meanwhile fails the whole batch.
 */
export async function clone(db: Db, actor: Actor, plan: ClonePlan): Promise<void> {
  const target = plan.environment.name;
  const pairs = (run: readonly (readonly [string, string])[]) =>
    sql.join(
      run.map(([from, to]) => sql`(${from}, ${to})`),
      sql`, `,
    );
  // Two parameters a strategy, one for the new environment's name.
  const strategyRuns = chunksOf(plan.strategies, Math.floor((D1_MAX_BOUND_PARAMETERS - 1) / 2));
  await runD1Batch(db, [
    d1Statement(db, db.insert(environments).values(plan.environment)),
    ...chunkedInsert(plan.projects, 2, (run) =>
      d1Statement(db, db.insert(projectEnvironments).values(run.map((projectId) => ({ projectId, environmentName: target })))),
    ),
    d1Statement(
      db,
      sql`INSERT INTO feature_environments (feature_name, environment, enabled, variants)
        SELECT fe.feature_name, ${target}, fe.enabled, fe.variants FROM feature_environments fe
        JOIN features f ON f.name = fe.feature_name
        WHERE fe.environment = ${plan.source}
          AND f.project IN (SELECT pe.project_id FROM project_environments pe WHERE pe.environment_name = ${target})`,
    ),
    ...strategyRuns.map((run) =>
      d1Statement(
        db,
        sql`INSERT INTO feature_strategies (id, feature_name, project_name, environment, strategy_name, title, parameters,
            constraints, variants, sort_order, disabled, created_at, created_by_user_id)
          SELECT m.column2, fs.feature_name, fs.project_name, ${target}, fs.strategy_name, fs.title, fs.parameters,
            fs.constraints, fs.variants, fs.sort_order, fs.disabled, fs.created_at, fs.created_by_user_id
          FROM (VALUES ${pairs(run)}) m JOIN feature_strategies fs ON fs.id = m.column1`,
      ),
    ),
    ...strategyRuns.map((run) =>
      d1Statement(
        db,
        sql`INSERT INTO ${featureStrategySegment} (feature_strategy_id, segment_id)
          SELECT m.column2, fss.segment_id FROM (VALUES ${pairs(run)}) m
          JOIN feature_strategy_segment fss ON fss.feature_strategy_id = m.column1`,
      ),
    ),
    ...(plan.clonePermissions
      ? [
          d1Statement(
            db,
            sql`INSERT INTO role_permission (role_id, permission, environment)
              SELECT role_id, permission, ${target} FROM role_permission WHERE environment = ${plan.source}`,
          ),
        ]
      : []),
    ...auditEvents(db, actor, plan.events).map((statement) => d1Statement(db, statement)),
  ]);
}
