/** The Drizzle queries of projects and the environments attached to them. */
import { and, asc, count, desc, eq, inArray, isNotNull, isNull, notInArray, sql } from 'drizzle-orm';
import { chunkedInsert, chunksOf } from '../../db/chunk';
import { runBatch, type Db, type Statement } from '../../db/client';
import { auditEvent, auditEvents, type Actor, type AuditEvent } from '../../db/events';
import { projectWindowQueries } from '../../db/project-windows';
import {
  apiTokenProject,
  apiTokens,
  dependentFeatures,
  environments,
  events,
  favoriteFeatures,
  favoriteProjects,
  featureEnvironments,
  featureStrategies,
  features,
  featureTag,
  projectEnvironments,
  projects,
  roles,
  roleUser,
  users,
} from '../../db/schema';
import { OWNER_ROLE_ID } from '../../auth/roles';
import { attachEnvironmentToFeatures } from '../features/service';
import { chosenSettings, predefinedSettings } from '../change-requests/service';
import { ROOT_ROLE_TYPES } from '../../db/lookups';

export type ProjectRow = typeof projects.$inferSelect;
export type NewProject = Pick<typeof projects.$inferInsert, 'id' | 'name' | 'description' | 'mode' | 'defaultStickiness'>;

/** Root roles live in project `default` too: members are those holding a project role. */

/**
 * The projects (live or archived) in name order, with per project: live flag count, last
 * flag usage an SDK reported, last flag event, member count and Owners; and the projects
 * `userId` made favourites (none without a user).
 */
export function listForAdminUi(db: Db, archived: boolean, userId: number | undefined) {
  return db.batch([
    db
      .select()
      .from(projects)
      .where(archived ? isNotNull(projects.archivedAt) : isNull(projects.archivedAt))
      .orderBy(asc(projects.name), asc(projects.id)),
    db
      .select({
        project: features.project,
        count: sql<number>`count(*) FILTER (WHERE ${features.archivedAt} IS NULL)`,
        lastUsage: sql<string | null>`max(${features.lastSeenAt})`,
      })
      .from(features)
      .groupBy(features.project),
    // As Unleash: the newest event of a flag that is (still) in the project.
    db
      .select({ project: features.project, lastUpdated: sql<string | null>`max(${events.createdAt})` })
      .from(events)
      .innerJoin(features, and(eq(features.name, events.featureName), eq(features.project, events.project)))
      .groupBy(features.project),
    db
      .select({ project: roleUser.project, count: sql<number>`count(DISTINCT ${roleUser.userId})` })
      .from(roleUser)
      .innerJoin(roles, eq(roles.id, roleUser.roleId))
      .where(notInArray(roles.type, [...ROOT_ROLE_TYPES]))
      .groupBy(roleUser.project),
    ownersQuery(db),
    favouriteProjectsQuery(db, userId),
  ]);
}

/** The projects `userId` made favourites (optionally only `projectId`); none without a user. */
function favouriteProjectsQuery(db: Db, userId: number | undefined, projectId?: string) {
  return db
    .select({ project: favoriteProjects.project })
    .from(favoriteProjects)
    .where(and(eq(favoriteProjects.userId, userId ?? 0), projectId === undefined ? undefined : eq(favoriteProjects.project, projectId)));
}

/** The people holding the Owner role, per project, in the order they became Owners. */
function ownersQuery(db: Db, projectId?: string) {
  return db
    .select({
      project: roleUser.project,
      id: users.id,
      name: users.name,
      username: users.username,
      email: users.email,
      imageUrl: users.imageUrl,
    })
    .from(roleUser)
    .innerJoin(users, eq(users.id, roleUser.userId))
    .where(
      and(
        eq(roleUser.roleId, OWNER_ROLE_ID),
        isNull(users.deletedAt),
        projectId === undefined ? undefined : eq(roleUser.project, projectId),
      ),
    )
    .orderBy(asc(roleUser.createdAt), asc(users.id));
}

export type OwnerRow = Awaited<ReturnType<typeof ownersQuery>>[number];

/** One project with its live flag count and its environments in sort order. */
export function byIdWithCounts(db: Db, id: string) {
  return db.batch([
    db.select().from(projects).where(eq(projects.id, id)).limit(1),
    db
      .select({ count: sql<number>`count(*)` })
      .from(features)
      .where(sql`${features.project} = ${id} AND ${features.archivedAt} IS NULL`),
    db
      .select({ environment: projectEnvironments.environmentName })
      .from(projectEnvironments)
      .innerJoin(environments, eq(environments.name, projectEnvironments.environmentName))
      .where(eq(projectEnvironments.projectId, id))
      .orderBy(asc(environments.sortOrder), asc(environments.name)),
  ]);
}

export function allEnvironments(db: Db) {
  return db.select().from(environments).orderBy(asc(environments.sortOrder), asc(environments.name));
}

