/**
 * Where an API key's record lives: a per-isolate cache, then KV, then D1 (the source of
 * truth). See docs/api-keys.md for the timing of revocation.
 */
import { eq } from 'drizzle-orm';
import type { Env } from '../env';
import { getDb } from '../db/client';
import { apiTokenProject, apiTokens } from '../db/schema';
import { log } from '../log';
import type { ApiTokenRecord, ApiTokenType } from './principal';
import { sha256Hex } from './secrets';

/** How long this isolate trusts what it learnt about a key before asking KV again. */
export const ISOLATE_CACHE_TTL_MS = 10_000;
const ISOLATE_CACHE_MAX_ENTRIES = 10_000;

interface CacheEntry {
  record: ApiTokenRecord | null;
  until: number;
}

const isolateCache = new Map<string, CacheEntry>();

export function kvKey(hash: string): string {
  return `apikey:${hash}`;
}

function remember(hash: string, record: ApiTokenRecord | null): void {
  if (isolateCache.size >= ISOLATE_CACHE_MAX_ENTRIES) {
    // Maps iterate in insertion order: drop the oldest entry.
    const oldest = isolateCache.keys().next().value;
    if (oldest !== undefined) isolateCache.delete(oldest);
  }
  isolateCache.set(hash, { record, until: Date.now() + ISOLATE_CACHE_TTL_MS });
}

/** Forgets a key in this isolate at once (revocation, expiry change). */
export function forgetInIsolate(hash: string): void {
  isolateCache.delete(hash);
}

/** Writes a token's record to KV; KV drops it by itself a minute after it expires. */
export async function putRecord(env: Env, record: ApiTokenRecord): Promise<void> {
  const options: KVNamespacePutOptions = {};
  if (record.expiresAt) {
    const expiration = Math.floor(Date.parse(record.expiresAt) / 1000) + 60;
    // KV refuses expirations less than 60 s ahead; such a token is checked for expiry anyway.
    if (expiration > Date.now() / 1000 + 60) options.expiration = expiration;
  }
  await env.TOKENS.put(kvKey(record.hash), JSON.stringify(record), options);
}

export async function deleteRecord(env: Env, hash: string): Promise<void> {
  forgetInIsolate(hash);
  await env.TOKENS.delete(kvKey(hash));
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

async function readFromD1(env: Env, hash: string): Promise<ApiTokenRecord | null> {
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

/**
 * Finds the record of a key by its hash: isolate cache, INIT_ADMIN_API_TOKENS, KV, then D1
 * (refilling KV in the background). Returns null for an unknown key; negative answers are
 * cached in the isolate too, so guessing keys does not reach D1 on every request.
 */
export async function findRecord(env: Env, ctx: ExecutionContext, hash: string): Promise<ApiTokenRecord | null> {
  const cached = isolateCache.get(hash);
  if (cached && cached.until > Date.now()) return cached.record;

  if ((await initTokenHashes(env)).has(hash)) {
    const record = initRecord(hash);
    remember(hash, record);
    return record;
  }

  let record = await env.TOKENS.get<ApiTokenRecord>(kvKey(hash), 'json');
  if (!record) {
    record = await readFromD1(env, hash);
    if (record) {
      const refill = record;
      ctx.waitUntil(
        putRecord(env, refill).catch((error: unknown) => log.warn('KV refill failed', { tokenId: refill.id, error })),
      );
    }
  }
  remember(hash, record);
  return record;
}
