/**
 * Personal access tokens: a user's own API credentials, acting with the user's permissions.
 * The secret (`user:<56 hex>`) is shown once, in the create answer; D1 and KV hold its hash.
 */
import type { Env } from '../../env';
import type { Db } from '../../db/client';
import { formatPersonalTokenSecret } from '../../auth/credentials';
import { sha256Hex } from '../../lib/encoding';
import { revokeCached, syncFromD1 } from '../../auth/token-records';
import { ApiError, badRequest, notFound } from '../../http/errors';
import { log } from '../../log';
import type { CreatePersonalTokenRequest } from './schema';
import * as store from './store';

/** Unleash 6.10.1 refuses an eleventh token per user. */
export const MAX_TOKENS_PER_USER = 10;

export async function listTokens(db: Db, userId: number) {
  return { pats: await store.listOfUser(db, userId) };
}

export async function createToken(env: Env, db: Db, userId: number, body: CreatePersonalTokenRequest) {
  const description = body.description.trim();
  if (description === '') throw badRequest('PAT description cannot be empty.');
  if (Date.parse(body.expiresAt) <= Date.now()) throw badRequest('The expiry date should be in future.');
  if ((await store.countOfUser(db, userId)) >= MAX_TOKENS_PER_USER) {
    throw new ApiError(403, 'OperationDeniedError', `Too many PATs (${MAX_TOKENS_PER_USER}) already exist for this user.`);
  }
  if (await store.descriptionTaken(db, userId, description)) throw new ApiError(409, 'NameExistsError', 'PAT description already exists.');

  const secret = formatPersonalTokenSecret();
  const secretHash = await sha256Hex(secret);
  let row: store.PersonalTokenRow;
  try {
    row = await store.insert(db, { secretHash, description, userId, expiresAt: body.expiresAt, createdAt: new Date().toISOString() });
  } catch (error) {
    // A concurrent create with the same description lost the race on the unique index.
    if (String((error as Error)?.cause ?? error).includes('UNIQUE'))
      throw new ApiError(409, 'NameExistsError', 'PAT description already exists.');
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
export async function deleteToken(env: Env, db: Db, userId: number, id: number): Promise<void> {
  const token = await store.findOfUser(db, userId, id);
  if (!token) throw notFound('No PAT found.');
  await store.remove(db, userId, id);
  await revokeCached(env, 'pat', token.secretHash);
}
