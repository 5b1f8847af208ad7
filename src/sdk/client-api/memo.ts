/**
 * Repeated SDK polls answered before the request path runs: `GET /api/client/features` and
 * `GET /api/frontend`.
 *
 * An SDK sends the same request every few seconds: same key, same query, same headers. Once
 * the full path has answered it, the answer is kept here under those raw facts, and the next
 * identical request is answered from it at the top of `fetch` — no URL parsing, D1 session,
 * routing, key lookup, query validation or evaluation — for as long as the full path would
 * give the same answer:
 *
 * - the data revision is the one the answer was built at, and the isolate would not read the
 *   revision again yet (`revisionIfFresh`: the tick has not passed and this isolate has not
 *   written since), so read-your-writes and the revision tick hold as before;
 * - the key is still trusted without a look-up (auth/key-trust.ts: the isolate trusts its
 *   record, has forgotten no credential since, and the token has not expired);
 * - the request sends no D1 bookmark (those take the full path, which honours it);
 * - the other request facts the answer depends on are the same: the `Unleash-Client-Spec`
 *   header on the client API; the caller's address (the context's `remoteAddress`) and
 *   `Origin` (CORS) on the frontend API, which keeps only answers that are a function of the
 *   query, once the same poll has come twice (frontend-api/routes.ts).
 *
 * Only answers the full path gave are kept (errors never are), with the headers it sent, so a
 * memo answers exactly what that path would. The last-seen time of the token is still
 * recorded (once a minute). Raw keys are held as map keys no longer than the isolate trusts
 * their record, as in key-hashes.ts.
 */
import { stillTrusted, touchIfDue, trustKey, type KeyTrust } from '../../auth/key-trust';
import type { ApiTokenRecord } from '../../auth/principal';
import { revisionIfFresh } from '../../db/coherence';
import { BOOKMARK_HEADER } from '../../db/sessions';
import type { Env } from '../../env';
import { clientIp } from '../../http/client-ip';
import { BoundedMap } from '../../lib/bounded-map';
import { CLIENT_FEATURES_PATH, FRONTEND_PATH } from './poll-paths';

const QUESTION_MARK = 0x3f;
const MAX_MEMOS = 1_000;
/**
 * Distinct answers kept per key. A backend SDK polls with one; a frontend key is shared by
 * every browser of a site, and those beyond the last few still get the frontend API's answer
 * cache through the full path.
 */
const MAX_PER_KEY = 8;
// Bodies are shared with the response caches of the two APIs; the bound keeps memos from
// holding on to many bodies those caches have let go of.
const MAX_MEMO_BYTES = 16_000_000;
const JSON_TYPE = 'application/json; charset=utf-8';

type PollKind = 'client' | 'frontend';

/** What the full path answered, with the response options it answered with. */
export interface PollAnswer {
  etag: string;
  body: Uint8Array | string;
  revision: number;
  ok: ResponseInit;
  notModified: ResponseInit;
}

interface Memo extends PollAnswer {
  kind: PollKind;
  query: string;
  /** The request's other facts the answer depends on (see `variantOf`). */
  variant: string | null;
  bytes: number;
  tokenId: string | null;
  /** How long the key is trusted without a look-up (auth/key-trust.ts). */
  trust: KeyTrust;
}

function memoBytesOf(_authorization: string, list: Memo[]): number {
  let bytes = 0;
  for (const memo of list) bytes += memo.bytes;
  return bytes;
}

// By the raw Authorization header, then the answers asked with it (never an empty list).
// Bounded by answers and bytes held; a key asked again moves to the newest place, the oldest
// key goes first.
const memos = new BoundedMap<string, Memo[]>(
  { entries: MAX_MEMOS, weight: MAX_MEMO_BYTES },
  { entries: (_authorization, list) => list.length, weight: memoBytesOf },
);
let hits = 0;

