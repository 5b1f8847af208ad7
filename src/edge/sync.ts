/**
 * The sync object of Edge mode: one Durable Object per upstream (named by its URL) through
 * which every isolate of the deployment talks to that upstream. It holds
 * - the token cache: each SDK token validated upstream once (`POST /edge/validate`), invalid
 *   ones remembered for NEGATIVE_TTL_MS, new look-ups limited per second, and every valid
 *   token revalidated in one call per interval (so a revoked token stops within one);
 * - one snapshot per token scope (environment + projects), polled with `If-None-Match` on an
 *   alarm every EDGE_SYNC_INTERVAL_SECONDS and at once on a webhook call, the last good one
 *   written to KV (EDGE_SNAPSHOTS) so a cold object or an upstream outage still answers;
 * - the metrics and registrations SDKs sent here, merged per scope and forwarded to
 *   `/api/client/metrics/bulk` at most once a minute per scope, in chunks of about 100 kB.
 * Upstream calls are therefore O(scopes) per interval whatever the number of isolates or
 * SDK instances. Token secrets live in memory only: after an eviction a scope is re-armed by
 * the next request of one of its SDKs (which poll every few seconds), while KV keeps serving.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env';
import { log } from '../log';
import { murmur3 } from '../sdk/evaluation/murmur';
import { scopeKey, subsumes, type Scope } from './snapshot-source';
import { fetchFeatures, postBulkMetrics, validateTokens, UpstreamError, type UpstreamToken } from './upstream';

const NEGATIVE_TTL_MS = 5 * 60_000;
const MAX_NEGATIVE = 10_000;
/** New tokens validated upstream per second at most; beyond, an unknown token is refused unchecked. */
const VALIDATIONS_PER_SECOND = 10;
const METRICS_INTERVAL_MS = 60_000;
/** A little over Unleash's one-second revision refresh (sdk-protocol.md 1.5). */
const UPSTREAM_REVISION_TICK_MS = 1_500;
/** Unleash Edge cuts forwarded metrics at about 100 kB (upstream 413s otherwise). */
const METRICS_CHUNK_BYTES = 100_000;
const MAX_METRIC_ROWS_PER_SCOPE = 50_000;

export type ValidateAnswer = { status: 'valid'; token: UpstreamToken } | { status: 'invalid' } | { status: 'unavailable'; reason: string };

export interface StoredSnapshot {
  /** The upstream ETag, or a hash of the text when it sent none: what isolates compare. */
  version: string;
  text: string;
  /** When the upstream last confirmed this text (a 200 or a 304), ms. */
  confirmedAt: number;
}

export type SnapshotAnswer =
  | { status: 'ok'; scope: string; version: string; confirmedAt: number; lastError: string | null; text?: string }
  | { status: 'invalid' }
  | { status: 'no-scope' }
  | { status: 'unavailable'; reason: string };

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

interface ScopeState {
  scope: Scope;
  key: string;
  /** A valid client token of this scope (memory only), used for its upstream calls. */
  token: string | null;
  snapshot: StoredSnapshot | null;
  lastAttemptAt: number;
  lastError: string | null;
  changedAt: number | null;
  pending: Promise<void> | null;
}

interface MetricsState {
  rows: Map<string, MetricRow>;
  applications: Map<string, ApplicationRow>;
  lastFlushAt: number;
}

export interface SyncStatus {
  upstream: string;
  intervalSeconds: number;
  scopes: {
    key: string;
    environment: string;
    projects: readonly string[];
    features: number | null;
    confirmedAt: string | null;
    changedAt: string | null;
    lastError: string | null;
    armed: boolean;
  }[];
  tokens: { token: string; type: string; environment: string; projects: readonly string[]; status: 'validated' }[];
}

export function kvKey(upstream: string, key: string): string {
  return `snapshot:${murmur3(upstream).toString(16)}:${key}`;
}

/** Only a secret's public part is ever shown (`<projects>:<environment>.` and 6 characters). */
function redact(secret: string): string {
  const dot = secret.indexOf('.');
  return `${secret.slice(0, dot + 1)}${secret.slice(dot + 1, dot + 7)}…`;
}

