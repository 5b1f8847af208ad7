import { and, asc, eq, inArray, isNotNull, isNull, ne, or, sql, type SQL } from 'drizzle-orm';
import { rowsPerStatement } from '../../db/chunk';
import type { Db } from '../../db/client';
import { roles, roleUser, users, userSplash } from '../../db/schema';
import { ROOT_ROLE_TYPES, type RootRole } from '../../db/lookups';

/**
 * The user's root role: its `role_user` row in project `default` with a root-type role. The
 * outer column is written out: drizzle would render it unqualified, which the subquery's own
 * `roles.id` would capture.
 */
const rootRoleId = sql<number | null>`(SELECT ru.role_id FROM role_user ru JOIN roles r ON r.id = ru.role_id
  WHERE ru.user_id = "users"."id" AND ru.project = 'default' AND r.type IN ('root', 'root-custom')
  ORDER BY ru.created_at, ru.role_id LIMIT 1)`;

const userColumns = {
  id: users.id,
  name: users.name,
  username: users.username,
  email: users.email,
  imageUrl: users.imageUrl,
  seenAt: users.seenAt,
  loginAttempts: users.loginAttempts,
  createdAt: users.createdAt,
  scimId: users.scimId,
  rootRole: rootRoleId,
};
export type UserRow = {
  id: number;
  name: string | null;
  username: string | null;
  email: string | null;
  imageUrl: string | null;
  seenAt: string | null;
  loginAttempts: number;
  createdAt: string;
  scimId: string | null;
  rootRole: number | null;
};

/** Users an admin can see: not deleted, not the system users, not service accounts. */
function visible(...conditions: SQL[]) {
  return and(isNull(users.deletedAt), eq(users.isSystem, false), eq(users.isService, false), ...conditions);
}

export async function findUser(db: Db, id: number): Promise<UserRow | undefined> {
  const [row] = await db
    .select(userColumns)
    .from(users)
    .where(visible(eq(users.id, id)))
    .limit(1);
  return row;
}

/** The caller of a request by id: a live person or service account (the latter is in no user list). */
export async function findCaller(db: Db, id: number): Promise<(UserRow & { isService: boolean }) | undefined> {
  const [row] = await db
    .select({ ...userColumns, isService: users.isService })
    .from(users)
    .where(and(isNull(users.deletedAt), eq(users.isSystem, false), eq(users.id, id)))
    .limit(1);
  return row;
}

/** The splash screens a person has dismissed, id → seen, in the order they were first recorded. */
export async function splashesOf(db: Db, userId: number): Promise<Record<string, boolean>> {
  const rows = await db
    .select({ splashId: userSplash.splashId, seen: userSplash.seen })
    .from(userSplash)
    .where(eq(userSplash.userId, userId))
    .orderBy(sql`${userSplash}.rowid`);
  return Object.fromEntries(rows.map((row) => [row.splashId, row.seen]));
}

export async function listUsers(db: Db): Promise<UserRow[]> {
  return db.select(userColumns).from(users).where(visible()).orderBy(asc(users.id));
}

/** Ids per `IN (...)` list, with room for the visibility filter's values. */
const IDS_PER_QUERY = rowsPerStatement(1, 10);

export async function usersByIds(db: Db, ids: readonly number[]): Promise<UserRow[]> {
  const unique = [...new Set(ids)];
  const rows: UserRow[] = [];
  for (let i = 0; i < unique.length; i += IDS_PER_QUERY) {
    rows.push(
      ...(await db
        .select(userColumns)
        .from(users)
        .where(visible(inArray(users.id, unique.slice(i, i + IDS_PER_QUERY))))),
    );
  }
  return rows.sort((a, b) => a.id - b.id);
}

export async function listRootRoles(db: Db): Promise<RootRole[]> {
  return db
    .select({ id: roles.id, name: roles.name, type: roles.type, description: roles.description })
    .from(roles)
    .where(inArray(roles.type, [...ROOT_ROLE_TYPES]))
    .orderBy(asc(roles.id));
}

