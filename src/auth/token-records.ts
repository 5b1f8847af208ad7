/**
 * Where the record of a credential (API key, sign-in session, personal access token) lives:
 * a per-isolate cache, then KV, then D1 (the source of truth). All three kinds share the
 * rules below; docs/api-keys.md and docs/sessions.md give the timing of revocation.
 *
 * Revocation must win every race, so:
 * - every KV entry has a bounded lifetime (KV_TTL_SECONDS), whatever path wrote it;
 * - KV is only ever written from what D1 holds, and D1 is read again after the write: if the
 *   row has gone meanwhile (a concurrent revoke), the entry is deleted again;
 * - a revoke deletes D1 first, then KV, and fails loudly when KV cannot be emptied.
 */
import { and, eq, isNull } from 'drizzle-orm';
import type { Env } from '../env';
import { getDb } from '../db/client';
import { apiTokenProject, apiTokens, personalAccessTokens, sessions, users } from '../db/schema';
import { noteCredentialForgotten } from '../db/coherence';
import { BoundedMap } from '../lib/bounded-map';
import { log } from '../log';
import type { ApiTokenRecord, ApiTokenType } from './principal';
import { sha256Hex } from '../lib/encoding';

/** How long this isolate trusts what it learnt about a credential before asking KV again. */
export const ISOLATE_CACHE_TTL_MS = 10_000;
/** The longest any KV entry lives: bounds how long a stale entry can outlive its D1 row. */
export const KV_TTL_SECONDS = 300;
/** KV refuses expirations less than 60 s ahead. */
const KV_MIN_TTL_SECONDS = 60;
/** How many known and unknown credentials an isolate remembers (tests shrink them). */
export const isolateCacheLimits = { known: 10_000, unknown: 10_000 };
const KV_DELETE_ATTEMPTS = 3;

/** A user's credential: a sign-in session or a personal access token. */
export interface UserCredentialRecord {
  hash: string;
  /** Public id of the session (UUID) or the personal token (its number, as text). */
  id: string;
  userId: number;
  expiresAt: string;
}

interface Records {
  apikey: ApiTokenRecord;
  session: UserCredentialRecord;
  pat: UserCredentialRecord;
}
export type CredentialKind = keyof Records;
type AnyRecord = Records[CredentialKind];

interface KnownEntry {
  record: AnyRecord;
  until: number;
}

// Known and unknown credentials are cached apart, each bounded: a flood of random keys fills
// only the unknown cache and can never push a valid key out of the known one.
const known = new BoundedMap<string, KnownEntry>({
  get entries() {
    return isolateCacheLimits.known;
  },
});
const unknown = new BoundedMap<string, number>({
  get entries() {
    return isolateCacheLimits.unknown;
  },
});

function cacheKey(kind: CredentialKind, hash: string): string {
  return `${kind}:${hash}`;
}

/** The KV key of a credential. API keys keep their historical `apikey:` prefix. */
function kvKey(kind: CredentialKind, hash: string): string {
  return cacheKey(kind, hash);
}

function rememberKnown(kind: CredentialKind, record: AnyRecord): void {
  const key = cacheKey(kind, record.hash);
  unknown.delete(key);
  known.set(key, { record, until: Date.now() + ISOLATE_CACHE_TTL_MS });
}

function rememberUnknown(kind: CredentialKind, hash: string): void {
  unknown.set(cacheKey(kind, hash), Date.now() + ISOLATE_CACHE_TTL_MS);
}

/**
 * Until when (ms since the epoch) this isolate trusts a record it knows without looking it
 * up again; 0 when it does not know the credential. Whatever is kept on the strength of a
 * record (client-api/memo.ts) lives no longer than this.
 */
export function trustedUntil(kind: CredentialKind, hash: string): number {
  const entry = known.get(cacheKey(kind, hash));
  return entry !== undefined && entry.until > Date.now() ? entry.until : 0;
}

