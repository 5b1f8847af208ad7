/**
 * Route guards: each route says who may call it, and the handler receives a typed context
 * with the authenticated principal.
 */
import type { IRequest } from 'itty-router';
import { noteLocalWrite } from '../db/revision';
import type { Env } from '../env';
import { noAccess } from '../http/errors';
import { authenticate } from './authenticate';
import { requireAnyPermission, type Permission } from './permissions';
import type { ApiTokenPrincipal, ApiTokenType, Principal } from './principal';

export interface RequestContext {
  request: IRequest;
  env: Env;
  ctx: ExecutionContext;
  principal: Principal;
}

/** The context of an SDK route: its caller is always an API token. */
export interface SdkRequestContext extends RequestContext {
  principal: ApiTokenPrincipal;
}

export type GuardedHandler = (context: RequestContext) => Promise<Response> | Response;
export type SdkHandler = (context: SdkRequestContext) => Promise<Response> | Response;
export type RouteHandler = (request: IRequest, env: Env, ctx: ExecutionContext) => Promise<Response>;

function wrongTokenType(): never {
  throw noAccess('invalid token: expected a different token type for this endpoint');
}

/**
 * An admin-API route. `anyOf` lists the permissions of which the caller needs one; an empty
 * list means any authenticated admin-API caller (Unleash's NONE). Client and frontend
 * tokens get 403.
 */
export function adminRoute(anyOf: readonly Permission[], handler: GuardedHandler): RouteHandler {
  return async (request, env, ctx) => {
    const principal = await authenticate(request, env, ctx);
    if (principal.kind === 'api-token' && principal.token.type !== 'admin') wrongTokenType();
    requireAnyPermission(principal, anyOf);
    if (READ_METHODS.has(request.method)) return handler({ request, env, ctx, principal });
    try {
      return await handler({ request, env, ctx, principal });
    } finally {
      // The write is done (or failed): the SDK APIs of this isolate see it on their next request.
      noteLocalWrite();
    }
  };
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** An SDK route (client or frontend API) open to the listed token types. */
export function sdkRoute(types: readonly ApiTokenType[], handler: SdkHandler): RouteHandler {
  return async (request, env, ctx) => {
    const principal = await authenticate(request, env, ctx);
    if (principal.kind !== 'api-token' || !types.includes(principal.token.type)) wrongTokenType();
    return handler({ request, env, ctx, principal });
  };
}
