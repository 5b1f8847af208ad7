/**
 * The client API the backend SDKs poll (`/api/client/*`) and the token check Unleash Edge
 * calls (`/edge/validate`).
 */
import type * as v from 'valibot';
import type { IRequest } from 'itty-router';
import { findRecord } from '../../auth/token-records';
import { hashOfKey } from '../../auth/key-hashes';
import { markKeysSeen } from '../../auth/authenticate';
import { log } from '../../log';
import { reportedTokenType, type ApiTokenRecord } from '../../auth/principal';
import { badRequest, notFound, validationError } from '../../http/errors';
import { clientIp } from '../../http/client-ip';
import { urlOf } from '../../http/request-url';
import { BoundedMap } from '../../lib/bounded-map';
import { empty, json, untyped, type UntypedAnswer } from '../../http/responses';
import { preview } from '../../http/validation';
import { murmur3 } from '../evaluation/murmur';
import { parseSemver, compareSemver } from '../evaluation/semver';
import { bulkMetricsBody, edgeInstanceBody, edgeValidateBody, metricsBody, registerBody } from './schema';
import { clientPollInits, featuresResponse, rememberAnswer } from './memo';
import { inScope, snapshotFor, type Snapshot, type SnapshotFeature } from './snapshot';
import { environmentOf } from './token-environment';
import { CLIENT_FEATURES_PATH } from './poll-paths';
import { queueBulkMetrics, queueEdgeInstance, queueMetrics, recordRegistration, type SdkCaller } from './usage';
import { BACKEND_TOKEN_TYPES } from '../../auth/principal';
import { open, route, sdk, type Route, type OpenContext, type SdkContext } from '../../http/route';
import { ClientFeaturesQuery, GetAllClientFeaturesResponse, GetClientFeatureResponse, GetValidTokensResponse } from './schema';

const SEGMENTS_SPEC = parseSemver('4.2.0')!;
const MAX_QUERY_VALUES = 50;
const MAX_QUERY_TEXT = 255;

/** Whether the SDK wants segments listed once (spec ≥ 4.2.0) instead of inlined. */
export function wantsGlobalSegments(request: Request): boolean {
  const header = request.headers.get('unleash-client-spec');
  if (header === null) return false;
  const version = parseSemver(header);
  if (!version || header.trim() !== header) {
    throw badRequest(`Invalid prefix in the Unleash-Client-Spec header: ${preview(header)}.`);
  }
  return compareSemver(version, SEGMENTS_SPEC) >= 0;
}

export interface ClientQuery {
  project?: string[];
  namePrefix?: string;
  tag?: [string, string][];
  environment?: string;
  inlineSegmentConstraints: boolean;
}

function queryText(name: string, value: string): string {
  if (value.length > MAX_QUERY_TEXT || !value.isWellFormed() || value.includes('\u0000')) {
    throw validationError([
      {
        path: `/query/${name}`,
        message: `The \`/query/${name}\` property must be text of at most ${MAX_QUERY_TEXT} characters. You sent ${preview(value)}.`,
      },
    ]);
  }
  return value;
}

function queryList(params: URLSearchParams, name: string): string[] {
  const values = params.getAll(name);
  if (values.length > MAX_QUERY_VALUES) {
    throw validationError([
      { path: `/query/${name}`, message: `The \`/query/${name}\` property must have at most ${MAX_QUERY_VALUES} items.` },
    ]);
  }
  return values.map((value) => queryText(name, value));
}

/** The query as Unleash echoes it; the token's scope wins over `project` and `environment`. */
export function effectiveQuery(
  params: URLSearchParams,
  token: Pick<ApiTokenRecord, 'projects' | 'environment'>,
  inlineSegmentConstraints: boolean,
): ClientQuery {
  // Keys in Unleash's order: project, namePrefix, tag, environment, inlineSegmentConstraints.
  const query: Omit<ClientQuery, 'inlineSegmentConstraints'> = {};
  const requestedProjects = queryList(params, 'project');
  if (!token.projects.includes('*')) query.project = [...token.projects];
  else if (requestedProjects.length > 0) query.project = requestedProjects;
  const namePrefix = params.get('namePrefix');
  if (namePrefix !== null && namePrefix !== '') query.namePrefix = queryText('namePrefix', namePrefix);
  const tags = queryList(params, 'tag');
  if (tags.length > 0) {
    query.tag = tags.map((tag, index) => {
      const colon = tag.indexOf(':');
      if (colon <= 0 || colon === tag.length - 1) {
        throw validationError([
          { message: `"tag[${index}]" with value ${preview(tag)} fails to match the tag pattern. You provided ${preview(tag)}.` },
        ]);
      }
      return [tag.slice(0, colon), tag.slice(colon + 1)];
    });
  }
  const requestedEnvironment = params.get('environment');
  if (token.environment !== '*') query.environment = token.environment;
  else if (requestedEnvironment) query.environment = queryText('environment', requestedEnvironment);
  return { ...query, inlineSegmentConstraints };
}

