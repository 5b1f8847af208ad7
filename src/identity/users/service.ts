import { runBatch, type Db, type Statement } from '../../db/client';
import { auditEvent, type Actor } from '../../db/events';
import { badRequest, notFound, validationError, type ErrorDetail } from '../../http/errors';
import { gravatarUrl } from './gravatar';
import { hashPassword, verifyPassword } from '../passwords/password';
import { requireStrongPassword } from '../passwords/password-policy';
import { forgetPasswordsStatement, recordPasswordStatements, requireUnusedPassword } from '../passwords/password-history';
import { clearFailuresStatement, forgiveAddressStatement, reserveLoginAttempt } from '../passwords/login-limits';
import { expireResetTokensStatement } from '../reset-tokens/service';
import type { Env } from '../../env';
import type { Grant } from '../../auth/access';
import type { Principal } from '../../auth/principal';
import { loginFailed, oldPasswordInvalid } from '../../http/errors';
import { forgetUser } from '../../auth/user-principal';
import { feedbackOf } from '../../admin/user-feedback/service';
import { credentialHashesOf, deleteCredentialStatements, revokeCredentials } from '../../auth/user-credentials';
import type { UpdateUserRequest } from './schema';
import * as store from './store';
import { isUniqueViolation } from '../../db/lookups';
import { findRootRole, type RootRole } from '../../db/lookups';
import { refuseHandEditOfScimUser } from '../../db/scim';
import { refusalReason } from './refusal-reason';

/** Unleash reports Viewer when a user has no root role row. */
const VIEWER_ROLE_ID = 3;
const NO_USER = 'No user found';

/** Unleash's generated avatar: gravatar of the email, else the username, else the id. */
export function userImageUrl(user: Pick<store.UserRow, 'id' | 'email' | 'username'>): Promise<string> {
  const ident = user.email || user.username || String(user.id);
  // Unleash lowercases and trims unless the text starts with "@" (its indexOf quirk).
  return gravatarUrl(ident.startsWith('@') ? ident.trim() : ident.toLowerCase().trim());
}

/** The seed's User, keys in the order Unleash 6 emits them; name/username/email only when set. */
async function userBody(row: store.UserRow) {
  return {
    isAPI: false,
    accountType: 'User',
    id: row.id,
    ...(row.name ? { name: row.name } : {}),
    ...(row.username ? { username: row.username } : {}),
    ...(row.email ? { email: row.email } : {}),
    imageUrl: row.imageUrl || (await userImageUrl(row)),
    seenAt: row.seenAt,
    loginAttempts: row.loginAttempts,
    createdAt: row.createdAt,
    scimId: row.scimId,
    rootRole: row.rootRole ?? VIEWER_ROLE_ID,
  };
}
export type UserBody = Awaited<ReturnType<typeof userBody>>;

/** One problem keeps Unleash's "invalid data: <reason>" message; several are listed. */
function rejection(details: ErrorDetail[]): Error {
  if (details.length === 1) {
    const [{ message, ...rest }] = details as [ErrorDetail];
    return badRequest(message, rest);
  }
  return validationError(details);
}

function auditData(row: Pick<store.UserRow, 'id' | 'name' | 'username' | 'email'>, rootRole: number) {
  return {
    id: row.id,
    ...(row.name ? { name: row.name } : {}),
    ...(row.username ? { username: row.username } : {}),
    ...(row.email ? { email: row.email } : {}),
    rootRole,
  };
}

async function resolveRootRole(db: Db, ref: number | string, details: ErrorDetail[]): Promise<RootRole | undefined> {
  const role = await findRootRole(db, ref);
  if (!role) details.push({ path: '/body/rootRole', message: `Could not find rootRole=${ref}` });
  return role;
}

function identityTaken(taken: { email: boolean; username: boolean }, details: ErrorDetail[]): void {
  if (taken.email) details.push({ path: '/body/email', message: 'User already exists' });
  else if (taken.username) details.push({ path: '/body/username', message: 'User already exists' });
}

export interface NewUser {
  name?: string | undefined;
  username?: string | undefined;
  email?: string | undefined;
  password?: string | undefined;
  rootRole: number | string;
}

/**
 * Creates a user and its root role in one batch with its audit event, after every check has
 * passed. `extra` adds statements that need the new id (a signup token's user row and event).
 */
