import { router } from './app';
import type { Env } from './env';
import { handleQueue } from './modules/import-export/jobs';
import type { ImportChunkMessage } from './modules/import-export/queue-message';
import { runScheduledJobs } from './scheduled';

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
    if (normalised.method === 'HEAD') {
      const response = await router.fetch(new Request(normalised, { method: 'GET' }), env, ctx);
      return new Response(null, response);
    }
    return router.fetch(normalised, env, ctx);
  },

  async queue(batch, env): Promise<void> {
    await handleQueue(batch, env);
  },

  /** The cron trigger (wrangler.toml): housekeeping jobs, listed in src/scheduled.ts. */
  async scheduled(controller, env): Promise<void> {
    await runScheduledJobs(env, new Date(controller.scheduledTime));
  },
} satisfies ExportedHandler<Env, ImportChunkMessage>;
