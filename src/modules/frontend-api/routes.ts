/**
 * The frontend API (`/api/frontend`): evaluates every flag the token may see for the
 * caller's context and returns the enabled ones with their variant. CORS as Unleash sends
 * it, on answers and errors alike.
 */
import type { SdkRequestContext as RequestContext, RouteHandler } from '../../auth/guard';
import type { Env } from '../../env';
import { ApiError, toErrorResponse } from '../../http/errors';
import { readJsonBody } from '../../http/body';
import { urlOf } from '../../http/request-url';
import { BoundedMap } from '../../lib/bounded-map';
import { toBase64 } from '../../lib/encoding';
import { parseInput } from '../../http/validation';
import { clientIp } from '../../http/client-ip';
import { callerOf } from '../client-api/routes';
import { frontendEtagMatches, rememberAnswer as rememberPoll } from '../client-api/memo';
import { metricsBody } from '../client-api/schema';
import { evaluatorFor, snapshotFor, type Snapshot } from '../client-api/snapshot';
import { impureReadCount } from '../evaluation/purity';
import { recordMetrics } from '../client-api/usage';
import type { Context, VariantResult } from '../evaluation/types';
import { answerKey, cachedAnswer, rememberAnswer, type FrontendAnswer } from './answer-cache';
import { contextFromBody, contextFromQuery } from './context';

const MAX_AGE_SECONDS = '86400';

/**
 * Request headers a preflight always allows: what unleash-proxy-client and the other browser
 * SDKs send. Others the browser asks for (the SDK's `customHeaders` and `headerName`) are
 * allowed too, as Unleash allows any.
 */
const SDK_REQUEST_HEADERS = ['authorization', 'content-type', 'if-none-match', 'unleash-appname', 'unleash-connection-id', 'unleash-sdk'];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]{1,100}$/;
const MAX_EXTRA_HEADERS = 32;

// FRONTEND_API_ORIGINS parsed once per isolate (and again if it changes): read per request.
let origins: { source: string | undefined; any: boolean; list: readonly string[] } | undefined;

function allowedOrigins(env: Env): { any: boolean; list: readonly string[] } {
  if (origins === undefined || origins.source !== env.FRONTEND_API_ORIGINS) {
    const list = (env.FRONTEND_API_ORIGINS ?? '*')
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
    origins = { source: env.FRONTEND_API_ORIGINS, any: list.length === 0 || list.includes('*'), list };
  }
  return origins;
}

/**
 * CORS response headers. With every origin allowed the answer is `*` and no
 * Access-Control-Allow-Credentials: browsers refuse `*` together with credentials, and the
 * frontend API authenticates by header, not cookie. A configured origin list reflects an
 * allowed origin with credentials allowed; any other origin gets no Allow-Origin at all.
 */
function setCorsHeaders(headers: Headers, env: Env, request: Request): void {
  const allowed = allowedOrigins(env);
  headers.set('vary', 'Origin');
  if (allowed.any) {
    headers.set('access-control-allow-origin', '*');
  } else {
    const origin = request.headers.get('origin');
    if (origin !== null && allowed.list.includes(origin)) {
      headers.set('access-control-allow-origin', origin);
      headers.set('access-control-allow-credentials', 'true');
    }
  }
  headers.set('access-control-expose-headers', 'ETag');
}

/**
 * Adds CORS headers to whatever the handler answered, errors included. The headers are set
 * on the answer itself: copying it into a new Response would turn a string body into a
 * stream for nothing.
 */
export function withCors(handler: RouteHandler): RouteHandler {
  return async (request, env, ctx) => {
    let response: Response;
    try {
      response = await handler(request, env, ctx);
    } catch (error) {
      response = toErrorResponse(error, request);
    }
    try {
      setCorsHeaders(response.headers, env, request);
      return response;
    } catch {
      // Immutable headers (a response passed through from fetch): copy it once.
      const copy = new Response(response.body, response);
      setCorsHeaders(copy.headers, env, request);
      return copy;
    }
  };
}

/** The request headers a preflight allows: the SDKs' own, plus well-formed ones asked for. */
function allowedRequestHeaders(requested: string | null): string {
  const names = new Set(SDK_REQUEST_HEADERS);
  if (requested !== null) {
    for (const item of requested.split(',')) {
      const name = item.trim().toLowerCase();
      if (names.size >= SDK_REQUEST_HEADERS.length + MAX_EXTRA_HEADERS) break;
      if (HEADER_NAME.test(name)) names.add(name);
    }
  }
  return [...names].join(', ');
}

/** The CORS preflight: no authentication, as browsers send none. */
export function preflight(request: Request, env: Env): Response {
  const headers = new Headers();
  setCorsHeaders(headers, env, request);
  headers.set('vary', 'Origin, Access-Control-Request-Headers');
  headers.set('access-control-allow-methods', 'GET,HEAD,PUT,PATCH,POST,DELETE');
  headers.set('access-control-allow-headers', allowedRequestHeaders(request.headers.get('access-control-request-headers')));
  headers.set('access-control-max-age', MAX_AGE_SECONDS);
  return new Response(null, { status: 204, headers });
}

interface FrontendToggle {
  name: string;
  enabled: true;
  variant: VariantResult;
  impressionData: boolean;
}

function evaluateAll(snapshot: Snapshot, projects: readonly string[], context: Context): FrontendToggle[] {
  const { evaluator, features } = evaluatorFor(snapshot, projects);
  const toggles: FrontendToggle[] = [];
  for (const feature of features) {
    const result = evaluator.evaluate(feature.name, context);
    if (result.enabled)
      toggles.push({ name: feature.name, enabled: true, variant: result.variant, impressionData: feature.impressionData });
  }
  return toggles;
}

