/**
 * The frontend API (`/api/frontend`): evaluates every flag the token may see for the
 * caller's context and returns the enabled ones with their variant. CORS as Unleash sends
 * it, on answers and errors alike.
 */
import type * as v from 'valibot';
import type { Env } from '../../env';
import { corsStateKey, setCorsHeaders, preflight } from '../../http/cors';
import { refreshFrontendOrigins } from '../../admin/ui-config/service';
import { ApiError, toErrorResponse } from '../../http/errors';
import type { ApiTokenRecord } from '../../auth/principal';
import { earlyFrontendRequest, rememberFrontendKey } from './early';
import { environmentOf } from '../client-api/token-environment';
import { FRONTEND_PATH } from '../client-api/poll-paths';
import { readJsonBody } from '../../http/body';
import { urlOf } from '../../http/request-url';
import { clientIp } from '../../http/client-ip';
import { callerOf } from '../client-api/routes';
import { frontendEtagMatches, rememberAnswer as rememberPoll } from '../client-api/memo';
import { metricsBody, registerBody } from '../client-api/schema';
import { evaluatorFor, snapshotFor, type Snapshot } from '../client-api/snapshot';
import { impureReadCount } from '../evaluation/purity';
import { queueMetrics } from '../client-api/usage';
import type { Context } from '../evaluation/types';
import { planFor, type FrontendPlan } from './answer';
import { answerKey, cachedAnswer, rememberAnswer, type FrontendAnswer } from './answer-cache';
import { contextFromBody, contextFromPlainQuery, contextFromQuery, plainQueryOf } from './context';
import { untyped, type UntypedAnswer } from '../../http/responses';
import { open, route, sdk, type Route, type SdkContext } from '../../http/route';
import { FrontendQuery, GetFrontendFeaturesResponse, GetFrontendApiFeaturesWithPostResponse } from './schema';
import { ErrorBodySchema } from '../../openapi/responses';

// Plans per snapshot and token scope. A snapshot is replaced when the data moves, and its
// plans go with it.
const plansOf = new WeakMap<Snapshot, Map<string, FrontendPlan>>();

function scopeKey(projects: readonly string[]): string {
  if (projects.length === 1) return projects[0]!;
  return projects.includes('*') ? '*' : [...projects].sort().join('\u0000');
}

/** The plan for a token scope on this snapshot, made on its first request. */
export function frontendPlan(snapshot: Snapshot, projects: readonly string[]): FrontendPlan {
  let byScope = plansOf.get(snapshot);
  if (byScope === undefined) plansOf.set(snapshot, (byScope = new Map()));
  const key = scopeKey(projects);
  let plan = byScope.get(key);
  if (plan === undefined) {
    const { evaluator, features } = evaluatorFor(snapshot, projects);
    plan = planFor(evaluator, features);
    if (byScope.size >= 64) byScope.clear();
    byScope.set(key, plan);
  }
  return plan;
}

/**
 * The body and ETag for a context: from the answer cache, else evaluated (and kept when
 * pure). `contextKey` names the context when the caller can do so without building it. An
 * answer found in the cache under such a key is `repeatable`: the same for the next request
 * with that key, which has now come twice (a browser SDK polling). A first request is not: a
 * key seen once (one per user on a busy site) is not worth the poll memo's bookkeeping.
 */
async function answerFor(
  snapshot: Snapshot,
  token: ApiTokenRecord,
  makeContext: () => Context,
  contextKey?: string,
): Promise<{ answer: FrontendAnswer; revision: number; repeatable: boolean }> {
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
  // Evaluation runs before answer() first awaits: the count after the call is evaluation's.
  const pending = frontendPlan(snapshot, token.projects).answer(context);
  const pure = impureReadCount() === impureBefore;
  const answer = await pending;
  if (pure) rememberAnswer(key, answer);
  return { answer, revision, repeatable: false };
}

const OK_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' };

const OK_PAIRS = Object.entries(OK_HEADERS);

// The CORS headers `setCorsHeaders` gives, by what they depend on (the allowed origins, saved
// or configured, and the request's Origin), with the other headers of a 200 and of a 304 but
// the ETag, as Headers objects. A Response made from a Headers object copies it
// inside the runtime; made from a list of pairs, it converts every name and value from
// JavaScript on every request, a measurable share of a cheap request.
interface CorsHeaders {
  ok: Headers;
  notModified: Headers;
}

const corsHeadersCache = new Map<string, CorsHeaders>();

function corsHeaders(env: Env, request: Request): CorsHeaders {
  const key = `${corsStateKey(env)}\u0000${request.headers.get('origin') ?? '\u0000'}`;
  let cached = corsHeadersCache.get(key);
  if (cached === undefined) {
    const headers = new Headers();
    setCorsHeaders(headers, env, request);
    const pairs = [...headers];
    cached = { ok: new Headers([...pairs, ...OK_PAIRS]), notModified: new Headers(pairs) };
    if (corsHeadersCache.size >= 256) corsHeadersCache.clear();
    corsHeadersCache.set(key, cached);
  }
  return cached;
}

