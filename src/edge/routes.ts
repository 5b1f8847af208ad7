/**
 * Edge mode's HTTP surface (docs/edge.md): the routes Unleash Edge answers, from the
 * snapshots of scope.ts, with the service's own answer builders (client features, frontend
 * plans, contexts, schemas). The service's router (src/app.ts) is not used here: its
 * authentication and access rules read D1 and KV, while in this mode the upstream decides.
 */
import { Router, type IRequest } from 'itty-router';
import * as v from 'valibot';
import { keyFromHeader } from '../auth/authenticate';
import type { Env } from '../env';
import { readJsonBody } from '../http/body';
import { clientIp } from '../http/client-ip';
import { preflight, setCorsHeaders } from '../http/cors';
import { ApiError, authenticationRequired, BareMessageError, notFound, toErrorResponse } from '../http/errors';
import { BoundedMap } from '../lib/bounded-map';
import { clientKey, tooManyRequests } from '../http/rate-limit';
import { json } from '../http/responses';
import { parseInput } from '../http/validation';
import { log } from '../log';
import { effectiveQuery, featuresAnswer, matches, wantsGlobalSegments } from '../sdk/client-api/routes';
import { featuresResponse, frontendEtagMatches } from '../sdk/client-api/memo';
import { deltaBody, hydrationEvent, parseRevision } from '../sdk/client-api/delta';
import { bulkMetricsBody, edgeValidateBody, metricsBody, registerBody } from '../sdk/client-api/schema';
import { evaluatorFor, inScope, type Snapshot } from '../sdk/client-api/snapshot';
import type { Context } from '../sdk/evaluation/types';
import { weakEtag } from '../sdk/frontend-api/answer';
import { contextFromBody, contextFromQuery } from '../sdk/frontend-api/context';
import { frontendPlan } from '../sdk/frontend-api/routes';
import { knownToken, seenValid, snapshotForToken, syncObject, tokenFor, wellFormedToken } from './scope';
import { streamForToken } from './streaming';
import { backstageFeatures, backstageMetrics, backstageTokens, health, holdsWebhookSecret, ready } from './backstage';
import type { ApplicationRow, MetricRow } from './metrics-forwarder';
import type { UpstreamToken } from './upstream';

type SdkTokenType = Exclude<UpstreamToken['type'], 'admin'>;

type EdgeRouter = ReturnType<typeof Router<IRequest, [Env, ExecutionContext], Response>>;

const JSON_TYPE = 'application/json; charset=utf-8';

/** Addresses over the refused-key limit, until when (ms): their keys not seen valid here are refused unasked. */
const overLimit = new BoundedMap<string, number>({ entries: 10_000 });

function tooMany(): ApiError {
  return new ApiError(429, 'TooManyRequestsError', 'Too many requests, please try again later.');
}

/**
 * A key the upstream refused (unknown, revoked, or of the wrong kind) counts toward its address's
 * limit (RL_EDGE_UNKNOWN_TOKEN_CLIENT); over it, the address's keys not seen valid here are
 * refused with 429 without asking the sync object, for the limit's period. A valid key is never
 * counted, however often its cache entry here expires (docs/rate-limits.md).
 */
async function countRefused(env: Env, address: string): Promise<void> {
  const limit = await env.RL_EDGE_UNKNOWN_TOKEN_CLIENT?.limit({ key: `edge-unknown:${address}` });
  if (limit && !limit.success) {
    overLimit.set(address, Date.now() + 60_000);
    throw tooMany();
  }
}

/** Unleash's answer to a key of another type (an admin key on the SDK API): 403 with only a message. */
function wrongTokenType(): never {
  throw new BareMessageError(403, 'invalid token: expected a different token type for this endpoint');
}

/** The caller's token, validated upstream (through the caches), of the kind the path serves. */
async function caller(request: Request, env: Env, kind: SdkTokenType): Promise<{ secret: string; token: UpstreamToken }> {
  const secret = keyFromHeader(request);
  if (secret === null) throw authenticationRequired(false);
  const address = clientKey(request);
  let token = knownToken(secret);
  if (token === undefined) {
    const blockedUntil = overLimit.get(address);
    if (blockedUntil !== undefined && blockedUntil > Date.now() && !seenValid(secret)) throw tooMany();
    try {
      token = wellFormedToken(secret) ? await tokenFor(env, secret) : null;
    } catch (error) {
      // Not known valid and not checkable now (upstream down, or too many new keys at once): unknown.
      await countRefused(env, address);
      throw error;
    }
  }
  if (token === null) {
    await countRefused(env, address);
    throw authenticationRequired(true);
  }
  if (token.type !== kind) {
    await countRefused(env, address);
    wrongTokenType();
  }
  return { secret, token };
}