/** Creates the project, attaches its environments (change requests on where chosen or predefined), makes `ownerUserId` its Owner, and records the event: one batch. */
export async function insertProject(
  db: Db,
  actor: Actor,
  project: NewProject,
  attached: readonly string[],
  ownerUserId: number | undefined,
  event: AuditEvent,
  changeRequestEnvironments: readonly { name: string; requiredApprovals: number }[] = [],
): Promise<void> {
  const statements: Statement[] = [db.insert(projects).values(project)];
  const attachments = attached.map((environmentName) => ({ projectId: project.id, environmentName }));
  statements.push(...chunkedInsert(attachments, 2, (run) => db.insert(projectEnvironments).values(run)));
  statements.push(predefinedSettings(db, project.id), ...chosenSettings(db, project.id, changeRequestEnvironments));
  if (ownerUserId !== undefined) {
    statements.push(
      db.insert(roleUser).values({ roleId: OWNER_ROLE_ID, userId: ownerUserId, project: project.id, createdByUserId: ownerUserId }),
    );
  }
  statements.push(auditEvent(db, actor, event));
  await runBatch(db, statements);
}

/** Attaches an environment to a project; its existing flags get a disabled row there. */
export async function attachEnvironment(db: Db, actor: Actor, projectId: string, environment: string): Promise<void> {
  await runBatch(db, [
    db.insert(projectEnvironments).values({ projectId, environmentName: environment }).onConflictDoNothing(),
    attachEnvironmentToFeatures(db, projectId, environment),
    predefinedSettings(db, projectId, environment),
    auditEvent(db, actor, { type: 'project-environment-added', project: projectId, environment }),
  ]);
}

/** Whether an SDK has seen a flag of the project, and its first live flag. */
export function onboardingRows(db: Db, projectId: string) {
  return db.batch([
    db
      .select({ name: features.name })
      .from(features)
      .where(and(eq(features.project, projectId), isNotNull(features.lastSeenAt)))
      .limit(1),
    db
      .select({ name: features.name })
      .from(features)
      .where(and(eq(features.project, projectId), isNull(features.archivedAt)))
      .orderBy(asc(features.createdAt))
      .limit(1),
  ]);
}

/**
 * What the project page's overview counts: `current` is the last 30 days, `past` the 30 before;
 * and whether `userId` made the project a favourite.
 */
export function overviewRows(db: Db, projectId: string, current: string, past: string, userId: number | undefined) {
  const inProject = eq(features.project, projectId);
  return db.batch([
    db.select().from(projects).where(eq(projects.id, projectId)).limit(1),
    db
      .select({ environment: projectEnvironments.environmentName, defaultStrategy: projectEnvironments.defaultStrategy })
      .from(projectEnvironments)
      .innerJoin(environments, eq(environments.name, projectEnvironments.environmentName))
      .where(eq(projectEnvironments.projectId, projectId))
      .orderBy(asc(environments.sortOrder), asc(environments.name)),
    db
      .select({ type: features.type, count: count() })
      .from(features)
      .where(and(inProject, isNull(features.archivedAt)))
      .groupBy(features.type)
      .orderBy(desc(count()), asc(features.type)),
    ...projectWindowQueries(db, projectId, current, past),
    db
      .select({ count: sql<number>`count(DISTINCT ${roleUser.userId})` })
      .from(roleUser)
      .innerJoin(roles, eq(roles.id, roleUser.roleId))
      .where(and(eq(roleUser.project, projectId), notInArray(roles.type, [...ROOT_ROLE_TYPES]))),
    db.select({ createdAt: events.createdAt }).from(events).where(eq(events.project, projectId)).orderBy(desc(events.id)).limit(1),
    favouriteProjectsQuery(db, userId, projectId),
  ]);
}

/** Who created the project's live flags. */
export function flagCreators(db: Db, projectId: string) {
  return db
    .selectDistinct({ userId: features.createdByUserId, name: users.name, username: users.username, email: users.email })
    .from(features)
    .leftJoin(users, eq(users.id, features.createdByUserId))
    .where(and(eq(features.project, projectId), isNull(features.archivedAt), isNotNull(features.createdByUserId)));
}

/** Whether any flag depends on another, anywhere. */
export async function anyDependency(db: Db): Promise<boolean> {
  const [row] = await db.select({ parent: dependentFeatures.parent }).from(dependentFeatures).limit(1);
  return row !== undefined;
}

/**
 * The flags of a project (live, or with `archived` the archived ones) with what the project
 * page lists of each: its environments' state, whether strategies exist, its tags, and
 * whether `userId` (if any) made it a favourite.
 */
