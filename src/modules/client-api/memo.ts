/**
 * Repeated `GET /api/client/features` polls answered before the request path runs.
 *
 * A backend SDK sends the same request every few seconds: same key, same query, same spec
 * header. Once the full path has answered it, the answer is kept here under those raw facts,
 * and the next identical request is answered from it at the top of `fetch` — no URL parsing,
 * D1 session, routing, key lookup or query validation — for as long as the full path would
 * give the same answer:
 *
 * - the data revision is the one the answer was built at, and the isolate would not read the
 *   revision again yet (`revisionIfFresh`: the tick has not passed and this isolate has not
 *   written since), so read-your-writes and the revision tick hold as before;
 * - the isolate still trusts the key's record without looking it up (`trustedUntil`, at most
 *   ISOLATE_CACHE_TTL_MS) and has not forgotten any credential since (a revocation or expiry
 *   change in this isolate takes effect at once, as before), and the token has not expired;
 * - the request sends no D1 bookmark (those take the full path, which honours it).
 *
 * Only answers the full path gave are kept (errors never are), so a memo answers exactly what
 * that path would. The last-seen time of the token is still recorded (once a minute). Raw keys
 * are held as map keys no longer than the isolate trusts their record, as in key-hashes.ts.
 */
import { keyFromHeader, SEEN_AT_INTERVAL_MS, touchSeenAt } from '../../auth/authenticate';
import { rememberedHashOfKey } from '../../auth/key-hashes';
import type { ApiTokenRecord } from '../../auth/principal';
import { credentialGeneration, trustedUntil } from '../../auth/token-records';
import { BOOKMARK_HEADER } from '../../db/sessions';
import type { Env } from '../../env';
import { empty } from '../../http/responses';
import { revisionIfFresh } from './snapshot';

export const FEATURES_PATH = '/api/client/features';
const QUESTION_MARK = 0x3f;
const MAX_MEMOS = 1_000;
/** Distinct (query, spec header) answers kept per key; an SDK polls with one. */
const MAX_PER_KEY = 8;
// Bodies are shared with the response cache of routes.ts; the bound keeps memos from holding
// on to many bodies that cache has let go of.
const MAX_MEMO_BYTES = 16_000_000;
const JSON_TYPE = 'application/json; charset=utf-8';

interface Memo {
  query: string;
  spec: string | null;
  etag: string;
  body: Uint8Array;
  revision: number;
  tokenId: string | null;
  /** When the token expires (ms), Infinity for never. */
  expiresAt: number;
  /** When the isolate stops trusting the key's record (ms). */
  until: number;
  generation: number;
  /** When to record the token's last use again (the record itself is written at most once a minute). */
  touchAt: number;
  /** Response options, made once: a poll allocates as little as the runtime lets it. */
  ok: ResponseInit;
  notModified: ResponseInit;
}

// By the raw Authorization header, then the (query, spec header) pairs asked with it.
const memos = new Map<string, Memo[]>();
let memoCount = 0;
let memoBytes = 0;
let hits = 0;

