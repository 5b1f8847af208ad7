/** Drizzle queries of change requests, their changes, reviews and comments, and the per-environment settings. */
import { and, asc, eq, inArray, isNotNull, lte, sql } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import {
  changeRequestChanges,
  changeRequestComments,
  changeRequestReviews,
  changeRequests,
  changeRequestSettings,
  environments,
  projectEnvironments,
  users,
} from '../../db/schema';

export type ChangeRequestRow = typeof changeRequests.$inferSelect;

/** The project's environments with their change-request settings, in the environments' order. */
export function projectSettings(db: Db, project: string) {
  return db
    .select({
      environment: environments.name,
      type: environments.type,
      enabled: changeRequestSettings.enabled,
      requiredApprovals: changeRequestSettings.requiredApprovals,
    })
    .from(projectEnvironments)
    .innerJoin(environments, eq(environments.name, projectEnvironments.environmentName))
    .leftJoin(
      changeRequestSettings,
      and(eq(changeRequestSettings.project, project), eq(changeRequestSettings.environment, environments.name)),
    )
    .where(eq(projectEnvironments.projectId, project))
    .orderBy(asc(environments.sortOrder), asc(environments.name));
}

export function upsertSettings(db: Db, project: string, environment: string, enabled: boolean, requiredApprovals: number): Statement {
  return db
    .insert(changeRequestSettings)
    .values({ project, environment, enabled, requiredApprovals })
    .onConflictDoUpdate({
      target: [changeRequestSettings.project, changeRequestSettings.environment],
      set: { enabled, requiredApprovals },
    });
}

/** Change requests on in the environment with that many approvals, unless it already has settings (a predefined one). */
export function enableSettingsIfAbsent(db: Db, project: string, environment: string, requiredApprovals: number): Statement {
  return db.insert(changeRequestSettings).values({ project, environment, enabled: true, requiredApprovals }).onConflictDoNothing();
}

/**
 * Switches change requests on in the project's environments (one environment, or all) that
 * predefine approvals, with that many; a pair that already has settings keeps them. Runs in the
 * batch that attaches the environments, after their rows are written.
 */
export function predefineSettings(db: Db, project: string, environment?: string): Statement {
  return db
    .insert(changeRequestSettings)
    .select(
      db
        .select({
          project: projectEnvironments.projectId,
          environment: environments.name,
          enabled: sql<boolean>`1`.as('enabled'),
          requiredApprovals: sql<number>`${environments.requiredApprovals}`.as('required_approvals'),
        })
        .from(projectEnvironments)
        .innerJoin(environments, eq(environments.name, projectEnvironments.environmentName))
        .where(
          and(
            eq(projectEnvironments.projectId, project),
            isNotNull(environments.requiredApprovals),
            environment === undefined ? undefined : eq(environments.name, environment),
          ),
        ),
    )
    .onConflictDoNothing();
}

export async function findRequest(db: Db, id: number): Promise<ChangeRequestRow | undefined> {
  const [row] = await db.select().from(changeRequests).where(eq(changeRequests.id, id)).limit(1);
  return row;
}

export async function findDraft(db: Db, project: string, environment: string, userId: number) {
  const [row] = await db
    .select()
    .from(changeRequests)
    .where(
      and(
        eq(changeRequests.project, project),
        eq(changeRequests.environment, environment),
        eq(changeRequests.createdByUserId, userId),
        eq(changeRequests.state, 'Draft'),
      ),
    )
    .limit(1);
  return row;
}

export async function insertRequest(db: Db, row: typeof changeRequests.$inferInsert): Promise<ChangeRequestRow> {
  const [created] = await db.insert(changeRequests).values(row).returning();
  if (!created) throw new Error('change request insert returned nothing');
  return created;
}

export function updateRequest(db: Db, id: number, changes: Partial<typeof changeRequests.$inferInsert>): Statement {
  return db.update(changeRequests).set(changes).where(eq(changeRequests.id, id));
}