export class EdgeSync extends DurableObject<Env> {
  private readonly tokens = new Map<string, { info: UpstreamToken | null; checkedAt: number }>();
  private readonly inflight = new Map<string, Promise<ValidateAnswer>>();
  private readonly scopes = new Map<string, ScopeState>();
  private readonly metrics = new Map<string, MetricsState>();
  private validationWindow = { second: 0, count: 0 };
  private configuredTokensTried = false;

  private get upstream(): string {
    const url = this.env.EDGE_UPSTREAM_URL;
    if (!url) throw new Error('EDGE_UPSTREAM_URL is not set');
    return url.replace(/\/+$/, '');
  }

  /** EDGE_METRICS_INTERVAL_SECONDS (tests shorten it); Unleash Edge's minute by default. */
  private get metricsIntervalMs(): number {
    const seconds = Number(this.env.EDGE_METRICS_INTERVAL_SECONDS ?? '');
    return Number.isFinite(seconds) && seconds >= 1 ? seconds * 1000 : METRICS_INTERVAL_MS;
  }

  private get intervalMs(): number {
    const seconds = Number(this.env.EDGE_SYNC_INTERVAL_SECONDS ?? '15');
    return Math.max(1, Number.isFinite(seconds) ? seconds : 15) * 1000;
  }

  // ---- tokens ------------------------------------------------------------------------------

  async validate(secret: string): Promise<ValidateAnswer> {
    const known = this.tokens.get(secret);
    const now = Date.now();
    if (known?.info) return { status: 'valid', token: known.info };
    if (known && now - known.checkedAt < NEGATIVE_TTL_MS) return { status: 'invalid' };
    const running = this.inflight.get(secret);
    if (running) return running;
    const second = Math.floor(now / 1000);
    if (this.validationWindow.second !== second) this.validationWindow = { second, count: 0 };
    if (this.validationWindow.count >= VALIDATIONS_PER_SECOND) {
      return { status: 'unavailable', reason: 'too many unknown tokens at once; try again' };
    }
    this.validationWindow.count++;
    const promise = this.validateUpstream([secret]).then(
      (found) => (found[0] ? ({ status: 'valid', token: found[0] } as const) : ({ status: 'invalid' } as const)),
      (error: unknown): ValidateAnswer => ({ status: 'unavailable', reason: error instanceof Error ? error.message : String(error) }),
    );
    this.inflight.set(secret, promise);
    try {
      return await promise;
    } finally {
      this.inflight.delete(secret);
    }
  }

  /** Asks upstream about `secrets` and records every answer (valid and invalid). */
  private async validateUpstream(secrets: readonly string[]): Promise<UpstreamToken[]> {
    const found = await validateTokens(this.upstream, secrets);
    const now = Date.now();
    const valid = new Map(found.map((token) => [token.token, token]));
    if (this.tokens.size > MAX_NEGATIVE) {
      for (const [secret, state] of this.tokens) if (!state.info) this.tokens.delete(secret);
    }
    for (const secret of secrets) {
      const info = valid.get(secret) ?? null;
      this.tokens.set(secret, { info, checkedAt: now });
      if (info?.type === 'client') this.adoptToken(info);
      if (!info) this.forgetToken(secret);
    }
    return secrets.flatMap((secret) => valid.get(secret) ?? []);
  }

  /**
   * Unleash 8.2.0's `/edge/validate` goes on listing a deleted token for many minutes while its
   * client API refuses it at once (recorded: test/fixtures/edge-upstream-8.json). So every other
   * valid backend token of a scope is also asked for the scope's flags with the current ETag each
   * interval (a 304 for the upstream), and dropped on 401/403: O(backend tokens) calls, as few as
   * the tokens a team made, not as many as its SDK instances.
   */
  private async probeClientTokens(): Promise<void> {
    const probes: Promise<void>[] = [];
    for (const [secret, known] of this.tokens) {
      if (known.info?.type !== 'client') continue;
      const state = this.scopes.get(scopeKey(known.info));
      if (!state || state.token === secret) continue;
      probes.push(
        fetchFeatures(this.upstream, secret, state.snapshot?.version ?? null).then(
          () => undefined,
          (error: unknown) => {
            if (error instanceof UpstreamError && (error.status === 401 || error.status === 403)) {
              this.tokens.set(secret, { info: null, checkedAt: Date.now() });
            }
          },
        ),
      );
    }
    await Promise.all(probes);
  }

