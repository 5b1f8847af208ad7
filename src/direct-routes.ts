/**
 * Exact-path dispatch in front of the router. itty-router tries every route's pattern in
 * order, so an SDK poll (the hot path) paid for ~75 admin patterns before reaching its own.
 * Routes without parameters or wildcards are looked up here by method and path instead; a
 * route is taken only when no route registered before it would also match that path, so the
 * answer is the one the router would give. Anything else goes to the router as before.
 */
import type { IRequest, RouterType } from 'itty-router';
import type { Env } from './env';
import { toErrorResponse } from './http/errors';
import { queryObject } from './http/route';

type Handler = (request: IRequest, env: Env, ctx: ExecutionContext) => unknown;
export type DirectRoute = (request: Request, url: URL, env: Env, ctx: ExecutionContext) => Promise<Response>;

export function directRoutes(
  router: RouterType<IRequest, [Env, ExecutionContext], Response>,
): (method: string, pathname: string) => DirectRoute | undefined {
  const table = new Map<string, DirectRoute>();
  const routes = router.routes;
  routes.forEach(([method, , handlers, path], index) => {
    if (path === undefined || path.includes(':') || path.includes('*')) return;
    const key = `${method} ${path}`;
    if (table.has(key)) return;
    const shadowed = routes
      .slice(0, index)
      .some(([earlierMethod, pattern]) => (earlierMethod === method || earlierMethod === 'ALL') && pattern.test(path));
    if (shadowed) return;
    table.set(key, async (request, url, env, ctx) => {
      // What itty-router gives a handler: params, route, and the query as an object (built
      // only if a handler reads it; ours read urlOf(request).searchParams).
      const routed = request as IRequest;
      Object.defineProperty(routed, 'query', { configurable: true, enumerable: true, get: () => queryObject(url.searchParams) });
      routed.params = {};
      routed.route = path;
      try {
        for (const handler of handlers as Handler[]) {
          const response = await handler(routed, env, ctx);
          if (response != null) return response as Response;
        }
        // Every handler in the route table answers; one that does not is a bug, not a fall-through.
        throw new Error(`route ${method} ${path} answered nothing`);
      } catch (error) {
        return toErrorResponse(error, request);
      }
    });
  });
  return (method, pathname) => table.get(`${method} ${pathname}`);
}