/** Forgets a credential in this isolate at once (revocation, expiry change). */
export function forgetInIsolate(kind: CredentialKind, hash: string): void {
  noteCredentialForgotten();
  known.delete(cacheKey(kind, hash));
  unknown.delete(cacheKey(kind, hash));
}

/**
 * When KV should drop an entry: never later than KV_TTL_SECONDS from now (so a stale entry
 * cannot live on), and a minute after the credential expires if that is sooner. Returns null
 * when the credential is already expired (nothing worth caching). Computing an absolute time
 * from a bounded TTL also keeps far-future expiries (past 2038) inside KV's 32-bit range.
 */
function kvExpiration(expiresAt: string | null, nowMs = Date.now()): number | null {
  const now = Math.floor(nowMs / 1000);
  let expiration = now + KV_TTL_SECONDS;
  if (expiresAt !== null) {
    const expiresMs = Date.parse(expiresAt);
    if (!(expiresMs > nowMs)) return null;
    expiration = Math.min(expiration, Math.floor(expiresMs / 1000) + 60);
  }
  return Math.max(expiration, now + KV_MIN_TTL_SECONDS);
}

async function readApiKey(env: Env, hash: string): Promise<ApiTokenRecord | null> {
  const db = getDb(env);
  const [token] = await db.select().from(apiTokens).where(eq(apiTokens.secretHash, hash)).limit(1);
  if (!token) return null;
  const projectRows = await db
    .select({ project: apiTokenProject.project })
    .from(apiTokenProject)
    .where(eq(apiTokenProject.secretHash, hash));
  return {
    hash,
    id: token.id,
    type: token.type as ApiTokenType,
    name: token.tokenName,
    projects: projectRows.length > 0 ? projectRows.map((row) => row.project) : ['*'],
    environment: token.environment,
    expiresAt: token.expiresAt,
  };
}

/** A session of a user that still exists (deleted users' credentials read as unknown). */
async function readSession(env: Env, hash: string): Promise<UserCredentialRecord | null> {
  const [row] = await getDb(env)
    .select({ id: sessions.id, userId: sessions.userId, expiresAt: sessions.expiresAt })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.idHash, hash), isNull(users.deletedAt)))
    .limit(1);
  return row ? { hash, ...row } : null;
}

async function readPersonalToken(env: Env, hash: string): Promise<UserCredentialRecord | null> {
  const [row] = await getDb(env)
    .select({ id: personalAccessTokens.id, userId: personalAccessTokens.userId, expiresAt: personalAccessTokens.expiresAt })
    .from(personalAccessTokens)
    .innerJoin(users, eq(users.id, personalAccessTokens.userId))
    .where(and(eq(personalAccessTokens.secretHash, hash), isNull(users.deletedAt)))
    .limit(1);
  return row ? { hash, id: String(row.id), userId: row.userId, expiresAt: row.expiresAt } : null;
}

const readers: { [K in CredentialKind]: (env: Env, hash: string) => Promise<Records[K] | null> } = {
  apikey: readApiKey,
  session: readSession,
  pat: readPersonalToken,
};

/** The credential as D1 holds it now, or null. */
function readFromD1<K extends CredentialKind>(env: Env, kind: K, hash: string): Promise<Records[K] | null> {
  return readers[kind](env, hash);
}

async function deleteFromKv(env: Env, kind: CredentialKind, hash: string): Promise<void> {
  let lastError: unknown;
  for (let attempt = 0; attempt < KV_DELETE_ATTEMPTS; attempt++) {
    try {
      await env.TOKENS.delete(kvKey(kind, hash));
      return;
    } catch (error) {
      lastError = error;
    }
  }
  throw new Error(`KV delete of a revoked ${kind} failed ${KV_DELETE_ATTEMPTS} times`, { cause: lastError });
}

/**
 * Writes `record` (just read from D1) to KV with a bounded lifetime, then reads D1 again: if
 * the row is gone (revoked while we wrote), the entry is deleted again, so a write can never
 * resurrect a revoked credential for longer than this call.
 */