  /** A valid client token arms its scope (made on first sight) for polling. */
  private adoptToken(token: UpstreamToken): ScopeState {
    const scope: Scope = { environment: token.environment, projects: token.projects };
    const key = scopeKey(scope);
    let state = this.scopes.get(key);
    if (!state) {
      state = { scope, key, token: null, snapshot: null, lastAttemptAt: 0, lastError: null, changedAt: null, pending: null };
      this.scopes.set(key, state);
    }
    state.token ??= token.token;
    return state;
  }

  /** A token found invalid no longer speaks for its scope; another valid one of the scope takes over. */
  private forgetToken(secret: string): void {
    for (const state of this.scopes.values()) {
      if (state.token !== secret) continue;
      state.token = null;
      for (const [other, known] of this.tokens) {
        if (known.info?.type === 'client' && scopeKey(known.info) === state.key) {
          state.token = other;
          break;
        }
      }
    }
  }

  /** EDGE_CLIENT_TOKENS: backend tokens the operator lists, so frontend tokens have scopes before any backend SDK calls. */
  private async adoptConfiguredTokens(): Promise<void> {
    if (this.configuredTokensTried) return;
    const listed = (this.env.EDGE_CLIENT_TOKENS ?? '')
      .split(',')
      .map((secret) => secret.trim())
      .filter((secret) => secret.length > 0 && !this.tokens.get(secret)?.info);
    if (listed.length === 0) {
      this.configuredTokensTried = true;
      return;
    }
    await this.validateUpstream(listed);
    this.configuredTokensTried = true;
  }

  // ---- snapshots ---------------------------------------------------------------------------

  /**
   * The snapshot serving a caller's token: its own scope for a backend token; for a frontend
   * token, a backend scope of the same environment covering all its projects. The text comes
   * only when the caller's `knownVersion` is not the current one.
   */
  async snapshot(secret: string, knownVersion: string | null): Promise<SnapshotAnswer> {
    const validity = await this.validate(secret);
    if (validity.status === 'invalid') return { status: 'invalid' };
    if (validity.status === 'unavailable') return validity;
    const token = validity.token;
    let state: ScopeState | undefined;
    if (token.type === 'client') state = this.adoptToken(token);
    else {
      state = this.servingScope(token);
      if (!state) {
        await this.adoptConfiguredTokens().catch((error: unknown) => log.warn('EDGE_CLIENT_TOKENS not validated', { error }));
        state = this.servingScope(token);
      }
      if (!state) return { status: 'no-scope' };
    }
    if (!state.snapshot) await this.load(state);
    // Never confirmed since this object started: ask upstream now (a cold start, or a new scope).
    if (state.lastAttemptAt === 0) await this.refresh(state);
    if (!state.snapshot) return { status: 'unavailable', reason: state.lastError ?? 'no snapshot yet' };
    this.arm();
    const { version, confirmedAt, text } = state.snapshot;
    return {
      status: 'ok',
      scope: state.key,
      version,
      confirmedAt,
      lastError: state.lastError,
      ...(version !== knownVersion ? { text } : {}),
    };
  }

  private servingScope(token: UpstreamToken): ScopeState | undefined {
    let best: ScopeState | undefined;
    for (const state of this.scopes.values()) {
      if (!state.token || !subsumes(state.scope, token)) continue;
      // The narrowest covering scope: it is what a backend token of exactly that scope would see.
      if (!best || state.scope.projects.length < best.scope.projects.length) best = state;
    }
    return best;
  }

  private async load(state: ScopeState): Promise<void> {
    const stored = await this.env.EDGE_SNAPSHOTS?.get<StoredSnapshot>(kvKey(this.upstream, state.key), 'json');
    if (stored && !state.snapshot) state.snapshot = stored;
  }

