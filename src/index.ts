import { router } from './app';
import { withD1Session } from './db/sessions';
import type { Env } from './env';
import { handleQueue } from './modules/import-export/jobs';
import type { ImportChunkMessage } from './modules/import-export/queue-message';

/** Collapses repeated slashes (`//api/admin/...`), which Unleash also routes. */
function normalise(request: Request): Request {
  const url = new URL(request.url);
  if (!url.pathname.includes('//')) return request;
  url.pathname = url.pathname.replace(/\/{2,}/g, '/');
  return new Request(url, request);
}

export default {
  async fetch(request, env, ctx): Promise<Response> {
    const normalised = normalise(request);
    // Each request reads and writes D1 through its own session (replicas, bookmarks).
    const database = withD1Session(env, normalised);
    if (normalised.method === 'HEAD') {
      const response = await router.fetch(new Request(normalised, { method: 'GET' }), database.env, ctx);
      return new Response(null, response);
    }
    return database.finish(await router.fetch(normalised, database.env, ctx));
  },

  async queue(batch, env): Promise<void> {
    await handleQueue(batch, env);
  },
} satisfies ExportedHandler<Env, ImportChunkMessage>;
