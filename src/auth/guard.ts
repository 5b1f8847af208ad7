/**
 * Route guards: each route says who may call it, and the handler receives a typed context
 * with the authenticated principal.
 *
 * An admin route declares either a plain list of permissions (any one of which lets the
 * caller in, checked root-wide) or a rule naming the permission and where it applies:
 *
 *   adminRoute({ permission: UPDATE_FEATURE_ENVIRONMENT, project: 'param:projectId',
 *                environment: 'param:environment' }, handler)
 *
 * `project` is read from a path parameter (`param:<name>`), from the project of the feature
 * named by a path parameter (`feature:<name>`, for routes such as `/features/:featureName/tags`),
 * from the project of the segment named by a path parameter (`segment:<name>`), or computed
 * by a function. `body:<field>` says the project is in the body: the guard then refuses only
 * callers who hold none of the permissions anywhere, and the handler, once it has read the
 * body, checks again in that project with `requireAnyPermission`.
 */
import { eq } from 'drizzle-orm';
import type { IRequest } from 'itty-router';
import { getDb } from '../db/client';
import { features, segments } from '../db/schema';
import { noteLocalWrite } from '../db/revision';
import type { Env } from '../env';
import { noAccess } from '../http/errors';
import { authenticate } from './authenticate';
import { requireSameOriginForCookieWrite } from './same-origin';
import { ADMIN, requireAnyPermission, type Permission } from './permissions';
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

type ParamRef = `param:${string}`;
/** Where a route's project comes from. */
export type ProjectLocator =
  | ParamRef
  | `feature:${string}`
  | `segment:${string}`
  | `body:${string}`
  | ((context: RequestContext) => Promise<string | undefined> | string | undefined);

/** What an admin route requires: one of `permission` in that project and environment. */
export interface RouteRule {
  permission: Permission | readonly Permission[];
  project?: ProjectLocator;
  environment?: ParamRef;
}

function wrongTokenType(): never {
  throw noAccess('invalid token: expected a different token type for this endpoint');
}

function param(request: IRequest, name: string): string | undefined {
  const value = request.params[name];
  if (value === undefined || value === '') return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

async function projectOfFeature(env: Env, name: string | undefined): Promise<string | undefined> {
  if (name === undefined) return undefined;
  const [row] = await getDb(env).select({ project: features.project }).from(features).where(eq(features.name, name)).limit(1);
  return row?.project;
}

async function projectOfSegment(env: Env, id: string | undefined): Promise<string | undefined> {
  if (id === undefined || !/^\d{1,9}$/.test(id)) return undefined;
  const [row] = await getDb(env)
    .select({ project: segments.segmentProjectId })
    .from(segments)
    .where(eq(segments.id, Number(id)))
    .limit(1);
  return row?.project ?? undefined;
}

async function locateProject(locator: ProjectLocator | undefined, context: RequestContext): Promise<string | undefined> {
  if (locator === undefined) return undefined;
  if (typeof locator === 'function') return locator(context);
  const colon = locator.indexOf(':');
  const kind = locator.slice(0, colon);
  const value = param(context.request, locator.slice(colon + 1));
  if (kind === 'feature') return projectOfFeature(context.env, value);
  if (kind === 'segment') return projectOfSegment(context.env, value);
  return value;
}

/** The rule of a route, whichever form it was declared in. */
function ruleOf(declared: readonly Permission[] | RouteRule): RouteRule {
  return Array.isArray(declared) ? { permission: declared } : (declared as RouteRule);
}

/**
 * An admin-API route. `rule` is either the permissions of which the caller needs one
 * (root-wide; an empty list means any authenticated admin-API caller, Unleash's NONE) or a
 * `RouteRule` placing the check in a project and environment. ADMIN passes every check.
 * Client and frontend tokens get 403.
 */
export function adminRoute(rule: readonly Permission[] | RouteRule, handler: GuardedHandler): RouteHandler {
  const { permission, project, environment } = ruleOf(rule);
  const anyOf: readonly Permission[] = typeof permission === 'string' ? [permission] : permission;
  return async (request, env, ctx) => {
    const principal = await authenticate(request, env, ctx);
    if (principal.kind === 'api-token' && principal.token.type !== 'admin') wrongTokenType();
    requireSameOriginForCookieWrite(request, principal, env);
    const context: RequestContext = { request, env, ctx, principal };
    if (anyOf.length > 0 && typeof project === 'string' && project.startsWith('body:')) {
      if (!anyOf.some((wanted) => principal.access.grants.some((grant) => grant.permission === wanted || grant.permission === ADMIN))) {
        requireAnyPermission(principal, anyOf);
      }
    } else if (anyOf.length > 0) {
      const projectId = await locateProject(project, context);
      const environmentId = environment === undefined ? undefined : param(request, environment.slice('param:'.length));
      requireAnyPermission(principal, anyOf, projectId, environmentId);
    }
    if (READ_METHODS.has(request.method)) return handler(context);
    try {
      return await handler(context);
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