export async function createUser(
  db: Db,
  actor: Actor,
  input: NewUser,
  extra: (userId: number) => Statement[] | Promise<Statement[]> = () => [],
): Promise<UserBody> {
  if (input.password !== undefined) requireStrongPassword(input.password);
  const details: ErrorDetail[] = [];
  if (input.username === undefined && input.email === undefined) {
    details.push({ path: '/body/email', message: 'You must specify username or email' });
  }
  const role = await resolveRootRole(db, input.rootRole, details);
  identityTaken(await store.takenIdentity(db, input), details);
  if (details.length > 0 || !role) throw rejection(details);

  const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
  // Ids are allocated here so the audit event and the extra rows can name the user; a
  // concurrent creation that took the same id makes the batch fail whole, and we retry.
  for (let attempt = 0; ; attempt++) {
    const createdAt = new Date().toISOString();
    const row = {
      id: await store.nextUserId(db),
      name: input.name ?? null,
      username: input.username ?? null,
      email: input.email ?? null,
      imageUrl: null,
      seenAt: null,
      loginAttempts: 0,
      createdAt,
      scimId: null,
    };
    const extraStatements = await extra(row.id);
    try {
      await runBatch(db, [
        ...store.insertUserStatements(db, { ...row, passwordHash, createdByUserId: actor.userId }, role.id, actor.userId),
        ...(passwordHash === null ? [] : recordPasswordStatements(db, row.id, passwordHash, createdAt)),
        auditEvent(db, actor, { type: 'user-created', data: auditData(row, role.id) }),
        ...extraStatements,
      ]);
      return userBody({ ...row, rootRole: role.id });
    } catch (error) {
      if (isUniqueViolation(error, 'users.email') || isUniqueViolation(error, 'users.username')) {
        throw badRequest('User already exists');
      }
      if (!isUniqueViolation(error, 'users.id') || attempt >= 4) throw error;
    }
  }
}

async function requireUser(db: Db, id: number | null): Promise<store.UserRow> {
  const row = id === null ? undefined : await store.findUser(db, id);
  if (!row) throw notFound(NO_USER);
  return row;
}

export async function getUser(db: Db, id: number | null): Promise<UserBody> {
  return userBody(await requireUser(db, id));
}

export async function listUsers(db: Db) {
  const [rows, rootRoles] = await Promise.all([store.listUsers(db), store.listRootRoles(db)]);
  // No password-reset links exist here, so no user has a pending invite link.
  const listed = await Promise.all(rows.map(async (row) => ({ ...(await userBody(row)), inviteLink: '' })));
  return { users: listed, rootRoles };
}

/** Users (as User objects) among `ids` that still exist, by id. */
export async function usersByIds(db: Db, ids: readonly number[]): Promise<UserBody[]> {
  return Promise.all((await store.usersByIds(db, ids)).map(userBody));
}

export async function updateUser(db: Db, actor: Actor, id: number | null, input: UpdateUserRequest): Promise<UserBody> {
  const before = await requireUser(db, id);
  await refuseHandEditOfScimUser(db, before.id);
  const details: ErrorDetail[] = [];
  const role = input.rootRole === undefined ? undefined : await resolveRootRole(db, input.rootRole, details);
  if (input.email !== undefined && input.email !== before.email) {
    identityTaken(await store.takenIdentity(db, { email: input.email }, before.id), details);
  }
  if (details.length > 0) throw rejection(details);

  const now = new Date().toISOString();
  const after: store.UserRow = {
    ...before,
    name: input.name ?? before.name,
    email: input.email ?? before.email,
    rootRole: role?.id ?? before.rootRole,
  };
  const statements: Statement[] = [
    store.updateUserStatement(db, before.id, { name: after.name ?? undefined, email: after.email ?? undefined, updatedAt: now }),
  ];
  if (role && role.id !== before.rootRole) statements.push(...store.setRootRoleStatements(db, before.id, role.id, actor.userId, now));
  statements.push(
    auditEvent(db, actor, {
      type: 'user-updated',
      data: auditData(after, after.rootRole ?? VIEWER_ROLE_ID),
      preData: auditData(before, before.rootRole ?? VIEWER_ROLE_ID),
    }),
  );
  try {
    await runBatch(db, statements);
  } catch (error) {
    if (isUniqueViolation(error, 'users.email')) throw badRequest('User already exists', { path: '/body/email' });
    throw error;
  }
  // A new root role applies at once in this isolate, within ISOLATE_CACHE_TTL_MS elsewhere.
  forgetUser(before.id);
  return userBody(after);
}

