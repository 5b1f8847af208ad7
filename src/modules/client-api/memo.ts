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
import { keyFromHeader, touchSeenAt } from '../../auth/authenticate';
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
// Bodies are shared with the response cache of routes.ts; the bound keeps memos from holding
// on to many bodies that cache has let go of.
const MAX_MEMO_CHARS = 16_000_000;

interface Memo {
  etag: string;
  body: string;
  revision: number;
  tokenId: string | null;
  /** When the token expires (ms), Infinity for never. */
  expiresAt: number;
  /** When the isolate stops trusting the key's record (ms). */
  until: number;
  generation: number;
}

const memos = new Map<string, Memo>();
let memoChars = 0;
let hits = 0;

/** Strong ETag match; tolerates `W/` and lists, since proxies weaken tags they compress. */
function etagMatches(header: string | null, etag: string): boolean {
  if (!header) return false;
  if (header === etag) return true;
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

/** The client API's answer: 304 with the ETag when the SDK has this one (RFC 9110), else the body. */
export function featuresResponse(ifNoneMatch: string | null, etag: string, body: string): Response {
  if (etagMatches(ifNoneMatch, etag)) return empty(304, { etag });
  return new Response(body, { headers: { 'content-type': 'application/json; charset=utf-8', etag } });
}

/** Where the query of `GET /api/client/features[?…]` starts in the URL, or -1 for any other URL. */
function queryStart(url: string): number {
  const pathStart = url.indexOf('/', url.indexOf('://') + 3);
  if (pathStart < 0 || !url.startsWith(FEATURES_PATH, pathStart)) return -1;
  const end = pathStart + FEATURES_PATH.length;
  return end === url.length || url.charCodeAt(end) === QUESTION_MARK ? end : -1;
}

function memoKey(authorization: string, spec: string | null, query: string): string {
  return `${authorization}\u0000${spec ?? ''}\u0000${query}`;
}

function forget(key: string, memo: Memo): void {
  memos.delete(key);
  memoChars -= memo.body.length;
}

/** The kept answer to this request, or null when the full path must answer it. */
export function answerFromMemo(request: Request, env: Env, ctx: ExecutionContext): Response | null {
  if (memos.size === 0 || request.method !== 'GET') return null;
  const url = request.url;
  const start = queryStart(url);
  if (start < 0) return null;
  const headers = request.headers;
  const authorization = headers.get('authorization');
  if (authorization === null || headers.has(BOOKMARK_HEADER)) return null;
  const key = memoKey(authorization, headers.get('unleash-client-spec'), url.slice(start));
  const memo = memos.get(key);
  if (memo === undefined) return null;
  const now = Date.now();
  if (now >= memo.until || now >= memo.expiresAt || memo.generation !== credentialGeneration() || memo.revision !== revisionIfFresh(env, now)) {
    forget(key, memo);
    return null;
  }
  if (memo.tokenId !== null) touchSeenAt(env, ctx, 'apikey', memo.tokenId);
  hits++;
  return featuresResponse(headers.get('if-none-match'), memo.etag, memo.body);
}

/** Keeps the full path's answer to a request, for the identical requests that follow. */
export function rememberAnswer(request: Request, token: ApiTokenRecord, answer: { etag: string; body: string; revision: number }): void {
  const url = request.url;
  const start = queryStart(url);
  const authorization = request.headers.get('authorization');
  if (start < 0 || authorization === null || request.headers.has(BOOKMARK_HEADER)) return;
  const raw = keyFromHeader(request);
  const hash = raw === null ? undefined : rememberedHashOfKey(raw);
  const until = hash === undefined ? 0 : trustedUntil('apikey', hash);
  if (until === 0 || answer.body.length > MAX_MEMO_CHARS) return;
  const key = memoKey(authorization, request.headers.get('unleash-client-spec'), url.slice(start));
  const previous = memos.get(key);
  if (previous !== undefined) forget(key, previous);
  while (memos.size > 0 && (memos.size >= MAX_MEMOS || memoChars + answer.body.length > MAX_MEMO_CHARS)) {
    const [oldestKey, oldest] = memos.entries().next().value!;
    forget(oldestKey, oldest);
  }
  memos.set(key, {
    etag: answer.etag,
    body: answer.body,
    revision: answer.revision,
    tokenId: token.id,
    expiresAt: token.expiresAt === null ? Infinity : Date.parse(token.expiresAt),
    until,
    generation: credentialGeneration(),
  });
  memoChars += answer.body.length;
}

/** How many answers are kept, and how many requests they answered (tests). */
export function memoStats(): { kept: number; hits: number } {
  return { kept: memos.size, hits };
}
