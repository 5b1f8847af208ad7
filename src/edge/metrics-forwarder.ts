/**
 * The sync object's metrics (sync.ts): the usage and registrations SDKs sent to this Edge,
 * merged per token scope and forwarded to the upstream's `/api/client/metrics/bulk` at most
 * once a minute per scope, in chunks of about 100 kB, with the keys SDKs used here as
 * `seenTokens` (Unleash 8 marks them used; older upstreams ignore the key).
 */
import type { Env } from '../env';
import { log } from '../log';
import { postBulkMetrics } from './upstream';

const METRICS_INTERVAL_MS = 60_000;
/** Unleash Edge cuts forwarded metrics at about 100 kB (upstream 413s otherwise). */
const METRICS_CHUNK_BYTES = 100_000;
const MAX_METRIC_ROWS_PER_SCOPE = 50_000;
/** Keys reported upstream as `seenTokens` per forward at most; the rest wait for the next one. */
const MAX_SEEN_KEYS = 1000;

export interface MetricRow {
  featureName: string;
  appName: string;
  environment: string;
  timestamp: string;
  yes: number;
  no: number;
  variants: Record<string, number>;
}

export interface ApplicationRow {
  appName: string;
  instanceId?: string | null;
  environment: string;
  [key: string]: unknown;
}

interface MetricsState {
  rows: Map<string, MetricRow>;
  applications: Map<string, ApplicationRow>;
  lastFlushAt: number;
}

export class MetricsForwarder {
  private readonly buckets = new Map<string, MetricsState>();
  /** Valid keys SDKs used since the last forward (memory only, as every secret here). */
  private readonly seenKeys = new Set<string>();
  private seenFlushedAt = 0;

  constructor(
    private readonly env: Env,
    private readonly upstream: () => string,
    /** The client token a scope's metrics are forwarded with (null when none is valid now). */
    private readonly tokenOf: (scopeKey: string) => string | null | undefined,
    /** Any valid client token, for seen keys forwarded while no scope has metrics. */
    private readonly anyToken: () => string | null | undefined,
  ) {}

  /** An SDK used `secret` here: it goes upstream as one of the `seenTokens` of the next forward. */
  noteSeen(secret: string): void {
    if (this.seenKeys.size < MAX_SEEN_KEYS) this.seenKeys.add(secret);
  }

  /** EDGE_METRICS_INTERVAL_SECONDS (tests shorten it); Unleash Edge's minute by default. */
  private get intervalMs(): number {
    const seconds = Number(this.env.EDGE_METRICS_INTERVAL_SECONDS ?? '');
    return Number.isFinite(seconds) && seconds >= 1 ? seconds * 1000 : METRICS_INTERVAL_MS;
  }

  /** Rows and registrations of one scope, merged until the next forward; `environment` is the token's. */
  add(scopeKey: string, environment: string, rows: readonly MetricRow[], applications: readonly ApplicationRow[]): void {
    let bucket = this.buckets.get(scopeKey);
    if (!bucket) this.buckets.set(scopeKey, (bucket = { rows: new Map(), applications: new Map(), lastFlushAt: Date.now() }));
    for (const row of rows) {
      // Only the token's own environment counts upstream; the body cannot choose another.
      const key = `${row.featureName}\u0000${row.appName}`;
      const merged = bucket.rows.get(key);
      if (!merged) {
        if (bucket.rows.size >= MAX_METRIC_ROWS_PER_SCOPE) continue;
        bucket.rows.set(key, { ...row, environment, variants: { ...row.variants } });
        continue;
      }
      merged.yes += row.yes;
      merged.no += row.no;
      if (row.timestamp > merged.timestamp) merged.timestamp = row.timestamp;
      for (const [name, count] of Object.entries(row.variants)) merged.variants[name] = (merged.variants[name] ?? 0) + count;
    }
    for (const application of applications) {
      bucket.applications.set(`${application.appName}\u0000${application.instanceId ?? ''}`, { ...application, environment });
    }
  }

