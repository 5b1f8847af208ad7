/**
 * CORS as Unleash sends it on the frontend API, on answers and errors alike. The allowed
 * origins are the ones saved with `POST /api/admin/ui-config/cors` (this isolate keeps the
 * list it was last given, see `useSavedOrigins`); until any are saved, FRONTEND_API_ORIGINS
 * (`*` by default), as Unleash's UNLEASH_FRONTEND_API_ORIGINS.
 */
import type { IRequest } from 'itty-router';
import type { Env } from '../env';
import { toErrorResponse } from './errors';

type Handler = (request: IRequest, env: Env, ctx: ExecutionContext) => Promise<Response>;

const MAX_AGE_SECONDS = '86400';

/**
 * Request headers a preflight always allows: what unleash-proxy-client and the other browser
 * SDKs send. Others the browser asks for (the SDK's `customHeaders` and `headerName`) are
 * allowed too, as Unleash allows any.
 */
const SDK_REQUEST_HEADERS = ['authorization', 'content-type', 'if-none-match', 'unleash-appname', 'unleash-connection-id', 'unleash-sdk'];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]{1,100}$/;
const MAX_EXTRA_HEADERS = 32;

interface AllowedOrigins {
  any: boolean;
  list: readonly string[];
}

function originsOf(list: readonly string[]): AllowedOrigins {
  // As Unleash: an empty list, or one holding `*`, allows every origin.
  return { any: list.length === 0 || list.includes('*'), list };
}

// FRONTEND_API_ORIGINS parsed once per isolate (and again if it changes): read per request.
let configured: (AllowedOrigins & { source: string | undefined }) | undefined;
/** The saved list this isolate was last given; null while none is saved. */
let saved: AllowedOrigins | null = null;

/** Moves each time this isolate is given the saved list: what CORS headers depend on besides the request. */
let savedGeneration = 0;

/** The origins saved in D1 (null: none saved), as the ui-config module last read them. */
export function useSavedOrigins(list: readonly string[] | null): void {
  saved = list === null ? null : originsOf(list);
  savedGeneration++;
}

/**
 * A key for everything `setCorsHeaders` reads besides the request's Origin: headers kept under
 * it (with the Origin) stay right until the allowed origins change.
 */
export function corsStateKey(env: Env): string {
  return `${savedGeneration}\u0000${env.FRONTEND_API_ORIGINS ?? '\u0000'}`;
}

/** The configured origins (FRONTEND_API_ORIGINS), what applies while none are saved. */
export function configuredOrigins(env: Env): readonly string[] {
  if (configured === undefined || configured.source !== env.FRONTEND_API_ORIGINS) {
    const list = (env.FRONTEND_API_ORIGINS ?? '*')
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
    configured = { source: env.FRONTEND_API_ORIGINS, ...originsOf(list) };
  }
  return configured.list.length === 0 ? ['*'] : configured.list;
}

function allowedOrigins(env: Env): AllowedOrigins {
  if (saved !== null) return saved;
  configuredOrigins(env);
  return configured!;
}

/**
 * CORS response headers. With every origin allowed the answer is `*` and no
 * Access-Control-Allow-Credentials: browsers refuse `*` together with credentials, and the
 * frontend API authenticates by header, not cookie. A configured origin list reflects an
 * allowed origin with credentials allowed; any other origin gets no Allow-Origin at all.
 */
export function setCorsHeaders(headers: Headers, env: Env, request: Request): void {
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
export function withCors(handler: Handler, refreshOrigins?: (env: Env) => Promise<void>): Handler {
  return async (request, env, ctx) => {
    let response: Response;
    try {
      // Inside the try: an error reading the saved origins is answered with CORS headers too.
      if (refreshOrigins) await refreshOrigins(env);
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