/** Deletes a user; their sessions and personal access tokens end with them. */
export async function deleteUser(env: Env, db: Db, actor: Actor, id: number | null): Promise<void> {
  const before = await requireUser(db, id);
  const now = new Date().toISOString();
  const credentials = await credentialHashesOf(db, before.id, { personalTokens: true });
  await runBatch(db, [
    ...store.softDeleteStatements(db, before.id, now),
    forgetPasswordsStatement(db, before.id),
    ...deleteCredentialStatements(db, before.id, { personalTokens: true }),
    auditEvent(db, actor, { type: 'user-deleted', preData: auditData(before, before.rootRole ?? VIEWER_ROLE_ID) }),
  ]);
  await revokeCredentials(env, before.id, credentials);
}

/**
 * Deletes every person a SCIM directory provisioned, as Unleash does (one `scim-users-deleted`
 * event, none per person); their sessions and personal access tokens end with them.
 */
export async function deleteScimUsers(env: Env, db: Db, actor: Actor): Promise<void> {
  const ids = await store.liveScimUserIds(db);
  const now = new Date().toISOString();
  const credentials = await Promise.all(ids.map((id) => credentialHashesOf(db, id, { personalTokens: true })));
  await runBatch(db, [
    ...ids.flatMap((id) => [
      ...store.softDeleteStatements(db, id, now),
      forgetPasswordsStatement(db, id),
      ...deleteCredentialStatements(db, id, { personalTokens: true }),
    ]),
    auditEvent(db, actor, { type: 'scim-users-deleted', data: null }),
  ]);
  await Promise.all(ids.map((id, index) => revokeCredentials(env, id, credentials[index]!)));
}

// ---------------------------------------------------------------------------------------
// Passwords and sign-in

/**
 * Checked when no account (or no password) matches, so that such attempts cost the same
 * PBKDF2 work as a wrong password. It matches no password.
 */
const DUMMY_PASSWORD_HASH = 'pbkdf2-sha256$100000$c2lnbi1pbi1kdW1teS1zYWx0$paWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaU=';

/**
 * Checks a sign-in from `address` (`clientKey`). Unknown account, wrong password, no password
 * and an attempt the limits refuse (login-limits.ts) all get the same 401 after the same work:
 * one counting statement, one PBKDF2 check, one update. Success resets the failure count, sets
 * `seenAt` and forgives the address its failures.
 */
export async function verifyLogin(
  db: Db,
  identifier: string,
  password: string,
  address: string,
  /** Whether this account may sign in with a password at all (single sign-on may have switched passwords off). */
  passwordsAllowedFor: (userId: number) => boolean = () => true,
): Promise<store.UserRow> {
  const candidate = await store.findLoginCandidate(db, identifier);
  const now = Date.now();
  const allowed = await reserveLoginAttempt(db, candidate?.id ?? 0, address, now);
  const matches = await verifyPassword(password, candidate?.passwordHash ?? DUMMY_PASSWORD_HASH);
  const permitted = candidate !== undefined && passwordsAllowedFor(candidate.id);
  if (!candidate || !candidate.passwordHash || !allowed || !matches || !permitted) {
    // Refused attempts are not counted in loginAttempts (id 0 names nobody): as before, only checked ones.
    await store.failedLoginStatement(db, candidate && allowed && permitted ? candidate.id : 0, new Date(now).toISOString()).run();
    const refused = loginFailed();
    // Why, for the login history only: everyone is answered the same.
    refused.cause = refusalReason(candidate, permitted, allowed);
    throw refused;
  }
  await runBatch(db, [
    store.successfulLoginStatement(db, candidate.id, new Date(now).toISOString()),
    forgiveAddressStatement(db, candidate.id, address),
  ]);
  return requireUser(db, candidate.id);
}

/** 200 or Unleash's OwaspValidationError-shaped 400. */
export function validatePassword(password: string): void {
  requireStrongPassword(password);
}

/**
 * Stores a new password as Unleash's changePassword does: it is recorded among the person's
 * latest, every session of theirs ends (personal access tokens stay) and their open reset
 * links expire, all in one batch; then KV and this isolate forget the sessions.
 */
