/**
 * Usage through the binding, counted into the same metrics as SDKs' (docs/metrics.md): each
 * `isEnabled`, `getVariant` and `evaluate` of a flag the key may see counts yes or no (and its
 * variant) for the context's `appName`, as an SDK counts its own calls. Counts are kept per
 * key and app in the isolate and handed to the metrics Queue as one SDK metrics post
 * (the source's `sendUsage`: in the service `queueMetrics`, the very path `POST /api/client/metrics`
 * and the frontend API's take, with a frontend key's bounds; in Edge mode the sync object's
 * merge that Edge's own metrics routes feed, forwarded upstream) once a bucket is BINDING_METRICS_INTERVAL_MS old (60 s by default,
 * an SDK's interval), from the call that finds it due. An isolate that goes away loses at
 * most its last bucket, as an SDK that stops does. `getAll` counts nothing, like an SDK's fetch.
 */
import type { ApiTokenRecord } from '../auth/principal';
import type { Env } from '../env';
import { log } from '../log';
import type { MetricsBody } from '../sdk/client-api/schema';

const DEFAULT_INTERVAL_MS = 60_000;
/** Buckets (key and app) an isolate keeps, and flags per bucket: both bounded. */
const MAX_BUCKETS = 1_000;
const MAX_FLAGS_PER_BUCKET = 1_000;
/** How binding calls show among an app's instances. */
export const BINDING_INSTANCE_ID = 'worker-binding';
export const BINDING_SDK_VERSION = 'unleash-worker-binding:1.0.0';

interface Counts {
  yes: number;
  no: number;
  variants: Record<string, number>;
}

/** Where a bucket goes when due (the binding source's `sendUsage` for the key). */
export type UsageSink = (env: Env, post: MetricsBody) => Promise<void>;

interface Bucket {
  send: UsageSink;
  appName: string;
  start: number;
  toggles: Map<string, Counts>;
}

const buckets = new Map<string, Bucket>();

function intervalOf(env: Env): number {
  const configured = Number(env.BINDING_METRICS_INTERVAL_MS);
  return env.BINDING_METRICS_INTERVAL_MS !== undefined && Number.isFinite(configured) && configured >= 0 ? configured : DEFAULT_INTERVAL_MS;
}

/** Counts one evaluation of a flag the key may see. */
export function countUsage(
  token: ApiTokenRecord,
  send: UsageSink,
  appName: string,
  flag: string,
  enabled: boolean,
  variant?: string,
): void {
  const key = `${token.hash}\u0000${appName}`;
  let bucket = buckets.get(key);
  if (bucket === undefined) {
    if (buckets.size >= MAX_BUCKETS) return;
    buckets.set(key, (bucket = { send, appName, start: Date.now(), toggles: new Map() }));
  }
  let counts = bucket.toggles.get(flag);
  if (counts === undefined) {
    if (bucket.toggles.size >= MAX_FLAGS_PER_BUCKET) return;
    // No prototype: a variant named `__proto__` is an ordinary key.
    bucket.toggles.set(flag, (counts = { yes: 0, no: 0, variants: Object.create(null) as Record<string, number> }));
  }
  if (enabled) counts.yes++;
  else counts.no++;
  if (variant !== undefined) counts.variants[variant] = (counts.variants[variant] ?? 0) + 1;
}

function postOf(bucket: Bucket, stop: number): MetricsBody {
  const toggles: NonNullable<MetricsBody['bucket']>['toggles'] = Object.create(null) as NonNullable<MetricsBody['bucket']>['toggles'];
  for (const [name, counts] of bucket.toggles) toggles[name] = { ...counts, variants: { ...counts.variants } };
  return {
    appName: bucket.appName,
    instanceId: BINDING_INSTANCE_ID,
    sdkVersion: BINDING_SDK_VERSION,
    bucket: { start: new Date(bucket.start).toISOString(), stop: new Date(stop).toISOString(), toggles },
  };
}

/** Hands the buckets that are due to the metrics Queue, after the call (`waitUntil`). */
export function flushDueUsage(env: Env, ctx: ExecutionContext): void {
  if (buckets.size === 0) return;
  const now = Date.now();
  const due = now - intervalOf(env);
  for (const [key, bucket] of buckets) {
    if (bucket.start > due) continue;
    buckets.delete(key);
    ctx.waitUntil(
      bucket
        .send(env, postOf(bucket, now))
        .catch((error: unknown) => log.warn('binding usage not queued', { appName: bucket.appName, error })),
    );
  }
}