async function scoped(request: Request, env: Env, kind: SdkTokenType) {
  const { secret, token } = await caller(request, env, kind);
  const { snapshot } = await snapshotForToken(env, secret, token);
  return { secret, token, snapshot };
}

// ---- client API ------------------------------------------------------------------------------

async function clientFeatures(request: IRequest, env: Env): Promise<Response> {
  const globalSegments = wantsGlobalSegments(request);
  const { token, snapshot } = await scoped(request, env, 'client');
  const query = effectiveQuery(new URL(request.url).searchParams, token, !globalSegments);
  return featuresResponse(request.headers.get('if-none-match'), featuresAnswer(snapshot, query, globalSegments));
}

async function clientFeature(request: IRequest, env: Env): Promise<Response> {
  const globalSegments = wantsGlobalSegments(request);
  const { token, snapshot } = await scoped(request, env, 'client');
  const name = decodeURIComponent(request.params.featureName ?? '');
  const query = effectiveQuery(new URL(request.url).searchParams, token, !globalSegments);
  const found = snapshot.byName.get(name);
  if (!found || !matches(found, query)) throw notFound(`Could not find feature flag ${name}`);
  return new Response(globalSegments ? found.jsonWithSegmentIds : found.jsonInlined, { headers: { 'content-type': JSON_TYPE } });
}

/**
 * `/api/client/delta` from the same snapshot: an SDK at the snapshot's revision gets 304, any
 * other a hydration (the whole scope). The upstream's changes between two polls are not kept
 * event by event here, and a hydration is an answer every delta SDK takes at any time.
 */
async function clientDelta(request: IRequest, env: Env): Promise<Response> {
  const { token, snapshot } = await scoped(request, env, 'client');
  const query = effectiveQuery(new URL(request.url).searchParams, token, false);
  const since = parseRevision(request.headers.get('if-none-match'));
  const etag = `"${snapshot.revision}"`;
  if (since === snapshot.revision) return new Response(null, { status: 304, headers: { etag } });
  const scopeQuery = {
    ...(query.project ? { project: query.project } : {}),
    ...(query.namePrefix ? { namePrefix: query.namePrefix } : {}),
  };
  const body = deltaBody({ events: [hydrationEvent(snapshot, scopeQuery)], lastEventId: snapshot.revision });
  return new Response(body, { headers: { 'content-type': JSON_TYPE, etag, 'cache-control': 'no-cache' } });
}

/** `/api/client/streaming`: the service's event stream, from this scope's snapshot (streaming.ts). */
async function clientStreaming(request: IRequest, env: Env, ctx: ExecutionContext): Promise<Response> {
  const { secret, token } = await caller(request, env, 'client');
  return streamForToken(request, env, ctx, secret, token);
}

// ---- metrics and registrations ---------------------------------------------------------------

/** An SDK metrics post as the rows the sync object merges (the binding's usage in Edge mode too). */
export function metricRows(body: v.InferOutput<typeof metricsBody>, environment: string): MetricRow[] {
  const bucket = body.bucket;
  if (!bucket) return [];
  return Object.entries(bucket.toggles).flatMap(([featureName, counts]) =>
    counts.yes + counts.no === 0
      ? []
      : [
          {
            featureName,
            appName: body.appName,
            environment,
            timestamp: bucket.stop,
            yes: counts.yes,
            no: counts.no,
            variants: { ...(counts.variants ?? {}) },
          },
        ],
  );
}

async function forward(
  env: Env,
  secret: string,
  rows: MetricRow[],
  applications: ApplicationRow[],
  seenTokens: readonly string[] = [],
): Promise<Response> {
  // Awaited, not left to waitUntil: once 202 is sent the counts are in the sync object's merge.
  if (rows.length > 0 || applications.length > 0 || seenTokens.length > 0) {
    await syncObject(env)
      .addMetrics(secret, rows, applications, seenTokens)
      .catch((error: unknown) => log.warn('edge: metrics not merged', { error: String(error) }));
  }
  return new Response(null, { status: 202 });
}

