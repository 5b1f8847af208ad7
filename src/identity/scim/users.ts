/**
 * SCIM Users: the rules between the routes and the store. Every refusal is decided before the
 * one batch that writes (the row, its root role, its audit event and, on deactivation, the end
 * of the person's sessions and personal tokens), so a refused request writes nothing.
 */
import type { Env } from '../../env';
import { runBatch, type Db, type Statement } from '../../db/client';
import { auditEvent, type Actor } from '../../db/events';
import { findRootRole, isUniqueViolation } from '../../db/lookups';
import type { ScimSettings } from '../../db/scim';
import { SYSTEM_USER_ID } from '../../auth/principal';
import { credentialHashesOf, deleteCredentialStatements, revokeCredentials } from '../../auth/user-credentials';
import { forgetUser } from '../../auth/user-principal';
import { forgetPasswordsStatement } from '../passwords/password-history';
import { resourceNotFound, uniqueness } from './errors';
import { filterSql } from './filter-sql';
import type { Filter } from './filter';
import * as store from './store';
import type { ScimUserRow, UserFields } from './store';
import { applyUserPatch, type PatchOperation } from './patch';
import { fieldsOfRow, userResource } from './user-resource';

/** Who the audit log names for the directory's changes. */
export const SCIM_ACTOR: Actor = { actorName: 'scim', userId: SYSTEM_USER_ID };
/** People the directory creates start as Viewers; groups give them more. */
const DEFAULT_ROOT_ROLE = 'Viewer';

function auditData(id: number, fields: Pick<UserFields, 'userName' | 'name' | 'email'> & { active?: boolean }) {
  return {
    id,
    ...(fields.name !== null ? { name: fields.name } : {}),
    username: fields.userName,
    ...(fields.email !== null ? { email: fields.email } : {}),
    ...(fields.active !== undefined ? { active: fields.active } : {}),
  };
}

async function requireUser(db: Db, scimId: string): Promise<ScimUserRow> {
  const row = await store.findScimUser(db, scimId);
  if (!row) throw resourceNotFound('User', scimId);
  return row;
}

export async function getUser(db: Db, scimId: string, base: string) {
  return userResource(await requireUser(db, scimId), base);
}

export async function listUsers(db: Db, filter: Filter | undefined, page: { startIndex: number; count: number }, base: string) {
  const where = filter === undefined ? undefined : filterSql(filter, store.USER_FILTER);
  const { total, rows } = await store.listScimUsers(db, where, page.startIndex - 1, page.count);
  return { total, resources: rows.map((row) => userResource(row, base)) };
}

type Holder = Awaited<ReturnType<typeof store.holdersOf>>[number];

function clash(holder: Holder, fields: UserFields): Error {
  const byName = holder.userName !== null && holder.userName.toLowerCase() === fields.userName.toLowerCase();
  return uniqueness(
    byName ? `A user with userName "${fields.userName}" already exists.` : `A user with email "${fields.email}" already exists.`,
  );
}

/** After a write: the person's grants are read again here, and a deactivation ends their credentials everywhere. */
async function afterWrite(env: Env, userId: number, ended: Awaited<ReturnType<typeof credentialHashesOf>> | undefined): Promise<void> {
  if (ended) await revokeCredentials(env, userId, ended);
  else forgetUser(userId);
}

/** The statements that end a person's sessions and personal tokens, and their hashes to revoke after. */
async function endCredentials(db: Db, userId: number) {
  return {
    hashes: await credentialHashesOf(db, userId, { personalTokens: true }),
    statements: deleteCredentialStatements(db, userId, { personalTokens: true }),
  };
}

/**
 * Creates a person, or (with `assumeControlOfExisting`) takes over the one person who already
 * holds this userName or email and was not provisioned: 201 and the User either way.
 */