/** Strong ETag match; tolerates `W/` and lists, since proxies weaken tags they compress. */
function etagMatches(header: string | null, etag: string): boolean {
  if (!header) return false;
  if (header === etag) return true;
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

/**
 * The frontend API's If-None-Match test: one of the listed tags is its (weak) ETag, as
 * Express compares them.
 */
export function frontendEtagMatches(header: string | null, etag: string): boolean {
  if (!header) return false;
  if (header === etag) return true;
  return header.split(',').some((candidate) => candidate.trim() === etag);
}

const matchers: Record<PollKind, (header: string | null, etag: string) => boolean> = { client: etagMatches, frontend: frontendEtagMatches };

/** The client API's response options for an ETag: 200 with the body, 304 without. */
export function clientPollInits(etag: string): { ok: ResponseInit; notModified: ResponseInit } {
  return { ok: { headers: { 'content-type': JSON_TYPE, etag } }, notModified: { status: 304, headers: { etag } } };
}

/** A poll's answer: 304 with the ETag when the SDK has this one (RFC 9110), else the body. */
function pollResponse(matches: (header: string | null, etag: string) => boolean, ifNoneMatch: string | null, answer: PollAnswer): Response {
  return matches(ifNoneMatch, answer.etag) ? new Response(null, answer.notModified) : new Response(answer.body, answer.ok);
}

/** The client API's answer, as the full path gives it (the memo gives the same). */
export function featuresResponse(ifNoneMatch: string | null, answer: PollAnswer): Response {
  return pollResponse(etagMatches, ifNoneMatch, answer);
}

/** Where the query of `<path>[?…]` starts in the URL, or -1 when the URL has another path. */
function queryStart(url: string, pathStart: number, path: string): number {
  if (!url.startsWith(path, pathStart)) return -1;
  const end = pathStart + path.length;
  return end === url.length || url.charCodeAt(end) === QUESTION_MARK ? end : -1;
}

/** The poll a URL asks for and where its query starts, or null for any other URL. */
function pollOf(url: string): { kind: PollKind; start: number } | null {
  const pathStart = url.indexOf('/', url.indexOf('://') + 3);
  if (pathStart < 0) return null;
  let start = queryStart(url, pathStart, CLIENT_FEATURES_PATH);
  if (start >= 0) return { kind: 'client', start };
  start = queryStart(url, pathStart, FRONTEND_PATH);
  return start >= 0 ? { kind: 'frontend', start } : null;
}

/**
 * The request facts besides key and query that an answer depends on: the spec header on the
 * client API (segments inlined or listed); the caller's address and Origin on the frontend API.
 */
function variantOf(kind: PollKind, request: Request): string | null {
  if (kind === 'client') return request.headers.get('unleash-client-spec');
  return `${clientIp(request) ?? ''}\u0000${request.headers.get('origin') ?? ''}`;
}

/** The kept answer to this request, or null when the full path must answer it. */
export function answerFromMemo(request: Request, env: Env, ctx: ExecutionContext): Response | null {
  if (memos.size === 0 || request.method !== 'GET') return null;
  const url = request.url;
  const poll = pollOf(url);
  if (poll === null) return null;
  const headers = request.headers;
  const authorization = headers.get('authorization');
  if (authorization === null) return null;
  const list = memos.get(authorization);
  if (list === undefined || headers.has(BOOKMARK_HEADER)) return null;
  const { kind, start } = poll;
  // Compared in place: a poll allocates as little as it can (less for the GC to do). The
  // other facts are read once a memo of the same query is found.
  const queryLength = url.length - start;
  let variant: string | null | undefined;
  let index = 0;
  for (; index < list.length; index++) {
    const memo = list[index]!;
    if (memo.kind !== kind || memo.query.length !== queryLength || !url.startsWith(memo.query, start)) continue;
    if (variant === undefined) variant = variantOf(kind, request);
    if (memo.variant === variant) break;
  }
  if (index === list.length) return null;
  const memo = list[index]!;
  const now = Date.now();
  if (!stillTrusted(memo.trust, now) || memo.revision !== revisionIfFresh(env, now)) {
    if (list.length === 1) memos.delete(authorization);
    else memos.replace(authorization, list.toSpliced(index, 1));
    return null;
  }
  touchIfDue(memo.trust, now, env, ctx, memo.tokenId);
  hits++;
  return pollResponse(matchers[kind], headers.get('if-none-match'), memo);
}

/**
 * Keeps the full path's answer to a poll, for the identical requests that follow. The caller
 * vouches that the answer is a function of the key, the URL and the facts `variantOf` reads.
 */
export function rememberAnswer(request: Request, token: ApiTokenRecord, answer: PollAnswer): void {
  const url = request.url;
  const poll = pollOf(url);
  const authorization = request.headers.get('authorization');
  if (poll === null || request.method !== 'GET' || authorization === null || request.headers.has(BOOKMARK_HEADER)) return;
  const trust = trustKey(request, token);
  const bytes = typeof answer.body === 'string' ? answer.body.length : answer.body.byteLength;
  if (trust === undefined || bytes > MAX_MEMO_BYTES) return;
  const { kind, start } = poll;
  const query = url.slice(start);
  const variant = variantOf(kind, request);
  // Taken out while it changes (the map measures a list as it holds it), put back as the newest.
  const list = memos.get(authorization) ?? [];
  memos.delete(authorization);
  const index = list.findIndex((memo) => memo.kind === kind && memo.query === query && memo.variant === variant);
  if (index >= 0) list.splice(index, 1);
  else if (list.length >= MAX_PER_KEY) list.shift();
  list.push({
    ...answer,
    kind,
    query,
    variant,
    bytes,
    tokenId: token.id,
    trust,
  });
  memos.set(authorization, list);
}

/** How many answers are kept, and how many requests they answered (tests). */
export function memoStats(): { kept: number; hits: number } {
  return { kept: memos.entries, hits };
}
