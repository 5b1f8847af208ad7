/**
 * Routes as data. Each module exports its routes as a list of `Route` objects; `register()`
 * turns each into one router handler that applies, always in this order:
 *
 *   CORS (on answers and errors) -> rate limit -> authentication and the caller's kind ->
 *   the cookie-write origin check -> the admin-write guard (maintenance mode) -> path
 *   parameters -> the permission check in its project and environment -> query and body
 *   validation (400 ValidationError) -> the handler -> write tracking (and, after admin and
 *   public writes, the `afterWrite` hook: the audit events' integration deliveries)
 *
 * The body is read only after the permission check, so a caller without access learns nothing
 * about what the route accepts. The OpenAPI document (src/openapi) is built from the same
 * objects, so what is documented is what is served.
 */
import type { IRequest, RouterType } from 'itty-router';
import type * as v from 'valibot';
import { authenticate, type PersonSignIn } from '../auth/authenticate';
import { requireAnyPermission, type Permission } from '../auth/permissions';
import { requireSameOriginForCookieWrite } from '../auth/same-origin';
import type { ApiTokenPrincipal, ApiTokenType, Principal } from '../auth/principal';
import { noteLocalWrite } from '../db/coherence';
import type { Env } from '../env';
import { DEFAULT_MAX_BODY_BYTES, readJsonBody } from './body';
import type { EmptyAnswer, JsonAnswer, UntypedAnswer } from './responses';
import { withCors } from './cors';
import { ApiError, noAccess, renamedBadRequest, toErrorResponse } from './errors';
import { decodePathParams } from './params';
import { tooManyRequests, withinLimit, RATE_LIMIT_BUCKETS, type RateLimitBucket } from './rate-limit';
import { urlOf } from './request-url';
import { parseInput } from './validation';

/** `ALL` is for catch-alls only: they are not operations and are left out of the document. */
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS' | 'ALL';

/** The path parameters named in a path: `'/projects/:projectId/x'` -> `{ projectId: string }`. */
type PathParams<Path extends string> = Path extends `${string}:${infer Param}/${infer Rest}`
  ? { [Name in Param]: string } & PathParams<`/${Rest}`>
  : Path extends `${string}:${infer Param}`
    ? { [Name in Param]: string }
    : Record<never, string>;

/** Where a permission is checked: a project and, for environment-scoped permissions, an environment. */
export interface Scope {
  project?: string | undefined;
  environment?: string | undefined;
}

/** What a scope is computed from before the body is read: the decoded path parameters. */
export interface ScopeInput {
  params: Readonly<Record<string, string | undefined>>;
  env: Env;
  request: IRequest;
}

/** An admin route's rule: one of `permissions` (empty: any admin-API caller), checked in a scope. */
export interface AdminAccess {
  readonly kind: 'admin';
  readonly permissions: readonly Permission[];
  /** The scope, from the path (or a look-up it names). Without it the check is root-wide. */
  readonly where?: (input: ScopeInput) => Scope | Promise<Scope>;
  /**
   * The scope named by the body (validated against the route's body schema). Until the body is
   * read the caller must hold one of the permissions somewhere; once read, in this scope.
   */
  readonly whereBody?: (body: unknown) => Scope;
}

export interface SdkAccess {
  readonly kind: 'sdk';
  readonly tokenTypes: readonly ApiTokenType[];
  readonly rateLimit?: RateLimitBucket;
}

export interface OpenAccess {
  readonly kind: 'open';
  readonly rateLimit?: RateLimitBucket;
}

export type Access = AdminAccess | SdkAccess | OpenAccess;

/** Who may call: one of `permissions` (any one; ADMIN always passes) in the scope `where` gives. */
export function admin(permissions: Permission | readonly Permission[], where?: AdminAccess['where']): AdminAccess {
  return { kind: 'admin', permissions: typeof permissions === 'string' ? [permissions] : permissions, where };
}

/** Like `admin`, with the project (or environment) named by the request body. */
export function adminInBody(
  permissions: Permission | readonly Permission[],
  whereBody: NonNullable<AdminAccess['whereBody']>,
): AdminAccess {
  return { kind: 'admin', permissions: typeof permissions === 'string' ? [permissions] : permissions, whereBody };
}

/** Any caller of the admin API: an admin key, a signed-in user or a personal access token (Unleash's NONE). */
export function authenticated(): AdminAccess {
  return { kind: 'admin', permissions: [] };
}

/** SDK keys of these types; `rateLimit` for routes that browsers reach with a public key. */
export function sdk(tokenTypes: readonly ApiTokenType[], rateLimit?: RateLimitBucket): SdkAccess {
  return { kind: 'sdk', tokenTypes, rateLimit };
}