function metricsHandler(kind: SdkTokenType) {
  return async (request: IRequest, env: Env): Promise<Response> => {
    const { secret, token } = await caller(request, env, kind);
    const body = parseInput(metricsBody, await readJsonBody(request), '/body');
    return forward(env, secret, metricRows(body, token.environment), []);
  };
}

function registerHandler(kind: SdkTokenType) {
  return async (request: IRequest, env: Env): Promise<Response> => {
    const { secret, token } = await caller(request, env, kind);
    const input = await readJsonBody(request);
    if (kind === 'frontend') {
      // Edge answers a frontend registration 202 whatever it holds; only a full one is forwarded.
      const parsed = v.safeParse(registerBody, input);
      return forward(env, secret, [], parsed.success ? [{ ...parsed.output, environment: token.environment }] : []);
    }
    const body = parseInput(registerBody, input, '/body');
    return forward(env, secret, [], [{ ...body, environment: token.environment }]);
  };
}

async function bulkMetrics(request: IRequest, env: Env): Promise<Response> {
  const { secret, token } = await caller(request, env, 'client');
  const body = parseInput(bulkMetricsBody, await readJsonBody(request, 1_000_000), '/body');
  const rows = body.metrics
    .filter((row) => row.yes + row.no > 0)
    .map((row) => ({ ...row, environment: token.environment, variants: { ...(row.variants ?? {}) } }));
  return forward(
    env,
    secret,
    rows,
    body.applications.map((app) => ({ ...app, environment: token.environment })),
    body.seenTokens ?? [],
  );
}

// ---- frontend API ----------------------------------------------------------------------------

async function contextOf(request: IRequest): Promise<Context> {
  const remote = clientIp(request);
  if (request.method === 'POST') return contextFromBody(await readJsonBody(request), remote);
  return contextFromQuery(new URL(request.url).searchParams, remote);
}

function withCorsHeaders(response: Response, request: Request, env: Env): Response {
  setCorsHeaders(response.headers, env, request);
  return response;
}

async function frontendAnswer(request: IRequest, env: Env): Promise<Response> {
  const { token, snapshot } = await scoped(request, env, 'frontend');
  const { body, etag } = await frontendPlan(snapshot, token.projects).answer(await contextOf(request));
  const headers = { 'content-type': JSON_TYPE, 'cache-control': 'no-cache', etag };
  if (request.method === 'GET' && frontendEtagMatches(request.headers.get('if-none-match'), etag)) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(body, { headers });
}

function evaluatedToggle(snapshot: Snapshot, projects: readonly string[], name: string, context: Context) {
  const { evaluator } = evaluatorFor(snapshot, projects);
  const feature = snapshot.byName.get(name)!;
  const { enabled, variant } = evaluator.evaluate(name, context);
  return { name, enabled, variant, impressionData: feature.impressionData };
}