export function matches(feature: SnapshotFeature, query: ClientQuery): boolean {
  if (query.project && !inScope(query.project, feature.project)) return false;
  // Case-sensitive and literal, unlike SQLite's LIKE.
  if (query.namePrefix && !feature.name.startsWith(query.namePrefix)) return false;
  if (query.tag && !query.tag.some(([type, value]) => feature.tags.has(`${type}:${value}`))) return false;
  return true;
}

function hex8(value: number): string {
  return value.toString(16).padStart(8, '0');
}

// Bodies kept per (environment, query), as UTF-8 bytes: encoded once, not on every response.
// Bounded by count and by total size, since a large flag set makes each body large and an
// isolate has 128 MB.
const RESPONSE_CACHE_MAX_BYTES = 16_000_000;
const responseCache = new BoundedMap<string, { revision: number; body: Uint8Array }>(
  { entries: 256, weight: RESPONSE_CACHE_MAX_BYTES },
  { weight: (_key, entry) => entry.body.byteLength },
);
const encoder = new TextEncoder();

function rememberBody(key: string, entry: { revision: number; body: Uint8Array }): void {
  // A body over the whole bound is not kept; it empties the cache, as it did when eviction ran first.
  if (entry.body.byteLength > RESPONSE_CACHE_MAX_BYTES) responseCache.clear();
  else responseCache.set(key, entry);
}

function featuresBody(snapshot: Snapshot, query: ClientQuery, globalSegments: boolean, meta: string): string {
  const parts: string[] = [];
  for (const feature of snapshot.features) {
    if (matches(feature, query)) parts.push(globalSegments ? feature.jsonWithSegmentIds : feature.jsonInlined);
  }
  const segments = globalSegments ? `,"segments":${snapshot.segmentsJson}` : '';
  return `{"version":2,"features":[${parts.join(',')}],"query":${JSON.stringify(query)}${segments},"meta":${meta}}`;
}

// The client API's answers are bytes built once per revision (and served from the memo): not typed.
async function features({ request, env, principal }: SdkContext): Promise<UntypedAnswer> {
  const globalSegments = wantsGlobalSegments(request);
  const params = urlOf(request).searchParams;
  const query = effectiveQuery(params, principal.token, !globalSegments);
  const snapshot = await snapshotFor(env, environmentOf(principal.token, query.environment ?? null));
  const answer = featuresAnswer(snapshot, query, globalSegments);
  rememberAnswer(request, principal.token, answer);
  return untyped(featuresResponse(request.headers.get('if-none-match'), answer));
}

/** The client API's answer from a snapshot, whatever its source (D1 here, an upstream in Edge mode: src/edge/). */
export function featuresAnswer(snapshot: Snapshot, query: ClientQuery, globalSegments: boolean) {
  const queryJson = JSON.stringify(query);
  const queryHash = hex8(murmur3(queryJson));
  const etag = `"${queryHash}:${snapshot.revision}"`;
  const key = `${snapshot.environment}\u0000${queryJson}`;
  let cached = responseCache.get(key);
  if (!cached || cached.revision !== snapshot.revision) {
    const meta = JSON.stringify({ revisionId: snapshot.revision, etag, queryHash });
    cached = { revision: snapshot.revision, body: encoder.encode(featuresBody(snapshot, query, globalSegments, meta)) };
    rememberBody(key, cached);
  }
  return { etag, body: cached.body, revision: snapshot.revision, ...clientPollInits(etag) };
}

export function callerOf(request: IRequest, token: ApiTokenRecord): SdkCaller {
  return { environment: token.environment === '*' ? 'default' : token.environment, clientIp: clientIp(request) };
}

async function register({ request, env, principal, body }: SdkContext<v.InferOutput<typeof registerBody>>) {
  await recordRegistration(env, callerOf(request, principal.token), body);
  return empty(202);
}

async function metrics({ request, env, principal, body }: SdkContext<v.InferOutput<typeof metricsBody>>) {
  await queueMetrics(env, callerOf(request, principal.token), body);
  return empty(202);
}

/** Edge batches up to about 100 kB of metrics per call; leave it room. */
const BULK_MAX_BODY_BYTES = 1_000_000;

async function bulkMetrics({ request, env, ctx, principal, body }: SdkContext<v.InferOutput<typeof bulkMetricsBody>>) {
  await queueBulkMetrics(env, callerOf(request, principal.token), body);
  // Like 8.2.0, which marks them in the background: the answer does not wait for it.
  if (body.seenTokens !== undefined && body.seenTokens.length > 0) {
    ctx.waitUntil(markKeysSeen(env, body.seenTokens).catch((error: unknown) => log.warn('seenTokens not marked', { error })));
  }
  return empty(202);
}

/**
 * Unleash Edge's report about itself (Enterprise-only in Unleash; Edge backs off on 404, so
 * answering it keeps Edge quiet and shows it among the app's instances).
 */
async function edgeMetrics({ request, env, principal, body }: SdkContext<v.InferOutput<typeof edgeInstanceBody>>) {
  await queueEdgeInstance(env, callerOf(request, principal.token), body);
  return empty(202);
}

