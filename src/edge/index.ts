/**
 * Edge mode (docs/edge.md): with EDGE_UPSTREAM_URL set (`wrangler.toml` `[env.edge]`), the
 * Worker is an Unleash Edge in front of that Unleash. Every request is answered here; the
 * service's router, D1 and admin UI are never reached.
 */
import type { Env } from '../env';
import { edgeRouter } from './routes';

export { EdgeSync } from './sync';
export { snapshotForToken, tokenFor } from './scope';

const router = edgeRouter();

export function isEdgeMode(env: Env): boolean {
  return Boolean(env.EDGE_UPSTREAM_URL);
}

export async function handleEdge(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  if (request.method === 'HEAD') {
    const response = await router.fetch(new Request(request, { method: 'GET' }), env, ctx);
    // Nobody reads it: cancelled, an event stream's loop ends at once instead of writing into it.
    await response.body?.cancel();
    return new Response(null, response);
  }
  return router.fetch(request, env, ctx);
}
