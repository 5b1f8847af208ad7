import { router } from './app';
import { withD1Session } from './db/sessions';
import { directRoutes } from './direct-routes';
import type { Env } from './env';
import { rememberUrl, urlOf } from './http/request-url';
import { answerFromMemo } from './sdk/client-api/memo';
import { answerFrontendEarly } from './sdk/frontend-api/routes';
import { flushOutbox, handleIntegrationQueue, INTEGRATIONS_DLQ_NAME, INTEGRATIONS_QUEUE_NAME } from './integrations/addons/delivery';
import type { DeliveryMessage } from './integrations/addons/queue-message';
import { handleMetricsQueue, METRICS_DLQ_NAME, METRICS_QUEUE_NAME } from './sdk/client-api/usage-queue';
import type { UsageMessage } from './sdk/client-api/usage-message';
import { handleQueue } from './admin/import-export/jobs';
import type { ImportChunkMessage } from './admin/import-export/queue-message';
import { log } from './log';
import { countRequest } from './admin/traffic-usage/counter';
import { announceWrite } from './sdk/push/announce';
import { runScheduledJobs } from './scheduled';
import { handleEdge, isEdgeMode } from './edge';

// Edge mode's sync object (wrangler.toml [env.edge]); a Durable Object class is exported by the entry module.
export { EdgeSync } from './edge';

// Flags for other Workers over a service binding (docs/binding.md).
export { UnleashFlags } from './binding/entrypoint';

// The change feed's Durable Object class must be exported by the entry module (wrangler.toml).
export { ChangeFeed } from './sdk/push/change-feed';

// Scheduled change requests' alarms (wrangler.toml).
export { ChangeRequestScheduler } from './admin/change-requests/scheduler';

const direct = directRoutes(router);

/**
 * Collapses repeated slashes (`//api/admin/...`), which Unleash also routes (and
 * authenticates: `//api/admin/tags` without a key is a 401). wrangler.toml sends `//*` to the
 * Worker first, as the asset layer would otherwise redirect it (307) past authentication.
 */
function normalise(request: Request): Request {
  const url = urlOf(request);
  if (!url.pathname.includes('//')) return request;
  const clean = new URL(url);
  clean.pathname = url.pathname.replace(/\/{2,}/g, '/');
  const normalised = new Request(clean, request);
  rememberUrl(normalised, clean);
  return normalised;
}

/** The paths wrangler.toml's `run_worker_first` gives the Worker (besides `//*`). */
const WORKER_PATHS = /^\/(?:api|auth|invite|edge|scim|docs)\/|^\/(?:logout|health|ready)$/;

function isWorkerPath(pathname: string): boolean {
  return WORKER_PATHS.test(pathname);
}

async function dispatch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  const url = urlOf(request);
  const route = direct(request.method, url.pathname);
  return route ? route(request, url, env, ctx) : router.fetch(request, env, ctx);
}

/** Answers a request of the service (not Edge mode). */
async function answer(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  // An SDK repeating a poll the isolate has answered at this data revision (client-api/memo.ts).
  const memoised = answerFromMemo(request, env, ctx);
  if (memoised !== null) return memoised;
  // A frontend poll with a context not seen, from a key the isolate trusts (frontend-api/early.ts).
  const early = answerFrontendEarly(request, env, ctx);
  if (early !== null) return early;
  const normalised = normalise(request);
  // Each request reads and writes D1 through its own session (replicas, bookmarks).
  const database = withD1Session(env, normalised);
  if (normalised.method === 'HEAD') {
    const asGet = new Request(normalised, { method: 'GET' });
    rememberUrl(asGet, urlOf(normalised));
    const response = await dispatch(asGet, database.env, ctx);
    // Nobody reads it: cancelled, an event stream's loop ends at once instead of writing into it.
    await response.body?.cancel();
    return new Response(null, response);
  }
  const response = await dispatch(normalised, database.env, ctx);
  // A page path with doubled slashes (`//projects`) that the Worker does not serve goes where
  // the asset layer sent it before `//*` reached the Worker: to its clean form.
  if (response.status === 404 && normalised !== request && normalised.method === 'GET' && !isWorkerPath(urlOf(normalised).pathname))
    return Response.redirect(urlOf(normalised).toString(), 307);
  return database.finish(response);
}

export default {
  async fetch(request, env, ctx): Promise<Response> {
    // Edge mode answers everything itself, from the upstream's flags (src/edge/).
    if (isEdgeMode(env)) return handleEdge(request, env, ctx);
    const response = await answer(request, env, ctx);
    // The data-usage page's counts (in the isolate; written to D1 at most every 30 s).
    countRequest(request.url, response.status, env, ctx);
    return response;
  },

  /** Each queue's consumer, by queue name (wrangler.toml `[[queues.consumers]]`). */
  async queue(batch, env): Promise<void> {
    if (batch.queue === METRICS_QUEUE_NAME || batch.queue === METRICS_DLQ_NAME) {
      await handleMetricsQueue(batch as MessageBatch<UsageMessage>, env);
      return;
    }
    if (batch.queue === INTEGRATIONS_QUEUE_NAME || batch.queue === INTEGRATIONS_DLQ_NAME) {
      await handleIntegrationQueue(batch as MessageBatch<DeliveryMessage>, env);
      return;
    }
    await handleQueue(batch as MessageBatch<ImportChunkMessage>, env);
    // Imported changes write audit events: integrations that listen get them now, and streams
    // hear of the new revision at once.
    await flushOutbox(env).catch((error: unknown) => log.error('integration deliveries not queued', { error }));
    await announceWrite(env);
  },

  /** The cron trigger (wrangler.toml): housekeeping jobs, listed in src/scheduled.ts. */
  async scheduled(controller, env, _ctx?: ExecutionContext): Promise<void> {
    if (isEdgeMode(env)) return;
    await runScheduledJobs(env, new Date(controller.scheduledTime));
  },
} satisfies ExportedHandler<Env, ImportChunkMessage | DeliveryMessage | UsageMessage>;
