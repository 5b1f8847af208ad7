/**
 * Project role assignments (`role_user` rows outside the root role). Every write re-checks,
 * inside its own statement, that the roles (and the user) it names still exist, so a role
 * deleted between the request's checks and its batch leaves nothing half-written.
 */
import { and, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import type { Actor, AuditEvent } from '../../db/events';
import { events, rolePermission, roles, roleUser, users } from '../../db/schema';

const PROJECT_ROLE_TYPES = ['project', 'custom'] as const;

export type ProjectRole = { id: number; name: string; type: string; description: string | null };

export async function projectRoles(db: Db): Promise<ProjectRole[]> {
  return db
    .select({ id: roles.id, name: roles.name, type: roles.type, description: roles.description })
    .from(roles)
    .where(inArray(roles.type, [...PROJECT_ROLE_TYPES]))
    .orderBy(roles.id);
}

export async function projectRolesByIds(db: Db, ids: readonly number[]): Promise<ProjectRole[]> {
  if (ids.length === 0) return [];
  return db
    .select({ id: roles.id, name: roles.name, type: roles.type, description: roles.description })
    .from(roles)
    .where(and(inArray(roles.id, [...ids]), inArray(roles.type, [...PROJECT_ROLE_TYPES])));
}

export async function permissionsOfRoles(db: Db, ids: readonly number[]): Promise<{ permission: string; environment: string }[]> {
  if (ids.length === 0) return [];
  return db
    .select({ permission: rolePermission.permission, environment: rolePermission.environment })
    .from(rolePermission)
    .where(inArray(rolePermission.roleId, [...ids]));
}

export async function liveUserIds(db: Db, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select({ id: users.id })
    .from(users)
    .where(and(inArray(users.id, [...ids]), isNull(users.deletedAt), eq(users.isSystem, false)));
  return rows.map((row) => row.id);
}

/** Project-role assignments in a project: one row per user and role. */
export async function assignments(db: Db, projectId: string) {
  return db
    .select({ userId: roleUser.userId, roleId: roleUser.roleId, addedAt: roleUser.createdAt })
    .from(roleUser)
    .innerJoin(roles, eq(roles.id, roleUser.roleId))
    .where(and(eq(roleUser.project, projectId), inArray(roles.type, [...PROJECT_ROLE_TYPES])))
    .orderBy(roleUser.createdAt, roleUser.userId, roleUser.roleId);
}

export async function rolesOfUserInProject(db: Db, projectId: string, userId: number): Promise<number[]> {
  const rows = await db
    .select({ roleId: roleUser.roleId })
    .from(roleUser)
    .innerJoin(roles, eq(roles.id, roleUser.roleId))
    .where(and(eq(roleUser.project, projectId), eq(roleUser.userId, userId), inArray(roles.type, [...PROJECT_ROLE_TYPES])));
  return rows.map((row) => row.roleId).sort((a, b) => a - b);
}

export async function isOwner(db: Db, projectId: string, userId: number): Promise<boolean> {
  const rows = await db
    .select({ roleId: roleUser.roleId })
    .from(roleUser)
    .innerJoin(roles, eq(roles.id, roleUser.roleId))
    .where(and(eq(roleUser.project, projectId), eq(roleUser.userId, userId), eq(roles.name, 'Owner'), eq(roles.type, 'project')))
    .limit(1);
  return rows.length > 0;
}

function idList(ids: readonly number[]): SQL {
  return sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  );
}

/**
 * True while every role in `roleIds` exists as a project role (re-evaluated by each statement):
 * every write of an assignment, a person's or a group's, runs only under it.
 */
export function rolesStillExist(roleIds: readonly number[]): SQL {
  if (roleIds.length === 0) return sql`1`;
  return sql`(SELECT COUNT(*) FROM roles WHERE id IN (${idList(roleIds)}) AND type IN ('project', 'custom')) = ${roleIds.length}`;
}

/** Grants `roleId` in `projectId` to `userId`, if the roles and the user still exist. */
export function grantStatement(
  db: Db,
  projectId: string,
  roleId: number,
  userId: number,
  roleIds: readonly number[],
  actor: Actor,
): Statement {
  return db
    .insert(roleUser)
    .select(
      sql`SELECT ${roleId} AS role_id, ${userId} AS user_id, ${projectId} AS project, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS created_at, ${actor.userId} AS created_by_user_id
        WHERE ${rolesStillExist(roleIds)} AND EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND deleted_at IS NULL)`,
    )
    .onConflictDoNothing();
}

/** Removes the user's project roles in `projectId`; with `roleIds`, only while those still exist. */
export function revokeStatement(db: Db, projectId: string, userId: number, roleIds?: readonly number[]): Statement {
  return db
    .delete(roleUser)
    .where(
      and(
        eq(roleUser.project, projectId),
        eq(roleUser.userId, userId),
        sql`${roleUser.roleId} IN (SELECT id FROM roles WHERE type IN ('project', 'custom'))`,
        roleIds === undefined ? undefined : rolesStillExist(roleIds),
      ),
    );
}

/** The audit event of an assignment, written only if the roles still exist. */
export function guardedEvent(db: Db, actor: Actor, event: AuditEvent, roleIds: readonly number[]): Statement {
  const data = event.data === undefined ? null : JSON.stringify(event.data);
  const preData = event.preData === undefined ? null : JSON.stringify(event.preData);
  return db.insert(events).select(
    sql`SELECT NULL AS id, ${event.type} AS type, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS created_at, ${actor.actorName} AS created_by,
      ${actor.userId} AS created_by_user_id, ${event.project ?? null} AS project, NULL AS environment, NULL AS feature_name,
      ${data} AS data, ${preData} AS pre_data
      WHERE ${rolesStillExist(roleIds)}`,
  );
}

export async function allPermissions(db: Db) {
  return db.all<{ id: number; permission: string; display_name: string; type: string }>(
    sql`SELECT id, permission, display_name, type FROM permissions ORDER BY id`,
  );
}