  /** One poll of a scope; concurrent callers share it. A failure keeps the last good snapshot. */
  private refresh(state: ScopeState): Promise<void> {
    if (state.pending) return state.pending;
    const run = async () => {
      state.lastAttemptAt = Date.now();
      if (!state.token) {
        state.lastError = 'no valid backend token of this scope seen since the sync object started';
        return;
      }
      try {
        const answer = await fetchFeatures(this.upstream, state.token, state.snapshot?.version ?? null);
        const now = Date.now();
        if (answer.status === 'unchanged' && state.snapshot) {
          state.snapshot = { ...state.snapshot, confirmedAt: now };
        } else if (answer.status === 'changed') {
          JSON.parse(answer.body); // an answer that is not JSON is an upstream failure, not a snapshot
          const version = answer.etag ?? `"${murmur3(answer.body).toString(16)}"`;
          state.snapshot = { version, text: answer.body, confirmedAt: now };
          state.changedAt = now;
          await this.env.EDGE_SNAPSHOTS?.put(kvKey(this.upstream, state.key), JSON.stringify(state.snapshot));
        }
        state.lastError = null;
      } catch (error) {
        state.lastError = error instanceof Error ? error.message : String(error);
        if (error instanceof UpstreamError && (error.status === 401 || error.status === 403) && state.token) {
          // The upstream no longer accepts this scope's token: drop it at once, not at the next revalidation.
          this.tokens.set(state.token, { info: null, checkedAt: Date.now() });
          this.forgetToken(state.token);
        }
        log.warn('edge: upstream poll failed, serving the last good snapshot', { scope: state.key, error: state.lastError });
      }
    };
    state.pending = run().finally(() => {
      state.pending = null;
    });
    return state.pending;
  }

  /**
   * The webhook: every scope polled now (the upstream's event does not say which scopes moved).
   * Unleash moves its client API's revision about a second after a change (its revision tick),
   * so a poll right at the event may still get a 304: the alarm comes again after that tick.
   */
  async refreshAll(): Promise<{ scopes: number; changed: number }> {
    const before = new Map([...this.scopes].map(([key, state]) => [key, state.snapshot?.version]));
    // A poll already under way began before the change: poll again once it is done.
    await Promise.all([...this.scopes.values()].map((state) => (state.pending ?? Promise.resolve()).then(() => this.refresh(state))));
    let changed = 0;
    for (const [key, state] of this.scopes) if (state.snapshot?.version !== before.get(key)) changed++;
    const after = Date.now() + UPSTREAM_REVISION_TICK_MS;
    const next = await this.ctx.storage.getAlarm();
    if (next === null || next > after) await this.ctx.storage.setAlarm(after);
    return { scopes: this.scopes.size, changed };
  }

  // ---- metrics -----------------------------------------------------------------------------

  /** Usage and registrations from SDKs of `secret`'s scope, merged until the next forward. */
  async addMetrics(secret: string, rows: readonly MetricRow[], applications: readonly ApplicationRow[]): Promise<boolean> {
    const validity = await this.validate(secret);
    if (validity.status !== 'valid') return false;
    const state = validity.token.type === 'client' ? this.adoptToken(validity.token) : this.servingScope(validity.token);
    if (!state) return false;
    let bucket = this.metrics.get(state.key);
    if (!bucket) this.metrics.set(state.key, (bucket = { rows: new Map(), applications: new Map(), lastFlushAt: Date.now() }));
    for (const row of rows) {
      // Only the token's own environment counts upstream; the body cannot choose another.
      const environment = validity.token.environment;
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
      const environment = validity.token.environment;
      bucket.applications.set(`${application.appName}\u0000${application.instanceId ?? ''}`, { ...application, environment });
    }
    this.arm();
    return true;
  }