async function replacePassword(env: Env, db: Db, userId: number, password: string): Promise<void> {
  const passwordHash = await hashPassword(password);
  const now = new Date().toISOString();
  const credentials = await credentialHashesOf(db, userId);
  await runBatch(db, [
    store.setPasswordStatement(db, userId, passwordHash, now),
    ...recordPasswordStatements(db, userId, passwordHash, now),
    clearFailuresStatement(db, userId),
    expireResetTokensStatement(db, userId, now),
    ...deleteCredentialStatements(db, userId),
  ]);
  await revokeCredentials(env, userId, credentials);
}

/** An admin sets a user's password (no check against earlier ones, as in Unleash). */
export async function setPassword(env: Env, db: Db, id: number | null, password: string): Promise<void> {
  const user = await requireUser(db, id);
  await refuseHandEditOfScimUser(db, user.id);
  requireStrongPassword(password);
  await replacePassword(env, db, user.id, password);
}

/**
 * A person changes their own password, in Unleash 6.10.1's order: the strength rule, the old
 * password (else 401), then none of their last 5 passwords (else 400). Every session of theirs
 * ends, the one this request came with included, and their open reset links expire.
 */
export async function changeOwnPassword(
  env: Env,
  db: Db,
  userId: number,
  change: { password: string; oldPassword: string },
): Promise<void> {
  requireStrongPassword(change.password);
  const stored = await store.passwordHashOf(db, userId);
  const matches = await verifyPassword(change.oldPassword, stored ?? DUMMY_PASSWORD_HASH);
  if (stored === null || !matches) throw oldPasswordInvalid();
  await requireUnusedPassword(db, userId, change.password);
  await replacePassword(env, db, userId, change.password);
}

// ---------------------------------------------------------------------------------------
// The caller: GET /api/admin/user and /api/admin/user/profile

/** A user as Unleash 6.10.1 shows the signed-in person: the User without `rootRole`. */
export async function sessionUserBody(row: store.UserRow) {
  const { rootRole: _rootRole, ...user } = await userBody(row);
  return user;
}

