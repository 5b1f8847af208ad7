/**
 * What an isolate keeps in Edge mode, in front of the sync object (sync.ts): which tokens are
 * valid (TOKEN_TTL_MS, so a token revoked upstream stops here within the sync interval plus
 * that), and the snapshot of each token scope, checked with the sync object at most once per
 * EDGE_CHECK_MS (a version compare; the text comes only when it moved).
 *
 * `snapshotForToken` is the one way in: "the snapshot for this token's scope". The HTTP routes
 * (routes.ts) use it, and so can anything else that answers flags in Edge mode.
 */
import type { Env } from '../env';
import { ApiError } from '../http/errors';
import { BoundedMap } from '../lib/bounded-map';
import { log } from '../log';
import type { Snapshot } from '../sdk/client-api/snapshot';
import { snapshotFromUpstream, scopeKey } from './snapshot-source';
import { kvKey, type StoredSnapshot } from './persisted';
import type { EdgeSync } from './sync';
import type { UpstreamToken } from './upstream';

const TOKEN_TTL_MS = 5_000;
const NEGATIVE_TTL_MS = 60_000;

interface TokenEntry {
  token: UpstreamToken | null;
  until: number;
}

interface SnapshotEntry {
  snapshot: Snapshot;
  version: string;
  checkedAt: number;
  confirmedAt: number;
  lastError: string | null;
}

const tokens = new BoundedMap<string, TokenEntry>({ entries: 10_000 });
const snapshots = new BoundedMap<string, SnapshotEntry>({ entries: 256 });
/** Questions to the sync object under way, per scope and token. */
const checks = new Map<string, Promise<ScopedSnapshot>>();

export function syncObject(env: Env): DurableObjectStub<EdgeSync> {
  if (!env.EDGE_SYNC || !env.EDGE_UPSTREAM_URL) throw new Error('Edge mode needs EDGE_SYNC and EDGE_UPSTREAM_URL');
  return env.EDGE_SYNC.get(env.EDGE_SYNC.idFromName(env.EDGE_UPSTREAM_URL.replace(/\/+$/, '')));
}

/** Whether a secret has Unleash's `<projects>:<environment>.<secret>` shape; Edge refuses others unchecked. */
export function wellFormedToken(secret: string): boolean {
  const colon = secret.indexOf(':');
  const dot = secret.indexOf('.', colon + 1);
  return colon > 0 && dot > colon + 1 && dot < secret.length - 1 && secret.length <= 512 && secret.isWellFormed();
}

/** A token this isolate already knows as valid, without waiting (the hot path). */
export function knownToken(secret: string): UpstreamToken | null | undefined {
  const entry = tokens.get(secret);
  if (!entry || entry.until < Date.now()) return undefined;
  return entry.token;
}

/** Whether this isolate has seen `secret` valid, even if that entry has expired since (rate limits never count it). */
export function seenValid(secret: string): boolean {
  return Boolean(tokens.get(secret)?.token);
}

function unavailable(reason: string): ApiError {
  return new ApiError(503, 'ServiceUnavailableError', `The upstream Unleash could not be reached: ${reason}`);
}

/** The upstream's view of a token: valid (with its scope) or null; throws 503 when it cannot be told. */
export async function tokenFor(env: Env, secret: string): Promise<UpstreamToken | null> {
  const known = knownToken(secret);
  if (known !== undefined) return known;
  const answer = await syncObject(env).validate(secret);
  if (answer.status === 'unavailable') {
    // A token once valid here keeps working while upstream cannot say otherwise.
    const stale = tokens.get(secret);
    if (stale?.token) return stale.token;
    throw unavailable(answer.reason);
  }
  const token = answer.status === 'valid' ? answer.token : null;
  tokens.set(secret, { token, until: Date.now() + (token ? TOKEN_TTL_MS : NEGATIVE_TTL_MS) });
  return token;
}

function forgetToken(secret: string): void {
  tokens.set(secret, { token: null, until: Date.now() + NEGATIVE_TTL_MS });
}

