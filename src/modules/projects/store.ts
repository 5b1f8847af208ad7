/** The Drizzle queries of projects and the environments attached to them. */
import { and, asc, count, desc, eq, gte, isNotNull, isNull, sql } from 'drizzle-orm';
import { chunkedInsert } from '../../db/chunk';
import { runBatch, type Db, type Statement } from '../../db/client';
import { auditEvent, type Actor, type AuditEvent } from '../../db/events';
import { dependentFeatures, environments, events, features, projectEnvironments, projects, roleUser, users } from '../../db/schema';
import { OWNER_ROLE_ID } from '../../auth/roles';
import { attachEnvironmentToFeatures } from '../features/service';

export type ProjectRow = typeof projects.$inferSelect;
export type NewProject = Pick<typeof projects.$inferInsert, 'id' | 'name' | 'description' | 'mode' | 'defaultStickiness'>;

/** The projects (live or archived), their live flag counts and their environments in sort order. */
export function listWithCounts(db: Db, archived: boolean) {
  return db.batch([
    db
      .select()
      .from(projects)
      .where(archived ? isNotNull(projects.archivedAt) : isNull(projects.archivedAt))
      .orderBy(asc(projects.createdAt), asc(projects.id)),
    db
      .select({ project: features.project, count: sql<number>`count(*)` })
      .from(features)
      .where(isNull(features.archivedAt))
      .groupBy(features.project),
    db
      .select({ projectId: projectEnvironments.projectId, environment: projectEnvironments.environmentName })
      .from(projectEnvironments)
      .innerJoin(environments, eq(environments.name, projectEnvironments.environmentName))
      .orderBy(asc(environments.sortOrder), asc(environments.name)),
  ]);
}

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

export async function exists(db: Db, id: string): Promise<boolean> {
  const rows = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, id)).limit(1);
  return rows.length > 0;
}

export function allEnvironments(db: Db) {
  return db.select().from(environments).orderBy(asc(environments.sortOrder), asc(environments.name));
}

export async function environmentExists(db: Db, name: string): Promise<boolean> {
  const found = await db.select({ name: environments.name }).from(environments).where(eq(environments.name, name)).limit(1);
  return found.length > 0;
}

/** Creates the project, attaches its environments, makes `ownerUserId` its Owner, and records the event: one batch. */
export async function insertProject(
  db: Db,
  actor: Actor,
  project: NewProject,
  attached: readonly string[],
  ownerUserId: number | undefined,
  event: AuditEvent,
): Promise<void> {
  const statements: Statement[] = [db.insert(projects).values(project)];
  const attachments = attached.map((environmentName) => ({ projectId: project.id, environmentName }));
  statements.push(...chunkedInsert(attachments, 2, (run) => db.insert(projectEnvironments).values(run)));
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

/** What the project page's overview counts: `current` is the last 30 days, `past` the 30 before. */
export function overviewRows(db: Db, projectId: string, current: string, past: string) {
  const inProject = eq(features.project, projectId);
  return db.batch([
    db.select().from(projects).where(eq(projects.id, projectId)).limit(1),
    db
      .select({ environment: projectEnvironments.environmentName })
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
    db
      .select({
        current: sql<number>`coalesce(sum(${features.createdAt} >= ${current}), 0)`,
        past: sql<number>`coalesce(sum(${features.createdAt} >= ${past} AND ${features.createdAt} < ${current}), 0)`,
      })
      .from(features)
      .where(and(inProject, gte(features.createdAt, past))),
    db
      .select({
        current: sql<number>`coalesce(sum(${features.archivedAt} >= ${current}), 0)`,
        past: sql<number>`coalesce(sum(${features.archivedAt} >= ${past} AND ${features.archivedAt} < ${current}), 0)`,
      })
      .from(features)
      .where(and(inProject, gte(features.archivedAt, past))),
    db
      .select({
        current: sql<number>`coalesce(sum(${events.createdAt} >= ${current}), 0)`,
        past: sql<number>`coalesce(sum(${events.createdAt} < ${current}), 0)`,
      })
      .from(events)
      .where(and(eq(events.project, projectId), gte(events.createdAt, past))),
    db
      .select({ count: sql<number>`count(DISTINCT ${roleUser.userId})` })
      .from(roleUser)
      .where(eq(roleUser.project, projectId)),
    db.select({ createdAt: events.createdAt }).from(events).where(eq(events.project, projectId)).orderBy(desc(events.id)).limit(1),
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
