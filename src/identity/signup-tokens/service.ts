import { ADMIN, requirePermissionFor } from '../../auth/permissions';
import type { Principal } from '../../auth/principal';
import { randomHex, secretPrefix } from '../../auth/secrets';
import { runBatch, type Db } from '../../db/client';
import { auditEvent, type Actor } from '../../db/events';
import { ApiError, badRequest, notFound } from '../../http/errors';
import { roleBody } from '../roles/service';
import { createUser, usersByIds, type UserBody } from '../users/service';
import type { CreateSignupTokenRequest, SignupRequest, UpdateSignupTokenRequest } from './schema';
import * as store from './store';
import { findRootRole } from '../../db/lookups';

const VIEWER_ROLE_ID = 3;
const NOT_FOUND = 'Could not find public signup token.';
/** Unleash records people who sign up themselves as done by its system user. */
const SIGNUP_ACTOR: Actor = { actorName: 'unleash_system_user', userId: -1337 };

/** Seed rule: a token past its expiry is reported disabled, whatever its stored flag. */
function reportedEnabled(token: Pick<store.TokenRow, 'enabled' | 'expiresAt'>, now = Date.now()): boolean {
  return token.enabled && Date.parse(token.expiresAt) > now;
}

/** The seed's public signup token, keys in the order Unleash emits them. */
function tokenBody(token: store.TokenRow, users: UserBody[]) {
  return {
    secret: token.secret,
    name: token.name,
    url: token.url,
    expiresAt: token.expiresAt,
    enabled: reportedEnabled(token),
    createdAt: token.createdAt,
    createdBy: token.createdBy,
    role: roleBody({ id: token.roleId, type: token.roleType, name: token.roleName, description: token.roleDescription }),
    users,
  };
}

async function withUsers(db: Db, tokens: store.TokenRow[]) {
  const idsBySecret = await store.tokenUserIds(
    db,
    tokens.map((token) => token.secret),
  );
  const users = new Map((await usersByIds(db, [...idsBySecret.values()].flat())).map((user) => [user.id, user]));
  // Deleted users read as 404 elsewhere, so they are not listed as having signed up either.
  return tokens.map((token) =>
    tokenBody(
      token,
      (idsBySecret.get(token.secret) ?? []).flatMap((id) => users.get(id) ?? []),
    ),
  );
}

/**
 * How audit events name an invite: the first 6 characters of its secret, never the secret
 * (or the url that carries it) — an event reader must not be able to sign up with it.
 */
function inviteRef(secret: string): { secretPrefix: string } {
  return { secretPrefix: `${secretPrefix(secret)}***` };
}

/** now + 1 calendar month (the day clamped to the month's end), as Unleash caps new tokens. */
function oneMonthFrom(now: Date): Date {
  const capped = new Date(now);
  const day = capped.getUTCDate();
  capped.setUTCDate(1);
  capped.setUTCMonth(capped.getUTCMonth() + 1);
  const lastDay = new Date(Date.UTC(capped.getUTCFullYear(), capped.getUTCMonth() + 1, 0)).getUTCDate();
  capped.setUTCDate(Math.min(day, lastDay));
  return capped;
}

export async function createToken(db: Db, actor: Principal, body: CreateSignupTokenRequest, baseUrl: string) {
  const roleId = body.roleId ?? VIEWER_ROLE_ID;
  const role = await findRootRole(db, roleId);
  if (!role) throw badRequest(`Could not find a root role with id ${roleId}`, { path: '/body/roleId' });
  // A link hands its role to anyone who has it: only an admin may hand out admin rights.
  if (await store.roleGrantsAdmin(db, role.id)) requirePermissionFor(actor, ADMIN);

  const now = new Date();
  const cap = oneMonthFrom(now);
  const requested = new Date(body.expiresAt);
  const secret = randomHex(16);
  const row = {
    secret,
    name: body.name,
    url: new URL(`${baseUrl}/new-user?invite=${secret}`).toString(),
    expiresAt: (requested < cap ? requested : cap).toISOString(),
    enabled: true,
    createdAt: now.toISOString(),
    createdBy: actor.actorName,
    roleId: role.id,
  };
  const created = tokenBody({ ...row, roleType: role.type, roleName: role.name, roleDescription: role.description }, []);
  const { secret: _secret, url: _url, ...described } = created;
  await runBatch(db, [
    store.insertTokenStatement(db, row),
    auditEvent(db, actor, { type: 'public-signup-token-created', data: { ...inviteRef(secret), ...described } }),
  ]);
  return created;
}

export async function listTokens(db: Db) {
  return { tokens: await withUsers(db, await store.listTokens(db)) };
}

async function requireToken(db: Db, secret: string): Promise<store.TokenRow> {
  const token = await store.findToken(db, secret);
  if (!token) throw notFound(NOT_FOUND);
  return token;
}

export async function getToken(db: Db, secret: string) {
  const [body] = await withUsers(db, [await requireToken(db, secret)]);
  return body!;
}

export async function updateToken(db: Db, actor: Actor, secret: string, changes: UpdateSignupTokenRequest) {
  const before = await requireToken(db, secret);
  const after = {
    ...before,
    ...(changes.expiresAt !== undefined ? { expiresAt: changes.expiresAt } : {}),
    ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
  };
  await runBatch(db, [
    store.updateTokenStatement(db, secret, { expiresAt: changes.expiresAt, enabled: changes.enabled }),
    auditEvent(db, actor, {
      type: 'public-signup-token-updated',
      data: { ...inviteRef(secret), enabled: after.enabled, expiresAt: after.expiresAt },
      preData: { ...inviteRef(secret), enabled: before.enabled, expiresAt: before.expiresAt },
    }),
  ]);
  const [body] = await withUsers(db, [after]);
  return body!;
}

function refusal(message: string): ApiError {
  return new ApiError(400, 'ValidationError', message);
}

/** The token behind an invite link, if people may sign up with it now; else a 400 saying why. */
export async function requireUsableToken(db: Db, secret: string): Promise<store.TokenRow> {
  const token = await store.findToken(db, secret);
  if (!token) throw refusal('This invite link is not valid: no invite link has that secret.');
  if (!token.enabled) throw refusal('This invite link has been disabled.');
  if (!reportedEnabled(token)) throw refusal(`This invite link expired at ${token.expiresAt}.`);
  return token;
}

/** Creates a user with the token's role and records it on the token, in one batch. */
export async function signup(db: Db, secret: string, body: SignupRequest): Promise<UserBody> {
  const token = await requireUsableToken(db, secret);
  return createUser(db, SIGNUP_ACTOR, { ...body, rootRole: token.roleId }, (userId) => [
    store.addTokenUserStatement(db, token.secret, userId, new Date().toISOString()),
    auditEvent(db, SIGNUP_ACTOR, { type: 'public-signup-token-user-added', data: { ...inviteRef(token.secret), userId } }),
  ]);
}