/** A body served again and again (`kept`): its full headers, ETag included, per CORS case. */
interface KeptHeaders {
  cors: CorsHeaders;
  ok?: Headers;
  notModified?: Headers;
}

const keptHeaders = new WeakMap<FrontendAnswer, KeptHeaders>();

function withEtag(template: Headers, etag: string): Headers {
  const headers = new Headers(template);
  headers.set('etag', etag);
  return headers;
}

/**
 * The answer, CORS headers included (withCors sets them again to the same values on the full
 * path): the Response copies the headers made for its CORS case, then gets its ETag; a body
 * the plan keeps (`kept`) keeps its headers with the ETag in them.
 */
function togglesResponse(env: Env, request: Request, answer: FrontendAnswer, conditional: boolean): UntypedAnswer {
  const { body, etag } = answer;
  const cors = corsHeaders(env, request);
  const notModified = conditional && frontendEtagMatches(request.headers.get('if-none-match'), etag);
  if (answer.kept) {
    let own = keptHeaders.get(answer);
    if (own === undefined || own.cors !== cors) keptHeaders.set(answer, (own = { cors }));
    return untyped(
      notModified
        ? new Response(null, { status: 304, headers: (own.notModified ??= withEtag(cors.notModified, etag)) })
        : new Response(body, { headers: (own.ok ??= withEtag(cors.ok, etag)) }),
    );
  }
  const response = notModified ? new Response(null, { status: 304, headers: cors.notModified }) : new Response(body, { headers: cors.ok });
  response.headers.set('etag', etag);
  return untyped(response);
}

/** The headers `withCors(getToggles)` answers a request with, CORS included, as a list. */
function headersFor(env: Env, request: Request, init: Record<string, string>): [string, string][] {
  const headers = new Headers(init);
  setCorsHeaders(headers, env, request);
  return [...headers];
}

// The frontend API's answers are bytes kept per revision with their ETag, or a 304: not typed.
async function getToggles({ request, env, principal }: SdkContext): Promise<UntypedAnswer> {
  const token = principal.token;
  const snapshot = await snapshotFor(env, environmentOf(token));
  rememberFrontendKey(request, token, snapshot);
  return togglesFor(request, env, token, snapshot);
}

/**
 * `GET /api/frontend` before routing, for a key this isolate trusts at a fresh revision
 * (early.ts); null when the full path must answer. The answer is the handler's, with the
 * CORS headers its route adds.
 */
