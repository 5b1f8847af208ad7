import { and, asc, eq, isNull, ne, sql } from 'drizzle-orm';
import { chunkedInsert } from '../../db/chunk';
import type { Db } from '../../db/client';
import { environments, permissions, publicSignupTokens, rolePermission, roles, roleUser, users } from '../../db/schema';

export type RoleRow = typeof roles.$inferSelect;
export type PermissionRow = typeof permissions.$inferSelect;

export async function listRoles(db: Db): Promise<RoleRow[]> {
  return db.select().from(roles).orderBy(asc(roles.id));
}

export async function findRole(db: Db, id: number): Promise<RoleRow | undefined> {
  const [row] = await db.select().from(roles).where(eq(roles.id, id)).limit(1);
  return row;
}

/** Whether any role, of any type, other than `exceptId` has exactly this name. */
export async function roleNameTaken(db: Db, name: string, exceptId?: number): Promise<boolean> {
  const rows = await db
    .select({ id: roles.id })
    .from(roles)
    .where(and(eq(roles.name, name), exceptId === undefined ? undefined : ne(roles.id, exceptId)))
    .limit(1);
  return rows.length > 0;
}

export async function allPermissions(db: Db): Promise<PermissionRow[]> {
  return db.select().from(permissions).orderBy(asc(permissions.id));
}

export async function environmentNames(db: Db): Promise<string[]> {
  return (await db.select({ name: environments.name }).from(environments)).map((row) => row.name);
}

export async function rolePermissions(db: Db, roleId: number) {
  return db
    .select({
      id: permissions.id,
      name: permissions.permission,
      displayName: permissions.displayName,
      type: permissions.type,
      environment: rolePermission.environment,
    })
    .from(rolePermission)
    .innerJoin(permissions, eq(permissions.permission, rolePermission.permission))
    .where(eq(rolePermission.roleId, roleId))
    .orderBy(asc(permissions.id), asc(rolePermission.environment));
}

/** How many live users and signup tokens hold the role (it cannot be deleted while held). */
export async function roleHolders(db: Db, roleId: number) {
  const [heldByUsers, heldByTokens] = await db.batch([
    db
      .select({ count: sql<number>`count(*)` })
      .from(roleUser)
      .innerJoin(users, eq(users.id, roleUser.userId))
      .where(and(eq(roleUser.roleId, roleId), isNull(users.deletedAt))),
    db
      .select({ count: sql<number>`count(*)` })
      .from(publicSignupTokens)
      .where(eq(publicSignupTokens.roleId, roleId)),
  ]);
  return { users: heldByUsers[0]?.count ?? 0, tokens: heldByTokens[0]?.count ?? 0 };
}

export async function nextRoleId(db: Db): Promise<number> {
  const [row] = await db.select({ next: sql<number>`COALESCE(MAX(${roles.id}), 0) + 1` }).from(roles);
  return row?.next ?? 1;
}

export interface GrantedPermission {
  permission: string;
  environment: string;
}

export function grantStatements(db: Db, roleId: number, grants: readonly GrantedPermission[], createdAt: string) {
  const rows = grants.map((grant) => ({ roleId, permission: grant.permission, environment: grant.environment, createdAt }));
  return chunkedInsert(rows, 4, (run) => db.insert(rolePermission).values(run));
}

export function insertRoleStatement(db: Db, role: typeof roles.$inferInsert) {
  return db.insert(roles).values(role);
}

export function updateRoleStatement(db: Db, id: number, changes: { name: string; description: string; type: string; updatedAt: string }) {
  return db.update(roles).set(changes).where(eq(roles.id, id));
}

export function revokeAllStatement(db: Db, roleId: number) {
  return db.delete(rolePermission).where(eq(rolePermission.roleId, roleId));
}

export function deleteRoleStatement(db: Db, id: number) {
  return db.delete(roles).where(eq(roles.id, id));
}
