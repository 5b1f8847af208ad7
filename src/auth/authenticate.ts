import type { Env } from '../env';
import { authenticationRequired, type LoginHints } from '../http/errors';
import { getDb, runBatch } from '../db/client';
import { apiTokens, personalAccessTokens } from '../db/schema';
import { eq, inArray } from 'drizzle-orm';
import { log } from '../log';
import { principalFor, type ApiTokenRecord, type Principal, type UserPrincipal } from './principal';
import { sha256Hex } from '../lib/encoding';
import { digestsEqual } from './secrets';
import { findRecord, type UserCredentialRecord } from './token-records';
import { userPrincipalFor } from './user-principal';
import { PERSONAL_TOKEN_PREFIX, sessionIdFromRequest } from './credentials';
import { hashOfKey } from './key-hashes';

/**
 * How a person signs in besides a key, a token or a session: Cloudflare Access's signed
 * assertion, and the single sign-on buttons the login page shows. Both belong to the identity
 * wing (src/identity/sso: settings, provisioning); src/app.ts hands them to register(), which
 * hands them here, so src/auth depends on no module.
 */
export interface PersonSignIn {
  /** The person the request's Cloudflare Access assertion names; null when there is none. */
  accessPrincipal(request: Request, env: Env): Promise<UserPrincipal | null>;
  /** What the 401 that sends the UI to its login page lists. */
  loginHints(env: Env): Promise<LoginHints>;
}

/** Longest key we hash; anything longer cannot be one of ours. */
export const MAX_KEY_LENGTH = 1024;
/** How often a token's last use is written, at most (per token and isolate). */
export const SEEN_AT_INTERVAL_MS = 60_000;
const lastSeenWrite = new Map<string, number>();

/** The key from `Authorization`, raw or as `Bearer <key>`; null when there is none. */
export function keyFromHeader(request: Request): string | null {
  const header = request.headers.get('authorization');
  if (header === null) return null;
  const key = header
    .trim()
    .replace(/^bearer\s+/i, '')
    .trim();
  return key === '' ? null : key;
}

/** Records when a token was last used, at most once a minute per token and isolate. */
export function touchSeenAt(env: Env, ctx: ExecutionContext, kind: 'apikey' | 'pat', tokenId: string): void {
  const now = Date.now();
  const key = `${kind}:${tokenId}`;
  if ((lastSeenWrite.get(key) ?? 0) > now - SEEN_AT_INTERVAL_MS) return;
  if (lastSeenWrite.size >= 10_000) lastSeenWrite.clear();
  lastSeenWrite.set(key, now);
  const seenAt = new Date(now).toISOString();
  const db = getDb(env);
  const update =
    kind === 'apikey'
      ? db.update(apiTokens).set({ seenAt }).where(eq(apiTokens.id, tokenId))
      : db
          .update(personalAccessTokens)
          .set({ seenAt })
          .where(eq(personalAccessTokens.id, Number(tokenId)));
  ctx.waitUntil(
    update
      .run()
      .then(() => undefined)
      .catch((error: unknown) => log.warn('seenAt update failed', { kind, tokenId, error })),
  );
}

/** SQLite's bound on one statement's parameters, with room for `seen_at`. */
const SEEN_HASHES_PER_STATEMENT = 90;

/**
 * Unleash 8's `seenTokens` (bulk metrics from Edge): keys its SDKs used that never reached us.
 * Each one we hold is marked used now, as a request with it would be; any other is ignored.
 * Only their hashes reach D1, and nothing is remembered of the raw keys.
 */
export async function markKeysSeen(env: Env, keys: readonly string[]): Promise<void> {
  const wellFormed = [...new Set(keys)].filter((key) => key.length > 0 && key.length <= MAX_KEY_LENGTH && key.isWellFormed());
  if (wellFormed.length === 0) return;
  const hashes = await Promise.all(wellFormed.map((key) => sha256Hex(key)));
  const seenAt = new Date().toISOString();
  const db = getDb(env);
  const statements = [];
  for (let i = 0; i < hashes.length; i += SEEN_HASHES_PER_STATEMENT) {
    const run = hashes.slice(i, i + SEEN_HASHES_PER_STATEMENT);
    statements.push(db.update(apiTokens).set({ seenAt }).where(inArray(apiTokens.secretHash, run)));
  }
  await runBatch(db, statements);
}

function isLive(record: { expiresAt: string | null }): boolean {
  return record.expiresAt === null || Date.parse(record.expiresAt) > Date.now();
}

async function userCredential(
  env: Env,
  ctx: ExecutionContext,
  kind: 'session' | 'pat',
  hash: string,
): Promise<UserCredentialRecord | null> {
  const record = await findRecord(env, ctx, kind, hash);
  if (!record || !digestsEqual(record.hash, hash) || !isLive(record)) return null;
  return record;
}

/** The 401 that sends the UI to its login page, listing the single sign-on buttons it should show. */
async function signInRequired(env: Env, signIn: PersonSignIn): Promise<Error> {
  return authenticationRequired(false, await signIn.loginHints(env));
}

/**
 * The caller of a request -> principal. `Authorization` carries an API key or a personal
 * access token (`user:<hex>`); without it, the `unleash-session` cookie is tried. 401
 * AuthenticationRequired when the credential is missing, unknown or expired: a bad key gets
 * the short message, a missing or bad session gets Unleash's login hint (the UI shows its
 * login page on it). Which principals may use which API is the route guard's business.
 */
export async function authenticate(request: Request, env: Env, ctx: ExecutionContext, signIn: PersonSignIn): Promise<Principal> {
  const key = keyFromHeader(request);
  if (key === null) {
    // Behind Cloudflare Access (when configured), its signed assertion names the person.
    const viaAccess = await signIn.accessPrincipal(request, env);
    if (viaAccess) return viaAccess;
    const sessionId = sessionIdFromRequest(request);
    if (sessionId === null) throw await signInRequired(env, signIn);
    const record = await userCredential(env, ctx, 'session', await sha256Hex(sessionId));
    const principal = record && (await userPrincipalFor(env, record, 'session'));
    if (!principal) throw await signInRequired(env, signIn);
    return principal;
  }
  if (key.length > MAX_KEY_LENGTH || !key.isWellFormed()) throw authenticationRequired(true);
  const hash = await hashOfKey(key);

  if (key.startsWith(PERSONAL_TOKEN_PREFIX)) {
    const record = await userCredential(env, ctx, 'pat', hash);
    const principal = record && (await userPrincipalFor(env, record, 'personal-token'));
    if (!principal) throw authenticationRequired(true);
    touchSeenAt(env, ctx, 'pat', record.id);
    return principal;
  }

  const record = await apiKeyRecord(env, ctx, hash);
  if (!record) throw authenticationRequired(true);
  return principalFor(record);
}

/**
 * The record of a live API key by the hash of its secret, or null (unknown, revoked, expired);
 * its last use is recorded. The one check every way in shares (HTTP, the binding).
 */
export async function apiKeyRecord(env: Env, ctx: ExecutionContext, hash: string): Promise<ApiTokenRecord | null> {
  const record = await findRecord(env, ctx, 'apikey', hash);
  if (!record || !digestsEqual(record.hash, hash) || !isLive(record)) return null;
  if (record.id !== null) touchSeenAt(env, ctx, 'apikey', record.id);
  return record;
}
