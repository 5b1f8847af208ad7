/**
 * The Drizzle queries of service accounts: `users` rows with `is_service`, their root role in
 * `role_user`. Their tokens are personal access tokens of the account, as in Unleash (the
 * personal-tokens service).
 */
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import { roles, roleUser, users } from '../../db/schema';
import { ROOT_ROLE_TYPES, type RootRole } from '../../db/lookups';

const rootRoleId = sql<number | null>`(SELECT ru.role_id FROM role_user ru JOIN roles r ON r.id = ru.role_id
  WHERE ru.user_id = "users"."id" AND ru.project = 'default' AND r.type IN ('root', 'root-custom')
  ORDER BY ru.created_at, ru.role_id LIMIT 1)`;

const accountColumns = {
  id: users.id,
  name: users.name,
  username: users.username,
  imageUrl: users.imageUrl,
  createdAt: users.createdAt,
  rootRole: rootRoleId,
};
export interface AccountRow {
  id: number;
  name: string | null;
  username: string | null;
  imageUrl: string | null;
  createdAt: string;
  rootRole: number | null;
}

const live = (...conditions: ReturnType<typeof eq>[]) => and(eq(users.isService, true), isNull(users.deletedAt), ...conditions);

export async function listAccounts(db: Db): Promise<AccountRow[]> {
  return db.select(accountColumns).from(users).where(live()).orderBy(asc(users.id));
}

export async function findAccount(db: Db, id: number): Promise<AccountRow | undefined> {
  const [row] = await db
    .select(accountColumns)
    .from(users)
    .where(live(eq(users.id, id)))
    .limit(1);
  return row;
}

export async function rootRolesByIds(db: Db, ids: readonly number[]): Promise<RootRole[]> {
  if (ids.length === 0) return [];
  return db
    .select({ id: roles.id, name: roles.name, description: roles.description, type: roles.type })
    .from(roles)
    .where(inArray(roles.id, [...new Set(ids)]))
    .orderBy(asc(roles.id));
}

/** Whether any user or service account, live or not, holds the username. */
export async function usernameTaken(db: Db, username: string): Promise<boolean> {
  const rows = await db.select({ id: users.id }).from(users).where(eq(users.username, username)).limit(1);
  return rows.length > 0;
}

export async function nextUserId(db: Db): Promise<number> {
  const [row] = await db.select({ next: sql<number>`COALESCE(MAX(${users.id}), 0) + 1` }).from(users);
  return Math.max(row?.next ?? 1, 1);
}

export function insertAccountStatements(
  db: Db,
  account: { id: number; name: string; username: string; createdAt: string },
  rootRole: number,
  createdByUserId: number,
): Statement[] {
  return [
    db.insert(users).values({ ...account, isService: true, createdByUserId }),
    db.insert(roleUser).values({ roleId: rootRole, userId: account.id, project: 'default', createdAt: account.createdAt, createdByUserId }),
  ];
}

export function renameStatement(db: Db, id: number, name: string, now: string): Statement {
  return db.update(users).set({ name, updatedAt: now }).where(eq(users.id, id));
}

export function setRootRoleStatements(db: Db, id: number, roleId: number, createdByUserId: number, now: string): Statement[] {
  return [
    db.delete(roleUser).where(
      and(
        eq(roleUser.userId, id),
        eq(roleUser.project, 'default'),
        inArray(
          roleUser.roleId,
          db
            .select({ id: roles.id })
            .from(roles)
            .where(inArray(roles.type, [...ROOT_ROLE_TYPES])),
        ),
      ),
    ),
    db.insert(roleUser).values({ roleId, userId: id, project: 'default', createdAt: now, createdByUserId }),
  ];
}

/** The account keeps its row (ids are never reused) without its name and username; its roles go. */
export function softDeleteStatements(db: Db, id: number, now: string): Statement[] {
  return [
    db.update(users).set({ deletedAt: now, name: null, username: null, updatedAt: now }).where(eq(users.id, id)),
    db.delete(roleUser).where(eq(roleUser.userId, id)),
  ];
}
