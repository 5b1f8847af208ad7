/**
 * The frontend API (`/api/frontend`): evaluates every flag the token may see for the
 * caller's context and returns the enabled ones with their variant. CORS as Unleash sends
 * it, on answers and errors alike.
 */
import type { SdkRequestContext as RequestContext, RouteHandler } from '../../auth/guard';
import type { Env } from '../../env';
import { ApiError, toErrorResponse } from '../../http/errors';
import { readJsonBody } from '../../http/body';
import { parseInput } from '../../http/validation';
import { callerOf, clientIp } from '../client-api/routes';
import { metricsBody } from '../client-api/schema';
import { evaluatorFor, snapshotFor } from '../client-api/snapshot';
import { recordMetrics } from '../client-api/usage';
import { murmur3 } from '../evaluation/murmur';
import type { Context, VariantResult } from '../evaluation/types';
import { contextFromBody, contextFromQuery } from './context';

const MAX_AGE_SECONDS = '86400';

function allowedOrigin(env: Env, origin: string | null): string | null {
  const configured = (env.FRONTEND_API_ORIGINS ?? '*').split(',').map((item) => item.trim()).filter(Boolean);
  if (configured.length === 0 || configured.includes('*')) return '*';
  return origin !== null && configured.includes(origin) ? origin : null;
}

function corsHeaders(env: Env, request: Request): Record<string, string> {
  const origin = allowedOrigin(env, request.headers.get('origin'));
  return {
    vary: 'Origin',
    ...(origin ? { 'access-control-allow-origin': origin } : {}),
    'access-control-allow-credentials': 'true',
    'access-control-expose-headers': 'ETag',
  };
}

/** Adds CORS headers to whatever the handler answered, errors included. */
export function withCors(handler: RouteHandler): RouteHandler {
  return async (request, env, ctx) => {
    let response: Response;
    try {
      response = await handler(request, env, ctx);
    } catch (error) {
      response = toErrorResponse(error, request);
    }
    const headers = new Headers(response.headers);
    for (const [name, value] of Object.entries(corsHeaders(env, request))) headers.set(name, value);
    return new Response(response.body, { status: response.status, headers });
  };
}

/** The CORS preflight: no authentication, as browsers send none. */
export function preflight(request: Request, env: Env): Response {
  const requested = request.headers.get('access-control-request-headers');
  return new Response(null, {
    status: 204,
    headers: {
      ...corsHeaders(env, request),
      vary: 'Origin, Access-Control-Request-Headers',
      'access-control-allow-methods': 'GET,HEAD,PUT,PATCH,POST,DELETE',
      ...(requested ? { 'access-control-allow-headers': requested.slice(0, 1000) } : {}),
      'access-control-max-age': MAX_AGE_SECONDS,
    },
  });
}

interface FrontendToggle {
  name: string;
  enabled: true;
  variant: VariantResult;
  impressionData: boolean;
}

async function evaluateAll(env: Env, { principal }: RequestContext, context: Context): Promise<FrontendToggle[]> {
  const token = principal.token;
  const environment = token.environment === '*' ? 'default' : token.environment;
  const snapshot = await snapshotFor(env, environment);
  const { evaluator, features } = evaluatorFor(snapshot, token.projects);
  const toggles: FrontendToggle[] = [];
  for (const feature of features) {
    const result = evaluator.evaluate(feature.name, context);
    if (result.enabled) toggles.push({ name: feature.name, enabled: true, variant: result.variant, impressionData: feature.impressionData });
  }
  return toggles;
}

function togglesResponse(request: Request, toggles: FrontendToggle[], conditional: boolean): Response {
  const body = JSON.stringify({ toggles });
  // Express's weak ETag over the body, which Unleash's frontend API sends and honours on GET.
  const etag = `W/"${body.length.toString(16)}-${murmur3(body).toString(16).padStart(8, '0')}"`;
  const headers = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache', etag };
  if (conditional) {
    const match = request.headers.get('if-none-match');
    if (match && match.split(',').some((candidate) => candidate.trim() === etag)) return new Response(null, { status: 304, headers: { etag } });
  }
  return new Response(body, { headers });
}

export async function getToggles(context: RequestContext): Promise<Response> {
  const { request, env } = context;
  const evaluationContext = contextFromQuery(new URL(request.url).searchParams, clientIp(request));
  return togglesResponse(request, await evaluateAll(env, context, evaluationContext), true);
}

export async function postToggles(context: RequestContext): Promise<Response> {
  const { request, env } = context;
  const evaluationContext = contextFromBody(await readJsonBody(request), clientIp(request));
  return togglesResponse(request, await evaluateAll(env, context, evaluationContext), false);
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