/** Which of `email`/`username` another live user already holds (deleted users hold neither). */
export async function takenIdentity(db: Db, identity: { email?: string; username?: string }, exceptId?: number) {
  const matches: SQL[] = [];
  if (identity.email !== undefined) matches.push(eq(users.email, identity.email));
  if (identity.username !== undefined) matches.push(eq(users.username, identity.username));
  if (matches.length === 0) return { email: false, username: false };
  const rows = await db
    .select({ email: users.email, username: users.username })
    .from(users)
    .where(and(or(...matches), exceptId === undefined ? undefined : ne(users.id, exceptId)))
    .limit(2);
  return {
    email: identity.email !== undefined && rows.some((row) => row.email === identity.email),
    username: identity.username !== undefined && rows.some((row) => row.username === identity.username),
  };
}

export async function nextUserId(db: Db): Promise<number> {
  const [row] = await db.select({ next: sql<number>`COALESCE(MAX(${users.id}), 0) + 1` }).from(users);
  return Math.max(row?.next ?? 1, 1);
}

export function insertUserStatements(
  db: Db,
  user: typeof users.$inferInsert & { id: number },
  rootRoleId: number,
  createdByUserId: number,
) {
  return [
    db.insert(users).values(user),
    db.insert(roleUser).values({ roleId: rootRoleId, userId: user.id, project: 'default', createdAt: user.createdAt, createdByUserId }),
  ] as const;
}

export function updateUserStatement(db: Db, id: number, changes: { name?: string; email?: string; updatedAt: string }) {
  return db.update(users).set(changes).where(eq(users.id, id));
}

