import type { Env } from '../env';
import { authenticationRequired } from '../http/errors';
import { getDb } from '../db/client';
import { apiTokens } from '../db/schema';
import { eq } from 'drizzle-orm';
import { log } from '../log';
import { principalFor, type Principal } from './principal';
import { hashOfKey } from './key-hashes';
import { digestsEqual } from './secrets';
import { findRecord } from './token-records';

/** Longest key we hash; anything longer cannot be one of ours. */
const MAX_KEY_LENGTH = 1024;
const SEEN_AT_INTERVAL_MS = 60_000;
const lastSeenWrite = new Map<string, number>();

/** The key from `Authorization`, raw or as `Bearer <key>`; null when there is none. */
export function keyFromHeader(request: Request): string | null {
  const header = request.headers.get('authorization');
  if (header === null) return null;
  const key = header.trim().replace(/^bearer\s+/i, '').trim();
  return key === '' ? null : key;
}

/** Records when a token was last used, at most once a minute per token and isolate. */
function touchSeenAt(env: Env, ctx: ExecutionContext, tokenId: string): void {
  const now = Date.now();
  if ((lastSeenWrite.get(tokenId) ?? 0) > now - SEEN_AT_INTERVAL_MS) return;
  lastSeenWrite.set(tokenId, now);
  ctx.waitUntil(
    getDb(env)
      .update(apiTokens)
      .set({ seenAt: new Date(now).toISOString() })
      .where(eq(apiTokens.id, tokenId))
      .run()
      .then(() => undefined)
      .catch((error: unknown) => log.warn('seenAt update failed', { tokenId, error })),
  );
}

/**
 * Authorization header -> principal. 401 AuthenticationRequired when the key is missing,
 * unknown or expired. Which token types may use which API is the route guard's business.
 */
export async function authenticate(request: Request, env: Env, ctx: ExecutionContext): Promise<Principal> {
  const key = keyFromHeader(request);
  if (key === null) throw authenticationRequired(false);
  if (key.length > MAX_KEY_LENGTH || !key.isWellFormed()) throw authenticationRequired(true);

  const hash = await hashOfKey(key);
  const record = await findRecord(env, ctx, hash);
  if (!record || !digestsEqual(record.hash, hash)) throw authenticationRequired(true);
  if (record.expiresAt !== null && Date.parse(record.expiresAt) <= Date.now()) throw authenticationRequired(true);

  if (record.id !== null) touchSeenAt(env, ctx, record.id);
  return principalFor(record);
}