export function flagsOverview(db: Db, projectId: string, archived: boolean, userId: number | undefined) {
  const inProject = and(eq(features.project, projectId), archived ? isNotNull(features.archivedAt) : isNull(features.archivedAt));
  const flagNames = db.select({ name: features.name }).from(features).where(inProject);
  const strategiesIn = (onlyEnabled: boolean) =>
    sql<boolean>`EXISTS (SELECT 1 FROM ${featureStrategies} WHERE ${featureStrategies.featureName} = ${featureEnvironments.featureName}
      AND ${featureStrategies.environment} = ${featureEnvironments.environment}${onlyEnabled ? sql` AND ${featureStrategies.disabled} = 0` : sql``})`;
  return db.batch([
    db
      .select({
        name: features.name,
        type: features.type,
        description: features.description,
        createdAt: features.createdAt,
        stale: features.stale,
        impressionData: features.impressionData,
        lastSeenAt: features.lastSeenAt,
      })
      .from(features)
      .where(inProject)
      .orderBy(asc(features.createdAt), asc(features.name)),
    db
      .select({
        featureName: featureEnvironments.featureName,
        name: featureEnvironments.environment,
        enabled: featureEnvironments.enabled,
        type: environments.type,
        sortOrder: environments.sortOrder,
        variants: featureEnvironments.variants,
        lastSeenAt: featureEnvironments.lastSeenAt,
        hasStrategies: strategiesIn(false),
        hasEnabledStrategies: strategiesIn(true),
      })
      .from(featureEnvironments)
      .innerJoin(environments, eq(environments.name, featureEnvironments.environment))
      .where(inArray(featureEnvironments.featureName, flagNames))
      .orderBy(asc(environments.sortOrder), asc(environments.name)),
    db
      .select({ featureName: featureTag.featureName, value: featureTag.tagValue, type: featureTag.tagType })
      .from(featureTag)
      .where(inArray(featureTag.featureName, flagNames))
      .orderBy(asc(featureTag.createdAt), sql`${featureTag}.rowid`),
    db
      .select({ feature: favoriteFeatures.feature })
      .from(favoriteFeatures)
      .where(and(eq(favoriteFeatures.userId, userId ?? 0), inArray(favoriteFeatures.feature, flagNames))),
  ]);
}

/** Renames or re-describes a project (its mode and stickiness too, when given), with its event. */
export async function updateProject(db: Db, actor: Actor, id: string, changes: Partial<NewProject>, event: AuditEvent): Promise<void> {
  await runBatch(db, [
    db
      .update(projects)
      .set({ ...changes, updatedAt: new Date().toISOString() })
      .where(eq(projects.id, id)),
    auditEvent(db, actor, event),
  ]);
}

/** What deleting a project has to remove besides its row: its archived flags and the tokens scoped to it alone. */
export function deletionRows(db: Db, id: string) {
  return db.batch([
    db
      .select({ live: sql<number>`count(*) FILTER (WHERE ${features.archivedAt} IS NULL)` })
      .from(features)
      .where(eq(features.project, id)),
    db
      .select()
      .from(features)
      .where(and(eq(features.project, id), isNotNull(features.archivedAt))),
    // Flags elsewhere that depend on one of the archived flags about to go.
    db
      .select({ child: dependentFeatures.child })
      .from(dependentFeatures)
      .innerJoin(features, eq(features.name, dependentFeatures.child))
      .where(
        and(
          inArray(dependentFeatures.parent, db.select({ name: features.name }).from(features).where(eq(features.project, id))),
          sql`${features.project} <> ${id}`,
        ),
      ),
    // Tokens whose only project is this one (the others just lose it from their list).
    db
      .select({
        secretHash: apiTokens.secretHash,
        id: apiTokens.id,
        tokenName: apiTokens.tokenName,
        type: apiTokens.type,
        environment: apiTokens.environment,
      })
      .from(apiTokens)
      .innerJoin(apiTokenProject, eq(apiTokenProject.secretHash, apiTokens.secretHash))
      .where(
        and(
          eq(apiTokenProject.project, id),
          sql`(SELECT count(*) FROM ${apiTokenProject} other WHERE other.secret_hash = ${apiTokens.secretHash}) = 1`,
        ),
      ),
  ]);
}

/**
 * Deletes a project in one batch: its archived flags (each with its event), the tokens scoped
 * to it alone (each with its event), its role assignments, then the row (its environments,
 * segments and context fields go with it), and the project's event last.
 */
export async function deleteProject(
  db: Db,
  actor: Actor,
  id: string,
  archivedFlags: readonly string[],
  tokenHashes: readonly string[],
  flagEvents: readonly AuditEvent[],
  tokenEvents: readonly AuditEvent[],
): Promise<void> {
  const statements: Statement[] = [];
  if (archivedFlags.length > 0) {
    statements.push(
      ...chunksOf(archivedFlags, 90).flatMap((names) => [
        db.delete(dependentFeatures).where(inArray(dependentFeatures.parent, names)),
        db.delete(features).where(inArray(features.name, names)),
      ]),
    );
  }
  statements.push(...chunksOf(tokenHashes, 90).map((hashes) => db.delete(apiTokens).where(inArray(apiTokens.secretHash, hashes))));
  statements.push(
    ...auditEvents(db, actor, [...flagEvents, ...tokenEvents]),
    db.delete(roleUser).where(eq(roleUser.project, id)),
    db.delete(projects).where(eq(projects.id, id)),
    auditEvent(db, actor, { type: 'project-deleted', project: id }),
  );
  await runBatch(db, statements);
}
