/** The Drizzle queries of environments and of their attachment to projects. */
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { runBatch, type Db } from '../../db/client';
import { auditEvent, type Actor, type AuditEvent } from '../../db/events';
import {
  environments,
  featureEnvironments,
  features,
  featureStrategies,
  projectEnvironments,
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
  changes: { type?: string; sortOrder?: number },
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
