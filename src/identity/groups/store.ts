/** The `groups` and `group_role` tables (membership rows go through src/db/groups.ts). */
import { and, asc, eq, inArray, isNotNull, ne, sql, type SQL } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import { groupRole, groups, roles } from '../../db/schema';

export type GroupRow = typeof groups.$inferSelect;

export async function allGroups(db: Db): Promise<GroupRow[]> {
  return db.select().from(groups).orderBy(asc(groups.name), asc(groups.id));
}

export async function groupById(db: Db, id: number): Promise<GroupRow | undefined> {
  const [row] = await db.select().from(groups).where(eq(groups.id, id)).limit(1);
  return row;
}

export async function groupsByIds(db: Db, ids: readonly number[]): Promise<GroupRow[]> {
  if (ids.length === 0) return [];
  return db
    .select()
    .from(groups)
    .where(inArray(groups.id, [...ids]))
    .orderBy(asc(groups.name), asc(groups.id));
}

/** Whether another group (not `exceptId`) has this name. */
export async function nameTaken(db: Db, name: string, exceptId?: number): Promise<boolean> {
  const rows = await db
    .select({ id: groups.id })
    .from(groups)
    .where(and(eq(groups.name, name), exceptId === undefined ? undefined : ne(groups.id, exceptId)))
    .limit(1);
  return rows.length > 0;
}

/** The projects each group has a role in. */
export async function projectsOfGroups(db: Db): Promise<{ groupId: number; project: string }[]> {
  return db.selectDistinct({ groupId: groupRole.groupId, project: groupRole.project }).from(groupRole).orderBy(asc(groupRole.project));
}

/** The group-role rows of a project, oldest first. */
export async function projectGroupRoles(db: Db, projectId: string) {
  return db
    .select({ groupId: groupRole.groupId, roleId: groupRole.roleId, addedAt: groupRole.createdAt })
    .from(groupRole)
    .where(eq(groupRole.project, projectId))
    .orderBy(asc(groupRole.createdAt), asc(groupRole.groupId), asc(groupRole.roleId));
}

export async function rolesOfGroupInProject(db: Db, projectId: string, groupId: number): Promise<number[]> {
  const rows = await db
    .select({ roleId: groupRole.roleId })
    .from(groupRole)
    .where(and(eq(groupRole.project, projectId), eq(groupRole.groupId, groupId)));
  return rows.map((row) => row.roleId).sort((a, b) => a - b);
}

export async function rootRoleExists(db: Db, id: number): Promise<boolean> {
  const rows = await db
    .select({ id: roles.id })
    .from(roles)
    .where(and(eq(roles.id, id), inArray(roles.type, ['root', 'root-custom'])))
    .limit(1);
  return rows.length > 0;
}

export function insertGroup(db: Db, row: typeof groups.$inferInsert) {
  return db.insert(groups).values(row).returning();
}

export function updateGroup(db: Db, id: number, row: Partial<typeof groups.$inferInsert>): Statement {
  return db.update(groups).set(row).where(eq(groups.id, id));
}

export function deleteGroup(db: Db, id: number): Statement {
  return db.delete(groups).where(eq(groups.id, id));
}

export async function scimGroupIds(db: Db): Promise<number[]> {
  return (await db.select({ id: groups.id }).from(groups).where(isNotNull(groups.scimId))).map((row) => row.id);
}

export function deleteScimGroups(db: Db): Statement {
  return db.delete(groups).where(isNotNull(groups.scimId));
}

/**
 * Gives `groupId` the role in the project, if the group still exists and `rolesExist` (the
 * project access module's check that every role of the request still exists) holds.
 */
export function grantGroupStatement(
  db: Db,
  projectId: string,
  roleId: number,
  groupId: number,
  createdBy: string,
  rolesExist: SQL,
): Statement {
  return db
    .insert(groupRole)
    .select(
      sql`SELECT ${groupId} AS group_id, ${roleId} AS role_id, ${projectId} AS project, ${createdBy} AS created_by, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS created_at
        WHERE ${rolesExist} AND EXISTS (SELECT 1 FROM groups WHERE id = ${groupId})`,
    )
    .onConflictDoNothing();
}

/** Removes the group's roles in the project; with `condition`, only while it holds. */
export function revokeGroupStatement(db: Db, projectId: string, groupId: number, condition?: SQL): Statement {
  return db.delete(groupRole).where(and(eq(groupRole.project, projectId), eq(groupRole.groupId, groupId), condition));
}
