/**
 * The frontend API (`/api/frontend`): evaluates every flag the token may see for the
 * caller's context and returns the enabled ones with their variant. CORS as Unleash sends
 * it, on answers and errors alike.
 */
import type * as v from 'valibot';
import type { Env } from '../../env';
import { setCorsHeaders, preflight } from '../../http/cors';
import { refreshFrontendOrigins } from '../ui-config/service';
import { ApiError } from '../../http/errors';
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
import { queueMetrics } from '../client-api/usage';
import type { Context, VariantResult } from '../evaluation/types';
import { answerKey, cachedAnswer, rememberAnswer, type FrontendAnswer } from './answer-cache';
import { contextFromBody, contextFromQuery } from './context';
import { open, route, sdk, type Route, type SdkContext } from '../../http/route';
import { GetFrontendFeaturesResponse, GetFrontendApiFeaturesWithPostResponse } from './schema';

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
  { principal }: SdkContext,
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

export async function getToggles(context: SdkContext): Promise<Response> {
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

export async function postToggles(context: SdkContext): Promise<Response> {
  const { request, env } = context;
  const evaluationContext = contextFromBody(await readJsonBody(request), clientIp(request));
  return togglesResponse(request, (await answerFor(env, context, () => evaluationContext)).answer, false);
}

/** Express's `sendStatus(200)`, which is what Unleash answers here. */
function ok(): Response {
  return new Response('OK', { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' } });
}

export async function metrics({ request, env, principal, body }: SdkContext<v.InferOutput<typeof metricsBody>>): Promise<Response> {
  const token = principal.token;
  // A frontend key ships inside web pages: what it may write is bounded (client-api/usage-queue.ts).
  const frontend = token.type === 'frontend' ? { tokenId: token.id ?? token.hash, projects: token.projects } : undefined;
  await queueMetrics(env, { ...callerOf(request, token), ...(frontend ? { frontend } : {}) }, body);
  return ok();
}

/** Frontend SDKs may register; Unleash accepts and ignores it. */
export function register(): Response {
  return ok();
}

export function notImplemented(): Response {
  throw new ApiError(405, 'NotImplementedError', 'The frontend API does not support this endpoint.');
}

export const routes: Route[] = [
  route({
    method: 'OPTIONS',
    path: '/api/frontend',
    access: open(),
    tag: 'Frontend API',
    operationId: 'frontendPreflight',
    summary: 'CORS preflight of the frontend API',
    responses: { 204: { description: 'Done, no content', schema: null } },
    handler: async ({ request, env }) => {
      await refreshFrontendOrigins(env);
      return preflight(request, env);
    },
  }),
  route({
    method: 'GET',
    path: '/api/frontend',
    access: sdk(['frontend']),
    tag: 'Frontend API',
    operationId: 'getFrontendFeatures',
    summary: 'The enabled flags for a context given in the query',
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
    path: '/api/frontend',
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
    responses: {},
    errors: [405],
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
    responses: {},
    errors: [405],
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
    responses: {},
    errors: [405],
    handler: notImplemented,
  }),
];