async function putChecked<K extends CredentialKind>(env: Env, kind: K, record: Records[K]): Promise<void> {
  const expiration = kvExpiration(record.expiresAt);
  // Expired: nothing worth caching, and an older entry must not keep an earlier expiry alive.
  if (expiration === null) return deleteFromKv(env, kind, record.hash);
  await env.TOKENS.put(kvKey(kind, record.hash), JSON.stringify(record), { expiration });
  if ((await readFromD1(env, kind, record.hash)) === null) await deleteFromKv(env, kind, record.hash);
}

/**
 * Brings KV in line with D1 after a write (creation, expiry change): the entry is written
 * from what D1 now holds, or deleted when D1 holds nothing. This isolate forgets the
 * credential so its next request reads the new state.
 */
export async function syncFromD1(env: Env, kind: CredentialKind, hash: string): Promise<void> {
  forgetInIsolate(kind, hash);
  const record = await readFromD1(env, kind, hash);
  if (record === null) await deleteFromKv(env, kind, hash);
  else await putChecked(env, kind, record);
}

/**
 * Ends a credential in KV and this isolate; call it after its D1 row was deleted. Throws when
 * KV cannot be emptied, so the caller learns the revocation is not complete everywhere.
 */
export async function revokeCached(env: Env, kind: CredentialKind, hash: string): Promise<void> {
  forgetInIsolate(kind, hash);
  await deleteFromKv(env, kind, hash);
  forgetInIsolate(kind, hash);
}

// INIT_ADMIN_API_TOKENS: hashed once per isolate (and again if the variable changes).
let initTokens: { source: string; hashes: Map<string, string> } | undefined;

async function initTokenHashes(env: Env): Promise<Map<string, string>> {
  const source = env.INIT_ADMIN_API_TOKENS ?? '';
  if (initTokens?.source !== source) {
    const secrets = source
      .split(',')
      .map((secret) => secret.trim())
      .filter((secret) => secret.length > 0);
    const hashes = new Map<string, string>();
    for (const secret of secrets) hashes.set(await sha256Hex(secret), secret);
    initTokens = { source, hashes };
  }
  return initTokens.hashes;
}

function initRecord(hash: string): ApiTokenRecord {
  return { hash, id: null, type: 'admin', name: 'admin', projects: ['*'], environment: '*', expiresAt: null };
}

function isRecordOf(kind: CredentialKind, value: unknown, hash: string): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Partial<UserCredentialRecord & ApiTokenRecord>;
  if (record.hash !== hash) return false;
  return kind === 'apikey' ? typeof record.type === 'string' : typeof record.userId === 'number';
}

/**
 * Finds the record of a credential by its hash: isolate cache, INIT_ADMIN_API_TOKENS (API
 * keys), KV, then D1 (refilling KV in the background). Returns null for an unknown
 * credential; unknown answers are cached in the isolate too, so guessing does not reach D1
 * on every request.
 */
export async function findRecord<K extends CredentialKind>(
  env: Env,
  ctx: ExecutionContext,
  kind: K,
  hash: string,
): Promise<Records[K] | null> {
  const key = cacheKey(kind, hash);
  const now = Date.now();
  const cached = known.get(key);
  if (cached && cached.until > now) return cached.record as Records[K];
  if ((unknown.get(key) ?? 0) > now) return null;

  if (kind === 'apikey' && (await initTokenHashes(env)).has(hash)) {
    const record = initRecord(hash);
    rememberKnown(kind, record);
    return record as Records[K];
  }

  const stored = await env.TOKENS.get<unknown>(kvKey(kind, hash), 'json');
  let record = isRecordOf(kind, stored, hash) ? (stored as Records[K]) : null;
  if (!record) {
    record = await readFromD1(env, kind, hash);
    if (record) {
      const refill = record;
      ctx.waitUntil(putChecked(env, kind, refill).catch((error: unknown) => log.warn('KV refill failed', { kind, id: refill.id, error })));
    }
  }
  if (record) rememberKnown(kind, record);
  else rememberUnknown(kind, hash);
  return record;
}