  /** Forwards each scope's merged metrics whose minute has passed (all of them when `force`). */
  async flush(force = false): Promise<number> {
    let posts = 0;
    const now = Date.now();
    // The first post of this forward carries them; put back if it fails.
    let seen = [...this.seenKeys];
    this.seenKeys.clear();
    for (const [key, bucket] of this.buckets) {
      if (!force && now - bucket.lastFlushAt < this.intervalMs) continue;
      if (bucket.rows.size === 0 && bucket.applications.size === 0) continue;
      const token = this.tokenOf(key);
      if (!token) continue;
      const rows = [...bucket.rows.values()];
      const applications = [...bucket.applications.values()];
      bucket.rows.clear();
      bucket.applications.clear();
      bucket.lastFlushAt = now;
      for (const body of chunks(applications, rows, seen)) {
        if (seen.length > 0) this.seenFlushedAt = now;
        seen = [];
        try {
          await postBulkMetrics(this.upstream(), token, body);
          posts++;
        } catch (error) {
          // Put back what did not go, for the next minute (merged with what comes meanwhile).
          const failed = JSON.parse(body) as { applications: ApplicationRow[]; metrics: MetricRow[]; seenTokens?: string[] };
          for (const secret of failed.seenTokens ?? []) this.noteSeen(secret);
          for (const row of failed.metrics) {
            const rowKey = `${row.featureName}\u0000${row.appName}`;
            const merged = bucket.rows.get(rowKey);
            if (merged) {
              merged.yes += row.yes;
              merged.no += row.no;
            } else bucket.rows.set(rowKey, row);
          }
          for (const app of failed.applications) bucket.applications.set(`${app.appName}\u0000${app.instanceId ?? ''}`, app);
          log.warn('edge: forwarding metrics failed; kept for the next minute', { scope: key, error: String(error) });
        }
      }
    }
    if (seen.length > 0) {
      if (force || now - this.seenFlushedAt >= this.intervalMs) posts += await this.flushSeenKeys(seen);
      else for (const secret of seen) this.noteSeen(secret);
    }
    return posts;
  }

  /** Keys seen while no scope had metrics to forward: posted alone, with any armed scope's token. */
  private async flushSeenKeys(seen: readonly string[]): Promise<number> {
    const token = this.anyToken();
    if (!token) {
      for (const secret of seen) this.noteSeen(secret);
      return 0;
    }
    this.seenFlushedAt = Date.now();
    try {
      for (const body of chunks([], [], seen)) await postBulkMetrics(this.upstream(), token, body);
      return 1;
    } catch (error) {
      for (const secret of seen) this.noteSeen(secret);
      log.warn('edge: forwarding seen tokens failed; kept for the next minute', { error: String(error) });
      return 0;
    }
  }

  /** Whether any scope has rows or registrations, or seen keys, not forwarded yet. */
  waiting(): boolean {
    return this.seenKeys.size > 0 || [...this.buckets.values()].some((bucket) => bucket.rows.size > 0 || bucket.applications.size > 0);
  }

  clear(): void {
    this.buckets.clear();
    this.seenKeys.clear();
  }
}

/**
 * Bulk bodies of at most about METRICS_CHUNK_BYTES each (a single larger row still goes alone).
 * `seenTokens`, when there are any, ride in the first body (alone if nothing else goes); the key
 * is left out otherwise, so an upstream older than 8.x gets the body it always got.
 */
function* chunks(
  applications: readonly ApplicationRow[],
  rows: readonly MetricRow[],
  seenTokens: readonly string[] = [],
): Generator<string> {
  let apps: ApplicationRow[] = [];
  let metrics: MetricRow[] = [];
  let seen: string[] | null = seenTokens.length > 0 ? [...seenTokens] : null;
  let size = 40 + (seen ? JSON.stringify(seen).length + 14 : 0);
  const body = () => {
    const text = JSON.stringify(seen ? { applications: apps, metrics, seenTokens: seen } : { applications: apps, metrics });
    seen = null;
    return text;
  };
  for (const app of applications) {
    const length = JSON.stringify(app).length + 1;
    if (size + length > METRICS_CHUNK_BYTES && apps.length + metrics.length > 0) {
      yield body();
      apps = [];
      metrics = [];
      size = 40;
    }
    apps.push(app);
    size += length;
  }
  for (const row of rows) {
    const length = JSON.stringify(row).length + 1;
    if (size + length > METRICS_CHUNK_BYTES && apps.length + metrics.length > 0) {
      yield body();
      apps = [];
      metrics = [];
      size = 40;
    }
    metrics.push(row);
    size += length;
  }
  if (apps.length + metrics.length > 0 || seen) yield body();
}
