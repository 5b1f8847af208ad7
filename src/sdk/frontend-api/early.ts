/**
 * `GET /api/frontend` answered before the request path runs, for a key the isolate already
 * trusts, with a context it has never seen (client-api/memo.ts answers exact repeats; this
 * answers the rest of a busy site's browsers).
 *
 * The full path (routing, D1 session, key look-up) would only confirm what the isolate
 * already knows, so it is skipped under the memo's conditions:
 * - the key is still trusted without a look-up (auth/key-trust.ts, as for the memo); it is a
 *   frontend key (the full path saw it answered);
 * - the data revision is fresh (`revisionIfFresh`: the tick has not passed and this isolate has
 *   not written since) and the snapshot the full path last used for the key's environment is
 *   at that revision;
 * - the request is a GET of exactly `/api/frontend` with no D1 bookmark.
 * The answer is then what the handler gives (the same function makes it), with the CORS
 * headers the route adds; the last-seen time of the token is still recorded once a minute.
 */
import { stillTrusted, touchIfDue, trustKey, type KeyTrust } from '../../auth/key-trust';
import type { ApiTokenRecord } from '../../auth/principal';
import { revisionIfFresh } from '../../db/coherence';
import { BOOKMARK_HEADER } from '../../db/sessions';
import type { Env } from '../../env';
import { BoundedMap } from '../../lib/bounded-map';
import type { Snapshot } from '../client-api/snapshot';
import { environmentOf } from '../client-api/token-environment';
import { FRONTEND_PATH } from '../client-api/poll-paths';

const QUESTION_MARK = 0x3f;

interface TrustedKey {
  token: ApiTokenRecord;
  trust: KeyTrust;
}

/** By raw Authorization header, held no longer than the isolate trusts the key's record. */
const keys = new BoundedMap<string, TrustedKey>({ entries: 1_000 });
/** The snapshot the full path last answered from, per environment. */
const snapshots = new Map<string, Snapshot>();

/** Called by the full path after it authenticated a frontend key and took its snapshot. */
export function rememberFrontendKey(request: Request, token: ApiTokenRecord, snapshot: Snapshot): void {
  if (snapshots.get(snapshot.environment) !== snapshot) {
    if (snapshots.size >= 32) snapshots.clear();
    snapshots.set(snapshot.environment, snapshot);
  }
  const authorization = request.headers.get('authorization');
  if (authorization === null || keys.has(authorization)) return;
  const trust = trustKey(request, token);
  if (trust === undefined) return;
  keys.set(authorization, { token, trust });
}

/**
 * The token and snapshot to answer this request with before routing, or null when the full
 * path must answer it.
 */
export function earlyFrontendRequest(
  request: Request,
  env: Env,
  ctx: ExecutionContext,
): { token: ApiTokenRecord; snapshot: Snapshot } | null {
  if (keys.size === 0 || request.method !== 'GET') return null;
  const url = request.url;
  const pathStart = url.indexOf('/', url.indexOf('://') + 3);
  if (pathStart < 0 || !url.startsWith(FRONTEND_PATH, pathStart)) return null;
  const end = pathStart + FRONTEND_PATH.length;
  if (end !== url.length && url.charCodeAt(end) !== QUESTION_MARK) return null;
  const headers = request.headers;
  const authorization = headers.get('authorization');
  if (authorization === null) return null;
  const trusted = keys.get(authorization);
  if (trusted === undefined || headers.has(BOOKMARK_HEADER)) return null;
  const now = Date.now();
  if (!stillTrusted(trusted.trust, now)) {
    keys.delete(authorization);
    return null;
  }
  const revision = revisionIfFresh(env, now);
  const snapshot = revision < 0 ? undefined : snapshots.get(environmentOf(trusted.token));
  if (snapshot === undefined || snapshot.revision !== revision) return null;
  const token = trusted.token;
  hits++;
  touchIfDue(trusted.trust, now, env, ctx, token.id);
  return { token, snapshot };
}

let hits = 0;

/** How many requests were taken before routing (tests). */
export function earlyFrontendHits(): number {
  return hits;
}

/** Test hook: forget the keys and snapshots kept here. */
export function forgetEarlyFrontend(): void {
  keys.clear();
  snapshots.clear();
}
