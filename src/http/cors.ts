/**
 * CORS as Unleash sends it on the frontend API, on answers and errors alike. The allowed
 * origins come from FRONTEND_API_ORIGINS (`*` by default).
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
export function withCors(handler: Handler): Handler {
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