/** No credential (or one the handler checks itself, such as an invite secret), rate limited by address. */
export function open(rateLimit?: RateLimitBucket): OpenAccess {
  return { kind: 'open', rateLimit };
}

/** A documented answer: its JSON schema (null: no body), a description and notable headers. */
export interface Answer {
  readonly description: string;
  readonly schema: v.GenericSchema | null;
  readonly headers?: Readonly<Record<string, string>>;
  /** Not JSON (e.g. `text/event-stream`, `text/html`): documented, not validated as JSON. */
  readonly contentType?: string;
}

type Responses = Readonly<Record<number, Answer>>;

/**
 * What a handler may answer for one declared status: a JSON body of the status's schema (its
 * output type, as the document describes it), no body where the schema is null; an answer that
 * is not JSON is built by hand (`untyped`).
 */
type AnswerFor<Status extends number, Declared> = Declared extends { readonly contentType: string }
  ? UntypedAnswer
  : Declared extends { readonly schema: infer Schema extends v.GenericSchema }
    ? JsonAnswer<Status, v.InferOutput<Schema>>
    : EmptyAnswer<Status>;

/** The answers a route's handler may give: one per declared status, or one taken out of the types with `untyped`. */
type AnswerTo<R extends Responses> = { [Status in keyof R & number]: AnswerFor<Status, R[Status]> }[keyof R & number] | UntypedAnswer;

type PrincipalOf<A> = A extends AdminAccess ? Principal : A extends SdkAccess ? ApiTokenPrincipal : undefined;
type Output<S> = S extends v.GenericSchema ? v.InferOutput<S> : undefined;

interface RouteContext<A, Params, Query, Body> {
  request: IRequest;
  env: Env;
  ctx: ExecutionContext;
  principal: PrincipalOf<A>;
  params: Params;
  query: Query;
  body: Body;
}

export interface RouteSpec<
  Path extends string,
  A extends Access,
  QuerySchema extends v.GenericSchema | undefined,
  BodySchema extends v.GenericSchema | undefined,
  R extends Responses,
> {
  method: Method;
  path: Path;
  access: A;
  /** Unleash's tag and operationId where Unleash has the operation. */
  tag: string;
  operationId: string;
  /** What the operation does, in plain words (the OpenAPI summary). */
  summary: string;
  description?: string;
  /** Query parameters: an object schema over the query (a repeated parameter arrives as an array). */
  query?: QuerySchema;
  /** The handler parses the query itself (with its own error messages); `query` then only documents it. */
  queryReadByHandler?: boolean;
  /** The JSON body, read and validated after the permission check. */
  body?: BodySchema;
  /** Largest body accepted (413 past it); default DEFAULT_MAX_BODY_BYTES. */
  maxBodyBytes?: number;
  /** The body is read by the handler itself (streamed); `body` then only documents it. */
  bodyReadByHandler?: boolean;
  /** Success answers by status; the error answers are added from the access rule. The handler's answers are typed by them. */
  responses: R;
  /** Extra error statuses beyond those every route of its kind can answer. */
  errors?: readonly number[];
  /** CORS as the frontend API answers it, on answers and errors. */
  cors?: boolean;
  /**
   * The name of the route's 400s: the seed's `ValidationError` unless the route is outside the
   * seed's operations and Unleash 6.10.1 names them `BadDataError` there.
   */
  badRequestName?: 'BadDataError';
  /**
   * Renders the route's errors (thrown, and the 429 of its rate limit) in a protocol's own
   * shape instead of Unleash's: SCIM answers RFC 7644's error body.
   */
  renderError?: (error: unknown, request: Request) => Response;
  handler: (context: RouteContext<A, PathParams<Path>, Output<QuerySchema>, Output<BodySchema>>) => AnswerTo<R> | Promise<AnswerTo<R>>;
}

/** A declared route, its types erased: what `register()` and the OpenAPI document read. */
export type Route = RouteSpec<string, Access, v.GenericSchema | undefined, v.GenericSchema | undefined, Responses>;

/** Declares a route; the generic parameters give the handler typed params, query, body and principal. */
export function route<
  const Path extends string,
  A extends Access,
  QuerySchema extends v.GenericSchema | undefined = undefined,
  BodySchema extends v.GenericSchema | undefined = undefined,
  const R extends Responses = Responses,
>(spec: RouteSpec<Path, A, QuerySchema, BodySchema, R>): Route {
  return spec as unknown as Route;
}