export interface ScopedSnapshot {
  snapshot: Snapshot;
  /** When the upstream last confirmed it (ms); older than an interval means upstream is not answering. */
  confirmedAt: number;
  lastError: string | null;
}

export function checkMs(env: Env): number {
  const value = Number(env.EDGE_CHECK_MS ?? '1000');
  return Number.isFinite(value) && value >= 0 ? value : 1000;
}

/**
 * The snapshot for a validated token's scope. A frontend token's answers come from a backend
 * scope covering it; the caller filters by the token's projects (evaluatorFor does).
 */
export async function snapshotForToken(env: Env, secret: string, token: UpstreamToken): Promise<ScopedSnapshot> {
  const key = `${token.type}|${scopeKey(token)}`;
  const cached = snapshots.get(key);
  if (cached && Date.now() - cached.checkedAt < checkMs(env)) return cached;
  // Callers with one token at once share one question: an isolate's open streams all wake on
  // one tick (sdk/client-api/streaming.ts), and would otherwise each ask the sync object.
  const asking = `${key}\u0000${secret}`;
  let check = checks.get(asking);
  if (!check) {
    check = askSyncObject(env, secret, token, key, cached).finally(() => checks.delete(asking));
    checks.set(asking, check);
  }
  return check;
}

async function askSyncObject(
  env: Env,
  secret: string,
  token: UpstreamToken,
  key: string,
  cached: SnapshotEntry | undefined,
): Promise<ScopedSnapshot> {
  const now = Date.now();
  let answer;
  try {
    answer = await syncObject(env).snapshot(secret, cached?.version ?? null);
  } catch (error) {
    // The sync object is out of reach: this isolate's copy, else the persisted one.
    log.warn('edge: sync object unreachable', { error: String(error) });
    const fallback = cached ?? (await persisted(env, token));
    if (fallback) return fallback;
    throw unavailable('the sync object did not answer');
  }
  if (answer.status === 'invalid') {
    forgetToken(secret);
    throw new ApiError(401, 'AuthenticationRequired', 'Unauthorized: the upstream Unleash does not accept this token.');
  }
  if (answer.status === 'no-scope') {
    throw new ApiError(
      511,
      'EdgeTokenScopeError',
      `No backend token of environment "${token.environment}" covering projects ${JSON.stringify(token.projects)} has been seen by this Edge: a frontend token is answered from such a scope (set EDGE_CLIENT_TOKENS).`,
    );
  }
  if (answer.status === 'unavailable') {
    if (cached) return cached;
    throw unavailable(answer.reason);
  }
  let entry: SnapshotEntry;
  if (answer.text !== undefined || !cached) {
    if (answer.text === undefined) throw unavailable('the sync object sent no snapshot');
    entry = {
      snapshot: snapshotFromUpstream(token, answer.text, answer.version),
      version: answer.version,
      checkedAt: now,
      confirmedAt: answer.confirmedAt,
      lastError: answer.lastError,
    };
  } else {
    entry = { ...cached, checkedAt: now, confirmedAt: answer.confirmedAt, lastError: answer.lastError };
  }
  snapshots.set(key, entry);
  return entry;
}

/** A backend scope's last good snapshot from KV (what a cold isolate serves when the sync object is out of reach). */
async function persisted(env: Env, token: UpstreamToken): Promise<SnapshotEntry | null> {
  if (token.type !== 'client' || !env.EDGE_SNAPSHOTS || !env.EDGE_UPSTREAM_URL) return null;
  const stored = await env.EDGE_SNAPSHOTS.get<StoredSnapshot>(kvKey(env.EDGE_UPSTREAM_URL.replace(/\/+$/, ''), scopeKey(token)), 'json');
  if (!stored) return null;
  return {
    snapshot: snapshotFromUpstream(token, stored.text, stored.version),
    version: stored.version,
    checkedAt: 0,
    confirmedAt: stored.confirmedAt,
    lastError: 'served from the persisted copy',
  };
}

/** Test hook: forget every token and snapshot this isolate holds. */
export function forgetEdgeCaches(): void {
  tokens.clear();
  snapshots.clear();
  checks.clear();
}