/** Replaces the user's root role (project roles stay). */
export function setRootRoleStatements(db: Db, userId: number, roleId: number, createdByUserId: number, now: string) {
  return [
    db.delete(roleUser).where(
      and(
        eq(roleUser.userId, userId),
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
    db.insert(roleUser).values({ roleId, userId, project: 'default', createdAt: now, createdByUserId }),
  ] as const;
}

/**
 * Unleash's soft delete: the row stays (its id is never reused) but loses name, username and
 * email, so the address can sign up again; its role assignments go.
 */
/**
 * The people a SCIM directory provisioned (they carry its id), not yet deleted: those it
 * deactivated too (`deleted_at` set, identity kept, src/identity/scim), whose identity a
 * deletion scrubs.
 */
export async function liveScimUserIds(db: Db): Promise<number[]> {
  const rows = await db
    .select({ id: users.id })
    .from(users)
    .where(and(isNotNull(users.username), isNotNull(users.scimId)));
  return rows.map((row) => row.id);
}

export function softDeleteStatements(db: Db, id: number, now: string) {
  return [
    db
      .update(users)
      .set({ deletedAt: now, name: null, username: null, email: null, passwordHash: null, updatedAt: now })
      .where(eq(users.id, id)),
    db.delete(roleUser).where(eq(roleUser.userId, id)),
  ] as const;
}

/** The account a sign-in names: by email (stored lowercase) or by exact username. */
export async function findLoginCandidate(db: Db, identifier: string): Promise<{ id: number; passwordHash: string | null } | undefined> {
  const rows = await db
    .select({ id: users.id, email: users.email, passwordHash: users.passwordHash })
    .from(users)
    .where(visible(or(eq(users.email, identifier.trim().toLowerCase()), eq(users.username, identifier))!))
    .limit(2);
  // An email match wins over someone whose username happens to be that address.
  return rows.find((row) => row.email === identifier.trim().toLowerCase()) ?? rows[0];
}

/**
 * A wrong password (or a refused attempt) counts in `loginAttempts`, failures in a row as
 * Unleash reports them. An id naming no user costs the same statement (equal timing).
 */
export function failedLoginStatement(db: Db, id: number, now: string) {
  return db
    .update(users)
    .set({ loginAttempts: sql`${users.loginAttempts} + 1`, lastFailedLoginAt: now })
    .where(eq(users.id, id));
}

/** A successful sign-in: the failure count starts over and `seenAt` is now. */
export function successfulLoginStatement(db: Db, id: number, now: string) {
  return db.update(users).set({ loginAttempts: 0, lastFailedLoginAt: null, seenAt: now }).where(eq(users.id, id));
}

export async function passwordHashOf(db: Db, id: number): Promise<string | null> {
  const [row] = await db
    .select({ passwordHash: users.passwordHash })
    .from(users)
    .where(visible(eq(users.id, id)))
    .limit(1);
  return row?.passwordHash ?? null;
}

/** A new password starts the failure count over. */
export function setPasswordStatement(db: Db, id: number, passwordHash: string, now: string) {
  return db.update(users).set({ passwordHash, loginAttempts: 0, lastFailedLoginAt: null, updatedAt: now }).where(eq(users.id, id));
}

/** Projects in which the user holds any role (the root role's row names `default`), as Unleash's profile lists them. */
export async function projectsOfUser(db: Db, userId: number): Promise<string[]> {
  const rows = await db
    .selectDistinct({ project: roleUser.project })
    .from(roleUser)
    .where(eq(roleUser.userId, userId))
    .orderBy(asc(roleUser.project));
  return rows.map((row) => row.project);
}

/** Active accounts holding the Admin root role: with a password, without one, and service accounts. */
export async function adminCount(db: Db): Promise<{ password: number; noPassword: number; service: number }> {
  const [row] = await db
    .select({
      password: sql<number>`count(CASE WHEN ${users.passwordHash} IS NOT NULL AND ${users.isService} = 0 THEN 1 END)`,
      noPassword: sql<number>`count(CASE WHEN ${users.passwordHash} IS NULL AND ${users.isService} = 0 THEN 1 END)`,
      service: sql<number>`count(CASE WHEN ${users.isService} = 1 THEN 1 END)`,
    })
    .from(users)
    .innerJoin(roleUser, eq(roleUser.userId, users.id))
    .innerJoin(roles, eq(roles.id, roleUser.roleId))
    .where(and(isNull(users.deletedAt), eq(users.isSystem, false), eq(roles.name, 'Admin'), eq(roles.type, 'root')));
  return { password: row?.password ?? 0, noPassword: row?.noPassword ?? 0, service: row?.service ?? 0 };
}

/** Unleash's user search: the name contains the text, or the username or email starts with it (any case). */
export async function searchUsers(db: Db, q: string, limit: number): Promise<UserRow[]> {
  const escaped = q.replace(/[\\%_]/g, (character) => `\\${character}`);
  return db
    .select(userColumns)
    .from(users)
    .where(
      visible(
        or(
          sql`${users.name} LIKE ${`%${escaped}%`} ESCAPE '\\'`,
          sql`${users.username} LIKE ${`${escaped}%`} ESCAPE '\\'`,
          sql`${users.email} LIKE ${`${escaped}%`} ESCAPE '\\'`,
        )!,
      ),
    )
    .orderBy(asc(users.id))
    .limit(limit);
}

/** An active user (not a system or service account) by email, compared as stored: trimmed and lowercased. */
export async function findByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  const [row] = await db
    .select(userColumns)
    .from(users)
    .where(visible(eq(users.email, email)))
    .limit(1);
  return row;
}

/** The roles a user holds in a project, and their root role. */
export function projectRolesOf(db: Db, userId: number, project: string) {
  return db
    .select({ id: roles.id, name: roles.name, type: roles.type, project: roleUser.project, description: roles.description })
    .from(roles)
    .innerJoin(roleUser, eq(roleUser.roleId, roles.id))
    .where(and(eq(roleUser.userId, userId), or(eq(roleUser.project, project), eq(roles.type, 'root'))))
    .orderBy(asc(roles.id));
}

/**
 * People (not service or system accounts) neither seen, created nor using a personal access
 * token since `cutoff`, with when their tokens were last used.
 */
export function inactiveUsers(db: Db, cutoff: string) {
  return db
    .select({
      id: users.id,
      name: users.name,
      email: users.email,
      username: users.username,
      seenAt: users.seenAt,
      createdAt: users.createdAt,
      patSeenAt: sql<string | null>`(SELECT max(pat.seen_at) FROM personal_access_tokens pat WHERE pat.user_id = "users"."id")`,
    })
    .from(users)
    .where(
      and(
        isNull(users.deletedAt),
        eq(users.isService, false),
        eq(users.isSystem, false),
        sql`(${users.seenAt} IS NULL OR ${users.seenAt} < ${cutoff}) AND ${users.createdAt} < ${cutoff}
          AND NOT EXISTS (SELECT 1 FROM personal_access_tokens pat WHERE pat.user_id = "users"."id" AND pat.seen_at >= ${cutoff})`,
      ),
    )
    .orderBy(asc(users.id));
}