/** `[{permission, project?, environment?}]`, Unleash's shape; root-role grants have neither. */
function permissionList(grants: readonly Grant[]) {
  const seen = new Set<string>();
  const list: { permission: string; project?: string; environment?: string }[] = [];
  for (const grant of grants) {
    const key = `${grant.permission}\u0000${grant.project ?? ''}\u0000${grant.environment ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    list.push({
      permission: grant.permission,
      ...(grant.project !== null ? { project: grant.project } : {}),
      ...(grant.environment !== null ? { environment: grant.environment } : {}),
    });
  }
  return list;
}

/**
 * The permission list's JSON text, made once per grants load: the auth module replaces a
 * person's grants (a new array) on every load, and a write that changes rights makes it load
 * again, so the text is never older than the grants every check of the same request uses.
 * A person in 50 groups on 200 projects holds thousands of grants, and building and
 * serialising their list on every `GET /api/admin/user` was most of its cost
 * (bench/permissions/RESULTS.md).
 */
const listTexts = new WeakMap<readonly Grant[], string>();

function permissionListText(grants: readonly Grant[]): string {
  let text = listTexts.get(grants);
  if (text === undefined) {
    text = JSON.stringify(permissionList(grants));
    listTexts.set(grants, text);
  }
  return text;
}

/** `GET /api/admin/user`'s body in Unleash's key order, as JSON text with the kept permission list spliced in. */
function meText(principal: Principal, body: { user: object; feedback: unknown; splash: unknown }): string {
  const permissions = permissionListText(principal.access.grants);
  return `{"user":${JSON.stringify(body.user)},"permissions":${permissions},"feedback":${JSON.stringify(body.feedback)},"splash":${JSON.stringify(body.splash)}}`;
}

/**
 * `GET /api/admin/user`, as JSON text (`{user, permissions, feedback, splash}`). For an admin
 * API token Unleash answers as its token user (-42) and echoes the token, secret included; we
 * leave the secret out.
 */
export async function currentUser(db: Db, principal: Principal): Promise<string> {
  if (principal.kind === 'api-token') {
    const { token } = principal;
    return meText(principal, {
      user: {
        isAPI: true,
        username: token.name,
        permissions: token.type === 'admin' ? ['ADMIN'] : [],
        environment: token.environment,
        type: token.type,
        projects: token.projects,
        internalAdminTokenUserId: principal.userId,
      },
      feedback: [],
      // Unleash answers an API token no splash screens, whatever it has recorded.
      splash: {},
    });
  }
  // A service account's token asks too (as in Unleash Enterprise): the account, so named.
  const caller = await store.findCaller(db, principal.userId);
  if (!caller) throw notFound(NO_USER);
  const { isService, ...row } = caller;
  const body = await sessionUserBody(row);
  const user = isService ? { ...body, accountType: 'Service Account' } : body;
  return meText(principal, {
    user,
    feedback: await feedbackOf(db, caller.id),
    splash: await store.splashesOf(db, caller.id),
  });
}

/** `GET /api/admin/user/profile` (Unleash answers 500 to an admin token here; we describe the token user). */
export async function profile(db: Db, principal: Principal) {
  const role = await findRootRole(
    db,
    principal.kind === 'user' ? ((await requireUser(db, principal.userId)).rootRole ?? VIEWER_ROLE_ID) : 1,
  );
  return {
    projects: principal.kind === 'user' ? await store.projectsOfUser(db, principal.userId) : [],
    rootRole: role ? { id: role.id, name: role.name, type: role.type, description: role.description ?? '' } : null,
    subscriptions: ['productivity-report'],
    features: [],
  };
}

export async function adminCount(db: Db) {
  return store.adminCount(db);
}

/** Most users a search answers with. */
const SEARCH_LIMIT = 100;

/** Users whose name contains `q` or whose username or email starts with it; nothing for fewer than 2 characters. */
export async function searchUsers(db: Db, q: string | undefined) {
  if (q === undefined || q.length < 2) return [];
  const rows = await store.searchUsers(db, q, SEARCH_LIMIT);
  return Promise.all(
    rows.map(async (row) => {
      const { loginAttempts: _attempts, createdAt: _created, rootRole: _role, ...shown } = await userBody(row);
      return shown;
    }),
  );
}

/** The user an admin asks a reset link for, by email (Unleash's `id` field carries the email). */
export async function userByEmail(db: Db, email: string): Promise<store.UserRow> {
  const row = await store.findByEmail(db, email.trim().toLowerCase());
  if (!row) throw notFound('No user found');
  // A directory-managed person's password is the directory's business (Unleash refuses too).
  await refuseHandEditOfScimUser(db, row.id);
  return row;
}

/** A live person by email (compared trimmed and lowercased, as stored), or undefined. */
export async function findUserByEmail(db: Db, email: string): Promise<store.UserRow | undefined> {
  return store.findByEmail(db, email.trim().toLowerCase());
}

/** A sign-in without a password (single sign-on): `seenAt` now, as a password sign-in records it. */
export async function recordSignIn(db: Db, id: number): Promise<void> {
  await store.successfulLoginStatement(db, id, new Date().toISOString()).run();
}

/** The caller's roles in a project, with their root role. */
export async function rolesInProject(db: Db, principal: Principal, projectId: string) {
  const rows = await store.projectRolesOf(db, principal.userId, projectId);
  return { version: 1, roles: rows.map((row) => ({ ...row, description: row.description ?? '' })) };
}

/** Unleash's threshold: a person unseen for this many days is inactive. */
const INACTIVE_AFTER_DAYS = 180;

function inactiveCutoff(now = Date.now()): string {
  return new Date(now - INACTIVE_AFTER_DAYS * 24 * 60 * 60 * 1000).toISOString();
}

export async function inactiveUsers(db: Db) {
  return { version: 1, inactiveUsers: await store.inactiveUsers(db, inactiveCutoff()) };
}

/**
 * Deletes the listed users that are inactive, never the caller. Unleash deletes any id given;
 * here an id that is not (or no longer) inactive is skipped, so a stale list cannot remove
 * someone who has come back.
 */
export async function deleteInactiveUsers(env: Env, db: Db, actor: Actor, ids: readonly number[]): Promise<void> {
  const inactive = new Set((await store.inactiveUsers(db, inactiveCutoff())).map((row) => row.id));
  for (const id of new Set(ids)) {
    if (id !== actor.userId && inactive.has(id)) await deleteUser(env, db, actor, id);
  }
}
