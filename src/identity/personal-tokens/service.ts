/**
 * Personal access tokens: API credentials of a person, or of a service account, acting with
 * that user's permissions. The secret (`user:<56 hex>`) is shown once, in the create answer;
 * D1 and KV hold its hash, and the audit events never carry it.
 */
import type { Env } from '../../env';
import type { Db } from '../../db/client';
import { auditEvent, type Actor } from '../../db/events';
import { isUniqueViolation } from '../../db/lookups';
import { formatPersonalTokenSecret } from '../../auth/credentials';
import { sha256Hex } from '../../lib/encoding';
import { revokeCached, syncFromD1 } from '../../auth/token-records';
import { ApiError, badRequest, notFound } from '../../http/errors';
import { log } from '../../log';
import type { CreatePersonalTokenRequest } from './schema';
import * as store from './store';

/** Unleash 6.10.1 refuses an eleventh token per user (service accounts included). */
const MAX_TOKENS_PER_USER = 10;

const descriptionTaken = () => new ApiError(409, 'NameExistsError', 'PAT description already exists.');

export async function listTokens(db: Db, userId: number) {
  return { pats: await store.listOfUsers(db, [userId]) };
}

/** The tokens of several users (service accounts listed together), oldest first. */
export function tokensOfUsers(db: Db, userIds: readonly number[]) {
  return store.listOfUsers(db, userIds);
}

/** Creates a token of `userId` on behalf of `actor` (the user itself, or an admin for a service account). */
export async function createToken(env: Env, db: Db, actor: Actor, userId: number, body: CreatePersonalTokenRequest) {
  const description = body.description.trim();
  if (description === '') throw badRequest('PAT description cannot be empty.');
  if (Date.parse(body.expiresAt) <= Date.now()) throw badRequest('The expiry date should be in future.');
  if ((await store.countOfUser(db, userId)) >= MAX_TOKENS_PER_USER) {
    throw new ApiError(403, 'OperationDeniedError', `Too many PATs (${MAX_TOKENS_PER_USER}) already exist for this user.`);
  }
  if (await store.descriptionTaken(db, userId, description)) throw descriptionTaken();

  const secret = formatPersonalTokenSecret();
  const secretHash = await sha256Hex(secret);
  let row: store.PersonalTokenRow;
  try {
    const [inserted] = await db.batch([
      store.insertStatement(db, { secretHash, description, userId, expiresAt: body.expiresAt, createdAt: new Date().toISOString() }),
      auditEvent(db, actor, { type: 'pat-created', data: { description, expiresAt: body.expiresAt, secret: '***' } }),
    ]);
    row = inserted[0]!;
  } catch (error) {
    // A concurrent create with the same description lost the race on the unique index.
    if (isUniqueViolation(error, 'personal_access_tokens')) throw descriptionTaken();
    throw error;
  }
  try {
    await syncFromD1(env, 'pat', secretHash);
  } catch (error) {
    log.warn('KV write for a personal access token failed; D1 fallback will serve it', { id: row.id, error });
  }
  return { ...row, secret };
}

/** Revoked at once: D1 first, then KV and this isolate (loudly, if KV cannot be emptied). */
export async function deleteToken(env: Env, db: Db, actor: Actor, userId: number, id: number): Promise<void> {
  const token = await store.findOfUser(db, userId, id);
  if (!token) throw notFound('No PAT found.');
  const { secretHash, ...shown } = token;
  await db.batch([
    store.removeStatement(db, userId, id),
    auditEvent(db, actor, { type: 'pat-deleted', data: { ...shown, secret: '***' } }),
  ]);
  await revokeCached(env, 'pat', secretHash);
}