/** Moves the request only if it is still in `from` (a concurrent transition makes the batch a no-op). */
export function moveRequest(db: Db, id: number, from: string, changes: Partial<typeof changeRequests.$inferInsert>): Statement {
  return db
    .update(changeRequests)
    .set(changes)
    .where(and(eq(changeRequests.id, id), eq(changeRequests.state, from)));
}

/**
 * Aborts the batch (SQLite raises on malformed JSON) unless the statement before it changed a
 * row: a request another caller moved meanwhile leaves its batch, and its changes, unwritten.
 */
export function failUnlessMoved(db: Db): Statement {
  return db.run(sql`SELECT CASE WHEN changes() = 1 THEN 1 ELSE json('change request moved meanwhile') END`);
}

export function deleteRequest(db: Db, id: number): Statement {
  return db.delete(changeRequests).where(eq(changeRequests.id, id));
}

export function requestsOf(db: Db, project: string, states?: readonly string[]) {
  const where = states
    ? and(eq(changeRequests.project, project), inArray(changeRequests.state, [...states]))
    : eq(changeRequests.project, project);
  return db.select().from(changeRequests).where(where).orderBy(asc(changeRequests.id));
}

export function changesOf(db: Db, ids: readonly number[]) {
  return db
    .select()
    .from(changeRequestChanges)
    .where(inArray(changeRequestChanges.changeRequestId, [...ids]))
    .orderBy(asc(changeRequestChanges.id));
}

export function reviewsOf(db: Db, ids: readonly number[]) {
  return db
    .select()
    .from(changeRequestReviews)
    .where(inArray(changeRequestReviews.changeRequestId, [...ids]))
    .orderBy(asc(changeRequestReviews.createdAt));
}

export function commentsOf(db: Db, ids: readonly number[]) {
  return db
    .select()
    .from(changeRequestComments)
    .where(inArray(changeRequestComments.changeRequestId, [...ids]))
    .orderBy(asc(changeRequestComments.id));
}

export function people(db: Db, ids: readonly number[]) {
  return db
    .select({ id: users.id, username: users.username, email: users.email, name: users.name, imageUrl: users.imageUrl })
    .from(users)
    .where(inArray(users.id, [...ids]));
}

export function insertChange(db: Db, row: typeof changeRequestChanges.$inferInsert): Statement {
  return db.insert(changeRequestChanges).values(row);
}

export function updateChange(db: Db, requestId: number, id: number, changes: Partial<typeof changeRequestChanges.$inferInsert>): Statement {
  return db
    .update(changeRequestChanges)
    .set(changes)
    .where(and(eq(changeRequestChanges.id, id), eq(changeRequestChanges.changeRequestId, requestId)));
}

export function deleteChange(db: Db, requestId: number, id: number): Statement {
  return db.delete(changeRequestChanges).where(and(eq(changeRequestChanges.id, id), eq(changeRequestChanges.changeRequestId, requestId)));
}

export function addReview(db: Db, requestId: number, userId: number, verdict: 'approved' | 'rejected'): Statement {
  return db.insert(changeRequestReviews).values({ changeRequestId: requestId, userId, verdict }).onConflictDoNothing();
}

export function clearReviews(db: Db, requestId: number): Statement {
  return db.delete(changeRequestReviews).where(eq(changeRequestReviews.changeRequestId, requestId));
}

export function insertComment(db: Db, row: typeof changeRequestComments.$inferInsert): Statement {
  return db.insert(changeRequestComments).values(row);
}

/** Scheduled requests due at `now`, oldest first. */
export function dueRequests(db: Db, now: string, limit: number) {
  return db
    .select()
    .from(changeRequests)
    .where(and(eq(changeRequests.state, 'Scheduled'), eq(changeRequests.scheduleStatus, 'pending'), lte(changeRequests.scheduledAt, now)))
    .orderBy(asc(changeRequests.scheduledAt))
    .limit(limit);
}

export async function countByState(db: Db, project: string) {
  return db
    .select({ state: changeRequests.state, count: sql<number>`count(*)` })
    .from(changeRequests)
    .where(eq(changeRequests.project, project))
    .groupBy(changeRequests.state);
}
