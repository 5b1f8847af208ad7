/**
 * Edge mode (docs/edge.md): with EDGE_UPSTREAM_URL set (`wrangler.toml` `[env.edge]`), the
 * Worker is an Unleash Edge in front of that Unleash. Every request is answered here; the
 * service's router, D1 and admin UI are never reached.
 */
import type { Env } from '../env';
import type { IRequest } from 'itty-router';
import { edgeRouter } from './routes';
import { recordRequest } from './request-metrics';

export { EdgeSync } from './sync';
export { snapshotForToken, tokenFor } from './scope';

const router = edgeRouter();

export function isEdgeMode(env: Env): boolean {
  return Boolean(env.EDGE_UPSTREAM_URL);
}

export async function handleEdge(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  const started = Date.now();
  const routed = (request.method === 'HEAD' ? new Request(request, { method: 'GET' }) : request) as Request & Partial<IRequest>;
  let response = await router.fetch(routed, env, ctx);
  if (request.method === 'HEAD') {
    // Nobody reads it: cancelled, an event stream's loop ends at once instead of writing into it.
    await response.body?.cancel();
    response = new Response(null, response);
  }
  // The route's pattern (itty-router sets it on the request), never the path: flag names stay out of the labels.
  recordRequest(request.method, typeof routed.route === 'string' ? routed.route : 'unmatched', response.status, Date.now() - started);
  return response;
}