/**
 * The body and ETag for a context: from the answer cache, else evaluated (and kept when
 * pure). `contextKey` names the context when the caller can do so without building it. An
 * answer found in the cache under such a key is `repeatable`: the same for the next request
 * with that key, which has now come twice (a browser SDK polling). A first request is not: a
 * key seen once (one per user on a busy site) is not worth the poll memo's bookkeeping.
 */
async function answerFor(
  env: Env,
  { principal }: RequestContext,
  makeContext: () => Context,
  contextKey?: string,
): Promise<{ answer: FrontendAnswer; revision: number; repeatable: boolean }> {
  const token = principal.token;
  const environment = token.environment === '*' ? 'default' : token.environment;
  const snapshot = await snapshotFor(env, environment);
  const revision = snapshot.revision;
  let context: Context | undefined;
  const key = answerKey(
    snapshot.environment,
    revision,
    token.projects,
    contextKey ?? `context:${JSON.stringify((context = makeContext()))}`,
  );
  const cached = cachedAnswer(key);
  if (cached) return { answer: cached, revision, repeatable: contextKey !== undefined };
  context ??= makeContext();
  const impureBefore = impureReadCount();
  const body = JSON.stringify({ toggles: evaluateAll(snapshot, token.projects, context) });
  const pure = impureReadCount() === impureBefore;
  const answer = { body, etag: await weakEtag(body) };
  if (pure) rememberAnswer(key, answer);
  return { answer, revision, repeatable: false };
}

// Recent bodies and their ETags. Long strings hash by length in V8, so a lookup costs one
// comparison with a body of the same length; a repeated answer skips hashing 30 kB again.
// Bounded by count and by the characters held, since an isolate has 128 MB.
const ETAG_CACHE_MAX_CHARS = 4_000_000;
const etags = new BoundedMap<string, string>({ entries: 64, weight: ETAG_CACHE_MAX_CHARS }, { weight: (body) => body.length });

/**
 * Express's weak ETag, which Unleash's frontend API sends: `W/"<byte length, hex>-<first 27
 * characters of the base64 SHA-1>"`. The same body gets the same tag from Unleash and from
 * us, so an SDK moved over keeps its 304s.
 */
async function weakEtag(body: string): Promise<string> {
  const known = etags.get(body);
  if (known !== undefined) return known;
  const bytes = encoder.encode(body);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-1', bytes));
  const etag = `W/"${bytes.byteLength.toString(16)}-${toBase64(digest).slice(0, 27)}"`;
  if (body.length <= ETAG_CACHE_MAX_CHARS / 4) etags.set(body, etag);
  return etag;
}

const encoder = new TextEncoder();

const OK_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' };

function togglesResponse(request: Request, { body, etag }: FrontendAnswer, conditional: boolean): Response {
  if (conditional && frontendEtagMatches(request.headers.get('if-none-match'), etag))
    return new Response(null, { status: 304, headers: { etag } });
  return new Response(body, { headers: { ...OK_HEADERS, etag } });
}

/** The headers `withCors(getToggles)` answers a request with, CORS included, as a list. */
function headersFor(env: Env, request: Request, init: Record<string, string>): [string, string][] {
  const headers = new Headers(init);
  setCorsHeaders(headers, env, request);
  return [...headers];
}

export async function getToggles(context: RequestContext): Promise<Response> {
  const { request, env, principal } = context;
  const url = urlOf(request);
  const remoteAddress = clientIp(request);
  // With a sessionId in the query (browser SDKs keep one) nothing random goes into the
  // context: it is a function of the query and the caller's address, which then name it.
  const queryKey = url.searchParams.get('sessionId') ? `query:${remoteAddress ?? ''}\u0000${url.search}` : undefined;
  const { answer, revision, repeatable } = await answerFor(env, context, () => contextFromQuery(url.searchParams, remoteAddress), queryKey);
  // From its third time, the same poll (same key, query, address and Origin) is answered
  // before routing.
  if (repeatable) {
    const { etag, body } = answer;
    rememberPoll(request, principal.token, {
      etag,
      body,
      revision,
      ok: { headers: headersFor(env, request, { ...OK_HEADERS, etag }) },
      notModified: { status: 304, headers: headersFor(env, request, { etag }) },
    });
  }
  return togglesResponse(request, answer, true);
}

export async function postToggles(context: RequestContext): Promise<Response> {
  const { request, env } = context;
  const evaluationContext = contextFromBody(await readJsonBody(request), clientIp(request));
  return togglesResponse(request, (await answerFor(env, context, () => evaluationContext)).answer, false);
}

/** Express's `sendStatus(200)`, which is what Unleash answers here. */
function ok(): Response {
  return new Response('OK', { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' } });
}

export async function metrics({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(metricsBody, await readJsonBody(request), '/body');
  const token = principal.token;
  // A frontend key ships inside web pages: what it may write is bounded (recordMetrics).
  const frontend = token.type === 'frontend' ? { tokenId: token.id ?? token.hash, projects: token.projects } : undefined;
  await recordMetrics(env, { ...callerOf(request, token), ...(frontend ? { frontend } : {}) }, body);
  return ok();
}

/** Frontend SDKs may register; Unleash accepts and ignores it. */
export function register(): Response {
  return ok();
}

export function notImplemented(): Response {
  throw new ApiError(405, 'NotImplementedError', 'The frontend API does not support this endpoint.');
}
