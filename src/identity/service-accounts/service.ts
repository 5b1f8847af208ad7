/**
 * Service accounts (as Unleash Enterprise has them): users that cannot sign in, acting only
 * through their own tokens with the permissions of their root role. A token is a personal
 * access token of the account (`user:<56 hex>`): its secret is shown once, in the create
 * answer; D1 and KV hold only its SHA-256.
 */
import type { Env } from '../../env';
import { runBatch, type Db, type Statement } from '../../db/client';
import { auditEvent, type Actor } from '../../db/events';
import { credentialHashesOf, deleteCredentialStatements, revokeCredentials } from '../../auth/user-credentials';
import { forgetUser } from '../../auth/user-principal';
import { badRequest, conflict, notFound } from '../../http/errors';
import { gravatarUrl } from '../users/gravatar';
import type { CreatePersonalTokenRequest } from '../personal-tokens/schema';
import * as personalTokens from '../personal-tokens/service';
import type { CreateServiceAccount, UpdateServiceAccount } from './schema';
import * as store from './store';
import { isUniqueViolation } from '../../db/lookups';
import { findRootRole, type RootRole } from '../../db/lookups';

const VIEWER_ROLE_ID = 3;

async function accountBody(row: store.AccountRow) {
  return {
    id: row.id,
    name: row.name,
    username: row.username,
    imageUrl: row.imageUrl || (await gravatarUrl((row.username ?? String(row.id)).toLowerCase().trim())),
    rootRole: row.rootRole ?? VIEWER_ROLE_ID,
    seenAt: null,
    createdAt: row.createdAt,
  };
}

/** What the audit log records of an account. */
function auditData(row: { id: number; name: string | null; username: string | null }, rootRole: number) {
  return { id: row.id, name: row.name, username: row.username, rootRole };
}

async function requireAccount(db: Db, id: number): Promise<store.AccountRow> {
  const row = await store.findAccount(db, id);
  if (!row) throw notFound(`Could not find service account with id ${id}`);
  return row;
}

async function requireRootRole(db: Db, id: number): Promise<RootRole> {
  const role = await findRootRole(db, id);
  if (!role) throw badRequest(`Could not find rootRole=${id}`, { path: '/body/rootRole' });
  return role;
}

export async function listAccounts(db: Db) {
  const rows = await store.listAccounts(db);
  const tokens = await personalTokens.tokensOfUsers(
    db,
    rows.map((row) => row.id),
  );
  const serviceAccounts = await Promise.all(
    rows.map(async (row) => ({ ...(await accountBody(row)), tokens: tokens.filter((token) => token.userId === row.id) })),
  );
  const rootRoles = await store.rootRolesByIds(
    db,
    serviceAccounts.map((account) => account.rootRole),
  );
  return { serviceAccounts, rootRoles };
}

export async function createAccount(db: Db, actor: Actor, body: CreateServiceAccount) {
  const taken = () => conflict(`A user or service account with the username ${body.username} already exists`);
  const role = await requireRootRole(db, body.rootRole);
  if (await store.usernameTaken(db, body.username)) throw taken();
  // The id is allocated here so that the role row and the event can name it; a concurrent
  // create that took it fails the whole batch, and we try the next one.
  for (let attempt = 0; ; attempt++) {
    const account = { id: await store.nextUserId(db), name: body.name, username: body.username, createdAt: new Date().toISOString() };
    try {
      await runBatch(db, [
        ...store.insertAccountStatements(db, account, role.id, actor.userId),
        auditEvent(db, actor, { type: 'service-account-created', data: auditData(account, role.id) }),
      ]);
      return accountBody({ ...account, imageUrl: null, rootRole: role.id });
    } catch (error) {
      if (isUniqueViolation(error, 'users.username')) throw taken();
      if (!isUniqueViolation(error, 'users.id') || attempt >= 4) throw error;
    }
  }
}

export async function updateAccount(db: Db, actor: Actor, id: number, body: UpdateServiceAccount) {
  const before = await requireAccount(db, id);
  const role = body.rootRole === undefined ? undefined : await requireRootRole(db, body.rootRole);
  const now = new Date().toISOString();
  const after: store.AccountRow = { ...before, name: body.name ?? before.name, rootRole: role?.id ?? before.rootRole };
  const statements: Statement[] = [];
  if (body.name !== undefined) statements.push(store.renameStatement(db, id, body.name, now));
  if (role && role.id !== before.rootRole) statements.push(...store.setRootRoleStatements(db, id, role.id, actor.userId, now));
  statements.push(
    auditEvent(db, actor, {
      type: 'service-account-updated',
      data: auditData(after, after.rootRole ?? VIEWER_ROLE_ID),
      preData: auditData(before, before.rootRole ?? VIEWER_ROLE_ID),
    }),
  );
  await runBatch(db, statements);
  // Its tokens act with the new role from the next request in this isolate.
  forgetUser(id);
  return accountBody(after);
}

/** Deletes the account and every token of it: they stop working at once here, and within the cache bound elsewhere. */
export async function deleteAccount(env: Env, db: Db, actor: Actor, id: number): Promise<void> {
  const before = await requireAccount(db, id);
  const hashes = await credentialHashesOf(db, id, { personalTokens: true });
  await runBatch(db, [
    ...deleteCredentialStatements(db, id, { personalTokens: true }),
    ...store.softDeleteStatements(db, id, new Date().toISOString()),
    auditEvent(db, actor, { type: 'service-account-deleted', preData: auditData(before, before.rootRole ?? VIEWER_ROLE_ID) }),
  ]);
  await revokeCredentials(env, id, hashes);
}

export async function listTokens(db: Db, id: number) {
  await requireAccount(db, id);
  return personalTokens.listTokens(db, id);
}

export async function createToken(env: Env, db: Db, actor: Actor, id: number, body: CreatePersonalTokenRequest) {
  await requireAccount(db, id);
  return personalTokens.createToken(env, db, actor, id, body);
}

export async function deleteToken(env: Env, db: Db, actor: Actor, id: number, tokenId: number): Promise<void> {
  await requireAccount(db, id);
  await personalTokens.deleteToken(env, db, actor, id, tokenId);
}