/** The query as an object: a parameter given once is a string, given more often an array. */
export function queryObject(searchParams: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of searchParams) {
    const seen = query[name];
    query[name] = seen === undefined ? value : typeof seen === 'string' ? [seen, value] : [...seen, value];
  }
  return query;
}

function wrongTokenType(): never {
  throw noAccess('invalid token: expected a different token type for this endpoint');
}

/** Whether the caller holds one of `anyOf` anywhere (before the body says where). */
function holdsAnywhere(principal: Principal, anyOf: readonly Permission[]): boolean {
  return anyOf.some((wanted) => principal.access.mayAnywhere(wanted));
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Sees every answer a declared route gives, before it leaves the request (the test suite
 * checks them against the document); it may hand back the answer rebuilt after reading it.
 */
export type ResponseObserver = (route: Route, request: Request, response: Response) => Promise<Response>;
let observer: ResponseObserver | undefined;
export function observeResponses(next: ResponseObserver | undefined): void {
  observer = next;
}

type Handler = (request: IRequest, env: Env, ctx: ExecutionContext) => Promise<Response>;

/**
 * What the entry plugs into every route (src/app.ts), so that this file depends on no module:
 * the modules depend on it.
 */
export interface RouteHooks {
  /** Sign-in by Cloudflare Access and the login page's hints (src/identity/sso). */
  readonly signIn: PersonSignIn;
  /** Before an admin-API write's permission check; throws to refuse the write (maintenance mode). */
  readonly guardAdminWrite?: (env: Env, method: Method, path: string) => Promise<void>;
  /** After a write of the admin API or a public route answered below 400, never delaying the answer. */
  readonly afterWrite?: (env: Env, ctx: ExecutionContext) => void;
  /** Before a CORS route (the frontend API) answers: brings the allowed origins up to date. */
  readonly refreshCorsOrigins?: (env: Env) => Promise<void>;
}

async function readBody(route: Route, request: IRequest): Promise<unknown> {
  if (route.body === undefined || route.bodyReadByHandler) return undefined;
  return parseInput(route.body, await readJsonBody(request, route.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES), '/body');
}

function readQuery(route: Route, request: IRequest): unknown {
  if (route.query === undefined || route.queryReadByHandler) return undefined;
  return parseInput(route.query, queryObject(urlOf(request).searchParams), '/query');
}

/** The 429 of a rate limit, in the route's error shape, with `retry-after`. */
function refuseOverLimit(route: Route, request: Request, periodSeconds: number): Response {
  if (route.renderError === undefined) return tooManyRequests(periodSeconds);
  const response = route.renderError(new ApiError(429, 'TooManyRequestsError', 'Too many requests, please try again later.'), request);
  response.headers.set('retry-after', String(periodSeconds));
  return response;
}

/** The one handler a route object becomes. */
function handlerFor(route: Route, hooks: RouteHooks): Handler {
  const access = route.access;
  const call = route.handler as unknown as (
    context: RouteContext<Access, unknown, unknown, unknown> & { principal: Principal | undefined },
  ) => Response | Promise<Response>;
  const writes = !READ_METHODS.has(route.method);
  // SDK posts (frontend evaluation, metrics, registration) change no flag: the SDK APIs need not re-read.
  const changesFlags = writes && access.kind !== 'sdk';
  const guardWrite = writes && access.kind === 'admin' ? hooks.guardAdminWrite : undefined;

  const run: Handler = async (request, env, ctx) => {
    if (access.kind === 'open') {
      const params = decodePathParams(request);
      return call({
        request,
        env,
        ctx,
        principal: undefined,
        params,
        query: readQuery(route, request),
        body: await readBody(route, request),
      });
    }
    const principal = await authenticate(request, env, ctx, hooks.signIn);
    if (access.kind === 'sdk') {
      if (principal.kind !== 'api-token' || !access.tokenTypes.includes(principal.token.type)) wrongTokenType();
      const params = decodePathParams(request);
      return call({ request, env, ctx, principal, params, query: readQuery(route, request), body: await readBody(route, request) });
    }
    if (principal.kind === 'api-token' && principal.token.type !== 'admin') wrongTokenType();
    requireSameOriginForCookieWrite(request, principal, env);
    if (guardWrite !== undefined) await guardWrite(env, route.method, route.path);
    const params = decodePathParams(request);
    const anyOf = access.permissions;
    if (anyOf.length > 0) {
      if (access.whereBody !== undefined) {
        if (!holdsAnywhere(principal, anyOf)) requireAnyPermission(principal, anyOf);
      } else {
        const scope = access.where === undefined ? undefined : await access.where({ params, env, request });
        requireAnyPermission(principal, anyOf, scope?.project, scope?.environment);
      }
    }
    const query = readQuery(route, request);
    const body = await readBody(route, request);
    if (access.whereBody !== undefined && anyOf.length > 0) {
      const scope = access.whereBody(body);
      requireAnyPermission(principal, anyOf, scope.project, scope.environment);
    }
    if (!changesFlags) return call({ request, env, ctx, principal, params, query, body });
    try {
      return await call({ request, env, ctx, principal, params, query, body });
    } finally {
      // The write is done (or failed): the SDK APIs of this isolate see it on their next request.
      noteLocalWrite();
    }
  };

  const bucket = access.kind === 'admin' ? undefined : access.rateLimit;
  const limited: Handler =
    bucket === undefined
      ? run
      : access.kind === 'sdk'
        ? async (request, env, ctx) => {
            // SDK routes: a valid key never counts toward its address's limit (many SDKs share
            // one address behind a NAT); a refused key does (docs/rate-limits.md).
            if (!(await withinLimit(bucket, request, env, 'key')))
              return refuseOverLimit(route, request, RATE_LIMIT_BUCKETS[bucket].periodSeconds);
            try {
              return await run(request, env, ctx);
            } catch (error) {
              const refusedKey = error instanceof ApiError && (error.status === 401 || error.status === 403);
              if (refusedKey && !(await withinLimit(bucket, request, env, 'client'))) {
                return refuseOverLimit(route, request, RATE_LIMIT_BUCKETS[bucket].periodSeconds);
              }
              throw error;
            }
          }
        : async (request, env, ctx) => {
            if (!(await withinLimit(bucket, request, env)))
              return refuseOverLimit(route, request, RATE_LIMIT_BUCKETS[bucket].periodSeconds);
            return run(request, env, ctx);
          };
  // Renamed inside the CORS wrapper, which answers errors itself.
  const name = route.badRequestName;
  const renamed: Handler =
    name === undefined
      ? limited
      : async (request, env, ctx) => {
          try {
            return await limited(request, env, ctx);
          } catch (error) {
            throw renamedBadRequest(error, name);
          }
        };
  const served = route.cors ? withCors(renamed, hooks.refreshCorsOrigins) : renamed;
  // Writes of the admin API and of the public routes (sign-up, sign-in) write audit events;
  // the SDK routes' writes (metrics, registrations) do not.
  const afterWrite = writes && access.kind !== 'sdk' ? hooks.afterWrite : undefined;
  return async (request, env, ctx) => {
    let response: Response;
    try {
      response = await served(request, env, ctx);
    } catch (error) {
      response = route.renderError !== undefined ? route.renderError(error, request) : toErrorResponse(error, request);
    }
    if (afterWrite !== undefined && response.status < 400) afterWrite(env, ctx);
    return observer === undefined ? response : observer(route, request, response);
  };
}

/** How specific a path is, segment by segment: a literal before a parameter before a wildcard. */
function specificity(path: string): number[] {
  return path.split('/').map((segment) => (segment.startsWith(':') ? 1 : segment === '*' ? 2 : 0));
}

/**
 * A total order (lexicographic, a shorter path first on a common prefix): Array.sort needs one.
 * Calling paths of different lengths equal made `/ready` "equal" to both `/user-admin/:id` and
 * `/user-admin/admin-count`, and the sort then put the parameter first.
 */
function compareSpecificity(a: Route, b: Route): number {
  const left = specificity(a.path);
  const right = specificity(b.path);
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    if (left[index] !== right[index]) return left[index]! - right[index]!;
  }
  return left.length - right.length;
}

/**
 * Adds the routes to the router. itty-router answers with the first route that matches, so
 * the more specific paths go first: `/user-admin/access` is never taken for `/user-admin/:id`.
 * Otherwise the order given is kept.
 */
export function register(
  router: RouterType<IRequest, [Env, ExecutionContext], Response>,
  routes: readonly Route[],
  hooks: RouteHooks,
): void {
  for (const declared of [...routes].sort(compareSpecificity)) {
    router[declared.method.toLowerCase() as 'get'](declared.path, handlerFor(declared, hooks));
  }
}

/** The context of an admin route's handler declared apart from its route object. */
export type AdminContext<Body = unknown, Query = unknown> = RouteContext<AdminAccess, Record<string, string>, Query, Body>;
/** The context of an SDK route's handler: its caller is always an API token. */
export type SdkContext<Body = unknown, Query = unknown> = RouteContext<SdkAccess, Record<string, string>, Query, Body>;
/** The context of a public route's handler: no principal. */
export type OpenContext<Body = unknown, Query = unknown> = RouteContext<OpenAccess, Record<string, string>, Query, Body>;