/** Edge's `/all`: every flag of the scope, the disabled ones too. */
async function frontendAll(request: IRequest, env: Env): Promise<Response> {
  const { token, snapshot } = await scoped(request, env, 'frontend');
  const context = await contextOf(request);
  const { features } = evaluatorFor(snapshot, token.projects);
  const body = new TextEncoder().encode(
    JSON.stringify({ toggles: features.map((feature) => evaluatedToggle(snapshot, token.projects, feature.name, context)) }),
  );
  return new Response(body, { headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-cache', etag: await weakEtag(body) } });
}

/** Edge's `/features/:name`: one flag evaluated; 404 when unknown or outside the token's projects. */
async function frontendFeature(request: IRequest, env: Env): Promise<Response> {
  const { token, snapshot } = await scoped(request, env, 'frontend');
  const name = decodeURIComponent(request.params.featureName ?? '');
  const feature = snapshot.byName.get(name);
  if (!feature || !inScope(token.projects, feature.project)) throw notFound(`Could not find feature flag ${name}`);
  return json(evaluatedToggle(snapshot, token.projects, name, await contextOf(request)));
}

// ---- Edge's own routes ---------------------------------------------------------------------

/** `/edge/validate` downstream, so another Edge (or our service) can chain behind this one. */
async function edgeValidate(request: IRequest, env: Env): Promise<Response> {
  const limit = await env.RL_EDGE_VALIDATE_CLIENT.limit({ key: `edge-validate:${clientKey(request)}` });
  if (!limit.success) return tooManyRequests(60);
  const body = parseInput(edgeValidateBody, await readJsonBody(request), '/body');
  const candidates = [...new Set(body.tokens)].filter(wellFormedToken);
  const answers = await Promise.all(candidates.map((secret) => tokenFor(env, secret)));
  const tokens = answers.flatMap((token) =>
    token && token.type !== 'admin'
      ? [{ token: token.token, type: token.type, projects: token.projects, environment: token.environment }]
      : [],
  );
  return json({ tokens });
}

/** The upstream's webhook integration calls this on every flag change: every scope is polled now. */
async function webhook(request: IRequest, env: Env): Promise<Response> {
  const limit = await env.RL_EDGE_WEBHOOK_CLIENT?.limit({ key: `edge-webhook:${clientKey(request)}` });
  if (limit && !limit.success) return tooManyRequests(60);
  if (!env.EDGE_WEBHOOK_SECRET) throw notFound('The webhook is off: set the EDGE_WEBHOOK_SECRET secret to turn it on.');
  if (!(await holdsWebhookSecret(request, env))) throw authenticationRequired(request.headers.has('authorization'));
  await request.body?.cancel();
  return json(await syncObject(env).refreshAll());
}

/** Everything the service has that this mode does not: Unleash's 404 body, saying why. */
function adminOff(request: IRequest, env: Env): never {
  const path = new URL(request.url).pathname;
  throw notFound(
    `This Worker runs in Edge mode in front of ${env.EDGE_UPSTREAM_URL ?? 'an upstream Unleash'}: the admin API and UI are off here (${path}). Use the upstream Unleash.`,
  );
}

export function edgeRouter(): EdgeRouter {
  const router = Router<IRequest, [Env, ExecutionContext], Response>({ catch: (error, request) => toErrorResponse(error, request) });
  // The frontend API's answers carry CORS headers, errors included (browsers must read them).
  const frontend =
    (handler: (request: IRequest, env: Env, ctx: ExecutionContext) => Promise<Response>) =>
    async (request: IRequest, env: Env, ctx: ExecutionContext) => {
      let response: Response;
      try {
        response = await handler(request, env, ctx);
      } catch (error) {
        response = toErrorResponse(error, request);
      }
      return withCorsHeaders(response, request, env);
    };
  router
    .get('/api/client/features', clientFeatures)
    .post('/api/client/features', clientFeatures)
    .get('/api/client/features/:featureName', clientFeature)
    .get('/api/client/delta', clientDelta)
    .get('/api/client/streaming', clientStreaming)
    .post('/api/client/register', registerHandler('client'))
    .post('/api/client/metrics', metricsHandler('client'))
    .post('/api/client/metrics/bulk', bulkMetrics)
    .post('/edge/validate', edgeValidate)
    .post('/edge/webhook', webhook)
    .get('/internal-backstage/health', health)
    .get('/internal-backstage/ready', ready)
    .get('/internal-backstage/tokens', backstageTokens)
    .get('/internal-backstage/features', backstageFeatures)
    .get('/internal-backstage/metrics', backstageMetrics);
  for (const base of ['/api/frontend', '/api/proxy']) {
    router
      .options(`${base}`, (request: IRequest, env: Env) => preflight(request, env))
      .options(`${base}/*`, (request: IRequest, env: Env) => preflight(request, env))
      .get(base, frontend(frontendAnswer))
      .post(base, frontend(frontendAnswer))
      .get(`${base}/all`, frontend(frontendAll))
      .post(`${base}/all`, frontend(frontendAll))
      .get(`${base}/features/:featureName`, frontend(frontendFeature))
      .post(`${base}/features/:featureName`, frontend(frontendFeature))
      .post(`${base}/client/metrics`, frontend(metricsHandler('frontend')))
      .post(`${base}/client/register`, frontend(registerHandler('frontend')));
  }
  router.all('*', adminOff);
  return router;
}