export function answerFrontendEarly(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> | null {
  const early = earlyFrontendRequest(request, env, ctx);
  if (early === null) return null;
  return togglesFor(request, env, early.token, early.snapshot).catch((error: unknown) => {
    const response = toErrorResponse(error, request);
    setCorsHeaders(response.headers, env, request);
    return response;
  });
}

async function togglesFor(request: Request, env: Env, token: ApiTokenRecord, snapshot: Snapshot): Promise<UntypedAnswer> {
  const remoteAddress = clientIp(request);
  // A plain query (the frontend SDKs send one) is read from the raw URL without URL or
  // URLSearchParams objects; any other goes through them (context.ts).
  const plain = plainQueryOf(request.url);
  const fast = plain === null ? null : contextFromPlainQuery(plain, remoteAddress);
  let search: string;
  let sessionGiven: boolean;
  let makeContext: () => Context;
  if (fast !== null) {
    search = plain === '' ? '' : `?${plain}`;
    sessionGiven = fast.sessionGiven;
    makeContext = () => fast.context;
  } else {
    const url = urlOf(request);
    search = url.search;
    sessionGiven = Boolean(url.searchParams.get('sessionId'));
    makeContext = () => contextFromQuery(url.searchParams, remoteAddress);
  }
  // With a sessionId in the query (browser SDKs keep one) nothing random goes into the
  // context: it is a function of the query and the caller's address, which then name it.
  const queryKey = sessionGiven ? `query:${remoteAddress ?? ''}\u0000${search}` : undefined;
  const { answer, revision, repeatable } = await answerFor(snapshot, token, makeContext, queryKey);
  // From its third time, the same poll (same key, query, address and Origin) is answered
  // before routing.
  if (repeatable) {
    const { etag, body } = answer;
    rememberPoll(request, token, {
      etag,
      body,
      revision,
      ok: { headers: headersFor(env, request, { ...OK_HEADERS, etag }) },
      notModified: { status: 304, headers: headersFor(env, request, { etag }) },
    });
  }
  return togglesResponse(env, request, answer, true);
}

async function postToggles({ request, env, principal }: SdkContext): Promise<UntypedAnswer> {
  const evaluationContext = contextFromBody(await readJsonBody(request), clientIp(request));
  const snapshot = await snapshotFor(env, environmentOf(principal.token));
  return togglesResponse(env, request, (await answerFor(snapshot, principal.token, () => evaluationContext)).answer, false);
}

/** Express's `sendStatus(200)`, which is what Unleash answers here. */
function ok(): UntypedAnswer {
  return untyped(new Response('OK', { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' } }));
}

async function metrics({ request, env, principal, body }: SdkContext<v.InferOutput<typeof metricsBody>>): Promise<UntypedAnswer> {
  const token = principal.token;
  // A frontend key ships inside web pages: what it may write is bounded (client-api/usage-queue.ts).
  const frontend = token.type === 'frontend' ? { tokenId: token.id ?? token.hash, projects: token.projects } : undefined;
  await queueMetrics(env, { ...callerOf(request, token), ...(frontend ? { frontend } : {}) }, body);
  return ok();
}

/** Frontend SDKs may register; Unleash checks the body as an SDK registration and keeps nothing. */
function register(): UntypedAnswer {
  return ok();
}

function notImplemented(): never {
  throw new ApiError(405, 'NotImplementedError', 'The frontend API does not support this endpoint.');
}

/** The answer of the paths Unleash's frontend API lists but does not serve (its NotImplementedError). */
const NOT_SERVED = {
  description: 'The frontend API does not serve this path: 405 NotImplementedError "The frontend API does not support this endpoint."',
  schema: ErrorBodySchema,
};

export const routes: Route[] = [
  route({
    method: 'OPTIONS',
    path: FRONTEND_PATH,
    access: open(),
    tag: 'Frontend API',
    operationId: 'frontendPreflight',
    summary: 'CORS preflight of the frontend API',
    responses: { 204: { description: 'Done, no content', schema: null } },
    handler: async ({ request, env }) => {
      await refreshFrontendOrigins(env);
      return untyped(preflight(request, env));
    },
  }),
  route({
    method: 'GET',
    path: FRONTEND_PATH,
    access: sdk(['frontend']),
    tag: 'Frontend API',
    operationId: 'getFrontendFeatures',
    summary: 'The enabled flags for a context given in the query',
    query: FrontendQuery,
    queryReadByHandler: true,
    cors: true,
    responses: {
      200: { description: 'Success', schema: GetFrontendFeaturesResponse },
      304: { description: 'Not modified: the ETag still matches', schema: null },
    },
    errors: [401, 403],
    handler: getToggles,
  }),
  route({
    method: 'POST',
    path: FRONTEND_PATH,
    access: sdk(['frontend']),
    tag: 'Frontend API',
    operationId: 'getFrontendApiFeaturesWithPost',
    summary: 'The enabled flags for a context given in the body',
    cors: true,
    responses: { 200: { description: 'Success', schema: GetFrontendApiFeaturesWithPostResponse } },
    errors: [400, 403, 413, 415],
    handler: postToggles,
  }),
  route({
    method: 'POST',
    path: '/api/frontend/client/metrics',
    access: sdk(['frontend'], 'frontend-writes'),
    tag: 'Frontend API',
    operationId: 'registerFrontendMetrics',
    summary: 'Report flag usage from a browser SDK',
    cors: true,
    body: metricsBody,
    responses: { 200: { description: 'Success', schema: null, contentType: 'text/plain' } },
    errors: [400, 413, 429],
    handler: metrics,
  }),
  route({
    method: 'POST',
    path: '/api/frontend/client/register',
    access: sdk(['frontend'], 'frontend-writes'),
    tag: 'Frontend API',
    operationId: 'registerFrontendClient',
    summary: 'Register a browser SDK instance',
    cors: true,
    body: registerBody,
    badRequestName: 'BadDataError',
    errors: [400],
    responses: { 200: { description: 'Success', schema: null, contentType: 'text/plain' } },
    handler: register,
  }),
  route({
    method: 'GET',
    path: '/api/frontend/client/features',
    access: sdk(['frontend']),
    tag: 'Frontend API',
    operationId: 'frontendClientFeatures',
    summary: 'Not served by the frontend API (405)',
    cors: true,
    responses: { 405: NOT_SERVED },
    handler: notImplemented,
  }),
  route({
    method: 'GET',
    path: '/api/frontend/health',
    access: sdk(['frontend']),
    tag: 'Frontend API',
    operationId: 'frontendHealth',
    summary: 'Not served by the frontend API (405)',
    cors: true,
    responses: { 405: NOT_SERVED },
    handler: notImplemented,
  }),
  route({
    method: 'GET',
    path: '/api/frontend/internal-backstage/prometheus',
    access: sdk(['frontend']),
    tag: 'Frontend API',
    operationId: 'frontendPrometheus',
    summary: 'Not served by the frontend API (405)',
    cors: true,
    responses: { 405: NOT_SERVED },
    handler: notImplemented,
  }),
];