  /** Forwards each scope's merged metrics whose minute has passed (all of them when `force`). */
  async flushMetrics(force = false): Promise<number> {
    let posts = 0;
    const now = Date.now();
    for (const [key, bucket] of this.metrics) {
      if (!force && now - bucket.lastFlushAt < this.metricsIntervalMs) continue;
      if (bucket.rows.size === 0 && bucket.applications.size === 0) continue;
      const token = this.scopes.get(key)?.token;
      if (!token) continue;
      const rows = [...bucket.rows.values()];
      const applications = [...bucket.applications.values()];
      bucket.rows.clear();
      bucket.applications.clear();
      bucket.lastFlushAt = now;
      for (const body of chunks(applications, rows)) {
        try {
          await postBulkMetrics(this.upstream, token, body);
          posts++;
        } catch (error) {
          // Put back what did not go, for the next minute (merged with what comes meanwhile).
          const failed = JSON.parse(body) as { applications: ApplicationRow[]; metrics: MetricRow[] };
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
    return posts;
  }

  // ---- the alarm ---------------------------------------------------------------------------

  private arm(): void {
    void this.ctx.storage.getAlarm().then((at) => {
      if (at === null) return this.ctx.storage.setAlarm(Date.now() + this.intervalMs);
    });
  }

  override async alarm(): Promise<void> {
    const validSecrets = [...this.tokens].filter(([, state]) => state.info).map(([secret]) => secret);
    if (validSecrets.length > 0) {
      // Every valid token in one call: a token revoked upstream stops within one interval.
      await this.validateUpstream(validSecrets).catch((error: unknown) =>
        log.warn('edge: revalidating tokens failed; keeping them', { error: String(error) }),
      );
    }
    await Promise.all([...this.scopes.values()].filter((state) => state.token).map((state) => this.refresh(state)));
    await this.probeClientTokens();
    await this.flushMetrics();
    const metricsWaiting = [...this.metrics.values()].some((bucket) => bucket.rows.size > 0 || bucket.applications.size > 0);
    if ([...this.scopes.values()].some((state) => state.token) || metricsWaiting) {
      // A webhook may have asked for an earlier one meanwhile (refreshAll): keep the earlier.
      const next = Date.now() + this.intervalMs;
      const asked = await this.ctx.storage.getAlarm();
      if (asked === null || asked > next) await this.ctx.storage.setAlarm(next);
    }
  }

  /** Test hook: forget every token, scope and metric in memory (as an eviction does); KV keeps its copies. */
  async forgetMemory(): Promise<void> {
    this.tokens.clear();
    this.scopes.clear();
    this.metrics.clear();
    this.configuredTokensTried = false;
  }

  // ---- what /internal-backstage shows --------------------------------------------------------

  async status(): Promise<SyncStatus> {
    const iso = (ms: number | null | undefined) => (ms ? new Date(ms).toISOString() : null);
    return {
      upstream: this.upstream,
      intervalSeconds: this.intervalMs / 1000,
      scopes: [...this.scopes.values()].map((state) => ({
        key: state.key,
        environment: state.scope.environment,
        projects: state.scope.projects,
        features: state.snapshot ? countFeatures(state.snapshot.text) : null,
        confirmedAt: iso(state.snapshot?.confirmedAt),
        changedAt: iso(state.changedAt),
        lastError: state.lastError,
        armed: state.token !== null,
      })),
      tokens: [...this.tokens].flatMap(([secret, state]) =>
        state.info
          ? [
              {
                token: redact(secret),
                type: state.info.type,
                environment: state.info.environment,
                projects: state.info.projects,
                status: 'validated' as const,
              },
            ]
          : [],
      ),
    };
  }
}

function countFeatures(text: string): number | null {
  try {
    const body = JSON.parse(text) as { features?: unknown };
    return Array.isArray(body.features) ? body.features.length : null;
  } catch {
    return null;
  }
}

/** Bulk bodies of at most about METRICS_CHUNK_BYTES each (a single larger row still goes alone). */
export function* chunks(applications: readonly ApplicationRow[], rows: readonly MetricRow[]): Generator<string> {
  let apps: ApplicationRow[] = [];
  let metrics: MetricRow[] = [];
  let size = 40;
  const body = () => JSON.stringify({ applications: apps, metrics });
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
  if (apps.length + metrics.length > 0) yield body();
}