/** Strong ETag match; tolerates `W/` and lists, since proxies weaken tags they compress. */
function etagMatches(header: string | null, etag: string): boolean {
  if (!header) return false;
  if (header === etag) return true;
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

/** The client API's answer: 304 with the ETag when the SDK has this one (RFC 9110), else the body. */
export function featuresResponse(ifNoneMatch: string | null, etag: string, body: Uint8Array): Response {
  if (etagMatches(ifNoneMatch, etag)) return empty(304, { etag });
  return new Response(body, { headers: { 'content-type': JSON_TYPE, etag } });
}

/** Where the query of `GET /api/client/features[?…]` starts in the URL, or -1 for any other URL. */
function queryStart(url: string): number {
  const pathStart = url.indexOf('/', url.indexOf('://') + 3);
  if (pathStart < 0 || !url.startsWith(FEATURES_PATH, pathStart)) return -1;
  const end = pathStart + FEATURES_PATH.length;
  return end === url.length || url.charCodeAt(end) === QUESTION_MARK ? end : -1;
}

function forgetKey(authorization: string): void {
  for (const memo of memos.get(authorization) ?? []) {
    memoCount--;
    memoBytes -= memo.body.byteLength;
  }
  memos.delete(authorization);
}

function forgetAt(authorization: string, list: Memo[], index: number): void {
  const [memo] = list.splice(index, 1);
  memoCount--;
  memoBytes -= memo!.body.byteLength;
  if (list.length === 0) memos.delete(authorization);
}

/** The kept answer to this request, or null when the full path must answer it. */
export function answerFromMemo(request: Request, env: Env, ctx: ExecutionContext): Response | null {
  if (memoCount === 0) return null;
  const url = request.url;
  const start = queryStart(url);
  if (start < 0 || request.method !== 'GET') return null;
  const headers = request.headers;
  const authorization = headers.get('authorization');
  if (authorization === null) return null;
  const list = memos.get(authorization);
  if (list === undefined || headers.has(BOOKMARK_HEADER)) return null;
  const spec = headers.get('unleash-client-spec');
  // Compared in place: a poll allocates as little as it can (less for the GC to do).
  const queryLength = url.length - start;
  let index = 0;
  while (index < list.length && !(list[index]!.spec === spec && list[index]!.query.length === queryLength && url.startsWith(list[index]!.query, start))) index++;
  if (index === list.length) return null;
  const memo = list[index]!;
  const now = Date.now();
  if (now >= memo.until || now >= memo.expiresAt || memo.generation !== credentialGeneration() || memo.revision !== revisionIfFresh(env, now)) {
    forgetAt(authorization, list, index);
    return null;
  }
  if (memo.tokenId !== null && now >= memo.touchAt) {
    memo.touchAt = now + SEEN_AT_INTERVAL_MS;
    touchSeenAt(env, ctx, 'apikey', memo.tokenId);
  }
  hits++;
  return etagMatches(headers.get('if-none-match'), memo.etag) ? new Response(null, memo.notModified) : new Response(memo.body, memo.ok);
}

/** Keeps the full path's answer to a request, for the identical requests that follow. */
export function rememberAnswer(request: Request, token: ApiTokenRecord, answer: { etag: string; body: Uint8Array; revision: number }): void {
  const url = request.url;
  const start = queryStart(url);
  const authorization = request.headers.get('authorization');
  if (start < 0 || authorization === null || request.headers.has(BOOKMARK_HEADER)) return;
  const raw = keyFromHeader(request);
  const hash = raw === null ? undefined : rememberedHashOfKey(raw);
  const until = hash === undefined ? 0 : trustedUntil('apikey', hash);
  const bytes = answer.body.byteLength;
  if (until === 0 || bytes > MAX_MEMO_BYTES) return;
  const query = url.slice(start);
  const spec = request.headers.get('unleash-client-spec');
  // Kept in insertion order: a key asked again moves to the end, the oldest key goes first.
  const list = memos.get(authorization) ?? [];
  memos.delete(authorization);
  const index = list.findIndex((memo) => memo.query === query && memo.spec === spec);
  if (index >= 0) forgetAt(authorization, list, index);
  else if (list.length >= MAX_PER_KEY) forgetAt(authorization, list, 0);
  while (memos.size > 0 && (memoCount >= MAX_MEMOS || memoBytes + bytes > MAX_MEMO_BYTES)) forgetKey(memos.keys().next().value!);
  list.push({
    query,
    spec,
    etag: answer.etag,
    body: answer.body,
    revision: answer.revision,
    tokenId: token.id,
    expiresAt: token.expiresAt === null ? Infinity : Date.parse(token.expiresAt),
    until,
    generation: credentialGeneration(),
    touchAt: Date.now() + SEEN_AT_INTERVAL_MS,
    ok: { headers: { 'content-type': JSON_TYPE, etag: answer.etag } },
    notModified: { status: 304, headers: { etag: answer.etag } },
  });
  memos.set(authorization, list);
  memoCount++;
  memoBytes += bytes;
}

/** How many answers are kept, and how many requests they answered (tests). */
export function memoStats(): { kept: number; hits: number } {
  return { kept: memoCount, hits };
}