/**
 * Unleash Edge asks which of its tokens are valid; no Authorization header, as in Unleash.
 * Answers from the same isolate cache -> KV -> D1 path as every request.
 */
async function edgeValidate({ env, ctx, body }: OpenContext<v.InferOutput<typeof edgeValidateBody>>) {
  const candidates = [...new Set(body.tokens)].filter((token) => token.length > 0 && token.length <= 1024 && token.isWellFormed());
  // Looked up side by side: on a cold isolate each is a KV read (and a D1 read when KV misses).
  const records = await Promise.all(candidates.map(async (token) => findRecord(env, ctx, 'apikey', await hashOfKey(token))));
  const now = Date.now();
  const valid = candidates.flatMap((token, index) => {
    const record = records[index];
    if (!record || (record.expiresAt !== null && Date.parse(record.expiresAt) <= now)) return [];
    return [
      {
        token,
        type: reportedTokenType(record.type),
        projects: record.projects,
        ...(record.environment !== '*' ? { environment: record.environment } : {}),
      },
    ];
  });
  return json({ tokens: valid });
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: CLIENT_FEATURES_PATH,
    access: sdk(BACKEND_TOKEN_TYPES),
    tag: 'Client',
    operationId: 'getAllClientFeatures',
    summary: 'The flags a backend SDK evaluates, with segments',
    query: ClientFeaturesQuery,
    queryReadByHandler: true,
    responses: {
      200: { description: 'Success', schema: GetAllClientFeaturesResponse },
      304: { description: 'Not modified: the ETag still matches', schema: null },
    },
    errors: [400, 401, 403],
    handler: features,
  }),
  route({
    method: 'GET',
    path: `${CLIENT_FEATURES_PATH}/:featureName`,
    access: sdk(BACKEND_TOKEN_TYPES),
    tag: 'Client',
    operationId: 'getClientFeature',
    summary: 'One flag as a backend SDK sees it',
    query: ClientFeaturesQuery,
    queryReadByHandler: true,
    responses: { 200: { description: 'Success', schema: GetClientFeatureResponse } },
    errors: [400, 403, 404],
    handler: async ({ request, env, principal, params }) => {
      const globalSegments = wantsGlobalSegments(request);
      const name = params.featureName;
      const query = effectiveQuery(new URL(request.url).searchParams, principal.token, !globalSegments);
      const snapshot = await snapshotFor(env, environmentOf(principal.token, query.environment ?? null));
      const found = snapshot.byName.get(name);
      if (!found || !matches(found, query)) throw notFound(`Could not find feature flag ${name}`);
      return untyped(
        new Response(globalSegments ? found.jsonWithSegmentIds : found.jsonInlined, {
          headers: { 'content-type': 'application/json; charset=utf-8' },
        }),
      );
    },
  }),
  route({
    method: 'POST',
    path: '/api/client/register',
    access: sdk(BACKEND_TOKEN_TYPES),
    tag: 'Client',
    operationId: 'registerClientApplication',
    summary: 'Register an SDK instance',
    body: registerBody,
    responses: { 202: { description: 'Accepted', schema: null } },
    errors: [400, 401, 403, 413, 415],
    handler: register,
  }),
  route({
    method: 'POST',
    path: '/api/client/metrics',
    access: sdk(BACKEND_TOKEN_TYPES),
    tag: 'Client',
    operationId: 'registerClientMetrics',
    summary: 'Report flag usage from an SDK',
    body: metricsBody,
    responses: { 202: { description: 'Accepted', schema: null } },
    errors: [400, 413],
    handler: metrics,
  }),
  route({
    method: 'POST',
    path: '/api/client/metrics/bulk',
    access: sdk(BACKEND_TOKEN_TYPES),
    tag: 'Edge',
    operationId: 'clientBulkMetrics',
    summary: 'Report usage and instances forwarded by Unleash Edge',
    body: bulkMetricsBody,
    maxBodyBytes: BULK_MAX_BODY_BYTES,
    responses: { 202: { description: 'Accepted', schema: null } },
    errors: [400, 403],
    handler: bulkMetrics,
  }),
  route({
    method: 'POST',
    path: '/api/client/metrics/edge',
    access: sdk(BACKEND_TOKEN_TYPES),
    tag: 'Edge',
    operationId: 'edgeInstanceData',
    summary: "Report Unleash Edge's own instance data",
    body: edgeInstanceBody,
    maxBodyBytes: BULK_MAX_BODY_BYTES,
    responses: { 202: { description: 'Accepted', schema: null } },
    errors: [400, 401, 403],
    handler: edgeMetrics,
  }),
  route({
    method: 'POST',
    path: '/edge/validate',
    access: open('edge-validate'),
    tag: 'Edge',
    operationId: 'getValidTokens',
    summary: 'Tell Unleash Edge which of its keys are valid',
    body: edgeValidateBody,
    responses: { 200: { description: 'Success', schema: GetValidTokensResponse } },
    errors: [400, 413, 429],
    handler: edgeValidate,
  }),
];