export async function createUser(env: Env, db: Db, fields: UserFields, settings: ScimSettings, base: string) {
  const holders = await store.holdersOf(db, fields);
  const now = new Date().toISOString();
  if (holders.length > 0) {
    const [holder] = holders;
    const claimable =
      settings.assumeControlOfExisting && holders.length === 1 && holder!.scimId === null && !holder!.isService && !holder!.isSystem;
    if (!claimable) throw clash(holder!, fields);
    const scimId = crypto.randomUUID();
    const ended = fields.active ? undefined : await endCredentials(db, holder!.id);
    await runBatch(db, [
      store.updateUserStatement(db, holder!.id, fields, now, { scimId }),
      ...(ended?.statements ?? []),
      auditEvent(db, SCIM_ACTOR, {
        type: 'user-updated',
        data: auditData(holder!.id, fields),
        preData: auditData(holder!.id, { userName: holder!.userName ?? '', name: holder!.name, email: holder!.email }),
      }),
    ]);
    await afterWrite(env, holder!.id, ended?.hashes);
    return userResource((await store.findScimUser(db, scimId))!, base);
  }
  const role = await findRootRole(db, DEFAULT_ROOT_ROLE);
  if (!role) throw new Error('the Viewer root role is missing');
  for (let attempt = 0; ; attempt++) {
    const user = { id: await store.nextUserId(db), scimId: crypto.randomUUID(), createdAt: now };
    try {
      await runBatch(db, [
        ...store.insertUserStatements(db, user, fields, role.id, SCIM_ACTOR),
        auditEvent(db, SCIM_ACTOR, { type: 'user-created', data: { ...auditData(user.id, fields), rootRole: role.id } }),
      ]);
      return userResource((await store.findScimUser(db, user.scimId))!, base);
    } catch (error) {
      // Someone took the name or address since we looked: the client hears 409, as it would have.
      if (isUniqueViolation(error, 'users.email') || isUniqueViolation(error, 'users.username')) {
        throw uniqueness(`A user with userName "${fields.userName}" or email "${fields.email}" already exists.`);
      }
      if (!isUniqueViolation(error, 'users.id') || attempt >= 4) throw error;
    }
  }
}

/** Writes new fields of a provisioned person (PUT, PATCH); a change to inactive ends every credential of theirs. */
async function saveUser(env: Env, db: Db, row: ScimUserRow, fields: UserFields, base: string) {
  const before = fieldsOfRow(row);
  const others = await store.holdersOf(db, fields, row.id);
  if (others.length > 0) throw clash(others[0]!, fields);
  const now = new Date().toISOString();
  const deactivating = before.active && !fields.active;
  const ended = deactivating ? await endCredentials(db, row.id) : undefined;
  const statements: Statement[] = [
    store.updateUserStatement(db, row.id, fields, now),
    ...(ended?.statements ?? []),
    auditEvent(db, SCIM_ACTOR, { type: 'user-updated', data: auditData(row.id, fields), preData: auditData(row.id, before) }),
  ];
  try {
    await runBatch(db, statements);
  } catch (error) {
    if (isUniqueViolation(error, 'users.email') || isUniqueViolation(error, 'users.username')) {
      throw uniqueness(`A user with userName "${fields.userName}" or email "${fields.email}" already exists.`);
    }
    throw error;
  }
  await afterWrite(env, row.id, ended?.hashes);
  return userResource(
    {
      ...row,
      ...{ userName: fields.userName, externalId: fields.externalId, name: fields.name, email: fields.email },
      deletedAt: fields.active ? null : now,
      updatedAt: now,
    },
    base,
  );
}

export async function replaceUser(env: Env, db: Db, scimId: string, fields: UserFields, base: string) {
  return saveUser(env, db, await requireUser(db, scimId), fields, base);
}

export async function patchUser(env: Env, db: Db, scimId: string, operations: readonly PatchOperation[], base: string) {
  const row = await requireUser(db, scimId);
  return saveUser(env, db, row, applyUserPatch(fieldsOfRow(row), operations), base);
}

/** Deletes a person as the admin API does (their identity scrubbed, `user-deleted`); their credentials end. */
export async function deleteUser(env: Env, db: Db, scimId: string): Promise<void> {
  const row = await requireUser(db, scimId);
  const ended = await endCredentials(db, row.id);
  await runBatch(db, [
    ...store.softDeleteStatements(db, row.id, new Date().toISOString()),
    forgetPasswordsStatement(db, row.id),
    ...ended.statements,
    auditEvent(db, SCIM_ACTOR, { type: 'user-deleted', preData: auditData(row.id, fieldsOfRow(row)) }),
  ]);
  await afterWrite(env, row.id, ended.hashes);
}
