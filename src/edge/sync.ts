/**
 * The sync object of Edge mode: one Durable Object per upstream (named by its URL) through
 * which every isolate of the deployment talks to that upstream. It holds
 * - the token cache (token-cache.ts): each SDK token validated upstream once, invalid ones
 *   remembered, new look-ups limited per second, and every valid token revalidated in one call
 *   per interval (so a revoked token stops within one);
 * - one snapshot per token scope (scope-poller.ts), polled with `If-None-Match` on an alarm
 *   every EDGE_SYNC_INTERVAL_SECONDS and at once on a webhook call, the last good one written
 *   to KV (persisted.ts) so a cold object or an upstream outage still answers;
 * - the metrics and registrations SDKs sent here (metrics-forwarder.ts), merged per scope and
 *   forwarded to `/api/client/metrics/bulk` at most once a minute per scope, with the keys SDKs
 *   used here as `seenTokens` (Unleash 8 marks them used).
 * Upstream calls are therefore O(scopes) per interval whatever the number of isolates or
 * SDK instances. Token secrets live in memory only: after an eviction a scope is re-armed by
 * the next request of one of its SDKs (which poll every few seconds), while KV keeps serving.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env';
import { log } from '../log';
import { MetricsForwarder, type ApplicationRow, type MetricRow } from './metrics-forwarder';
import { ScopePoller, type ScopeState } from './scope-poller';
import { TokenCache, type ValidateAnswer, type ValidatedToken } from './token-cache';
import { TokenStore, trustMs } from './token-store';
import { upstreamStats } from './upstream';

/** A cold scope with a persisted snapshot waits this long for the upstream before answering from that snapshot. */
const COLD_REFRESH_WAIT_MS = 500;
const LAST_SUCCESS_KEY = 'upstream:lastSuccessAt';

/**
 * After a webhook, scopes whose answer has not moved yet are asked again this often, for this
 * long: Unleash moves its client API's ETag on a one-second revision tick after a change
 * (sdk-protocol.md 1.5), so a poll right at the event often still gets a 304.
 */
const CATCH_UP_STEP_MS = 250;
const CATCH_UP_STEPS = 10;

export type SnapshotAnswer =
  | { status: 'ok'; scope: string; version: string; confirmedAt: number; lastError: string | null; text?: string }
  | { status: 'invalid' }
  | { status: 'no-scope' }
  | { status: 'unavailable'; reason: string };

export interface UpstreamHealth {
  stale: boolean;
  staleSince: string | null;
  lastSuccessAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  calls: Record<string, number>;
  failures: Record<string, number>;
}

export interface SyncStatus {
  upstream: string;
  intervalSeconds: number;
  health: UpstreamHealth;
  tokenCounts: { valid: number; offline: number };
  scopes: {
    key: string;
    environment: string;
    projects: readonly string[];
    features: number | null;
    confirmedAt: string | null;
    changedAt: string | null;
    lastError: string | null;
    armed: boolean;
    /** The upstream's answer for the scope (only when asked for: /internal-backstage/features). */
    text?: string;
  }[];
  tokens: ValidatedToken[];
}

export class EdgeSync extends DurableObject<Env> {
  private readonly tokens: TokenCache = new TokenCache(
    () => this.upstream,
    {
      adopt: (token) => this.scopes.adopt(token),
      forget: (secret) => this.scopes.forget(secret),
    },
    new TokenStore(this.ctx.storage, trustMs(this.env.EDGE_OFFLINE_TOKEN_HOURS)),
  );
  /** When the upstream last answered, as stored before this object started (health after a restart). */
  private storedLastSuccessAt = 0;
  private readonly startedAt = Date.now();
  private readonly scopes: ScopePoller = new ScopePoller(this.env, () => this.upstream, this.tokens);
  private readonly metrics = new MetricsForwarder(
    this.env,
    () => this.upstream,
    (key) => this.scopes.states.get(key)?.token,
    () => [...this.scopes.states.values()].find((state) => state.token)?.token,
  );
  private configuredTokensTried = false;
  /** When the full alarm (revalidation, polls, metrics) is next due; catch-up alarms come in between. */
  private regularAt = 0;
  /** After a webhook: catch-up polls left, and each scope's version when it came. */
  private catchUp: { stepsLeft: number; versions: Map<string, string | undefined> } | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.storedLastSuccessAt = (await ctx.storage.get<number>(LAST_SUCCESS_KEY)) ?? 0;
    });
  }

  private get upstream(): string {
    const url = this.env.EDGE_UPSTREAM_URL;
    if (!url) throw new Error('EDGE_UPSTREAM_URL is not set');
    return url.replace(/\/+$/, '');
  }

  private get intervalMs(): number {
    const seconds = Number(this.env.EDGE_SYNC_INTERVAL_SECONDS ?? '15');
    return Math.max(1, Number.isFinite(seconds) ? seconds : 15) * 1000;
  }

  // ---- tokens ------------------------------------------------------------------------------

  validate(secret: string): Promise<ValidateAnswer> {
    return this.validated(secret);
  }

  /** A token's validity; a valid one goes upstream as one of the `seenTokens` of the next forward. */
  private async validated(secret: string): Promise<ValidateAnswer> {
    const answer = await this.tokens.validate(secret);
    if (answer.status === 'valid' && answer.token.type !== 'admin') {
      this.metrics.noteSeen(secret);
      // A token served from the store is revalidated at the next alarm: make sure there is one.
      this.arm();
    }
    return answer;
  }

  /** EDGE_CLIENT_TOKENS: backend tokens the operator lists, so frontend tokens have scopes before any backend SDK calls. */
  private async adoptConfiguredTokens(): Promise<void> {
    if (this.configuredTokensTried) return;
    const listed = (this.env.EDGE_CLIENT_TOKENS ?? '')
      .split(',')
      .map((secret) => secret.trim())
      .filter((secret) => secret.length > 0 && !this.tokens.isValid(secret));
    if (listed.length === 0) {
      this.configuredTokensTried = true;
      return;
    }
    await this.tokens.validateUpstream(listed);
    this.configuredTokensTried = true;
  }

  // ---- snapshots ---------------------------------------------------------------------------

  /**
   * The snapshot serving a caller's token: its own scope for a backend token; for a frontend
   * token, a backend scope of the same environment covering all its projects. The text comes
   * only when the caller's `knownVersion` is not the current one.
   */
  async snapshot(secret: string, knownVersion: string | null): Promise<SnapshotAnswer> {
    const validity = await this.validated(secret);
    if (validity.status === 'invalid') return { status: 'invalid' };
    if (validity.status === 'unavailable') return validity;
    const token = validity.token;
    let state;
    if (token.type === 'client') state = this.scopes.adopt(token);
    else {
      state = this.scopes.serving(token);
      if (!state) {
        await this.adoptConfiguredTokens().catch((error: unknown) => log.warn('EDGE_CLIENT_TOKENS not validated', { error }));
        state = this.scopes.serving(token);
      }
      if (!state) return { status: 'no-scope' };
    }
    if (!state.snapshot) await this.scopes.load(state);
    // Never confirmed since this object started: ask upstream now (a cold start, or a new scope);
    // with a persisted snapshot, only briefly: an upstream that is down must not hold SDKs up.
    if (state.lastAttemptAt === 0) {
      const refresh = this.scopes.refresh(state);
      await (state.snapshot ? Promise.race([refresh, new Promise((resolve) => setTimeout(resolve, COLD_REFRESH_WAIT_MS))]) : refresh);
    }
    // Another caller's first poll of this scope is under way (20 SDKs starting at once): wait for it.
    if (!state.snapshot && state.pending) await state.pending;
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

  /**
   * The webhook: every scope polled now (the upstream's event does not say which scopes moved).
   * Unleash moves its client API's revision up to a second after a change (its revision tick),
   * so a poll right at the event may still get a 304: the scopes that did not move are asked
   * again every CATCH_UP_STEP_MS until they do, at most CATCH_UP_STEPS times (catchUpScopes).
   */
  async refreshAll(): Promise<{ scopes: number; changed: number }> {
    const states = this.scopes.states;
    const before = new Map([...states].map(([key, state]) => [key, state.snapshot?.version]));
    // A poll already under way began before the change: poll again once it is done.
    await Promise.all([...states.values()].map((state) => (state.pending ?? Promise.resolve()).then(() => this.scopes.refresh(state))));
    let changed = 0;
    for (const [key, state] of states) if (state.snapshot?.version !== before.get(key)) changed++;
    // A scope that moved already shows the revision past the change: nothing to catch up.
    this.catchUp = changed === 0 && states.size > 0 ? { stepsLeft: CATCH_UP_STEPS, versions: before } : null;
    if (this.catchUp) {
      const step = Date.now() + CATCH_UP_STEP_MS;
      const next = await this.ctx.storage.getAlarm();
      if (next === null || next > step) await this.ctx.storage.setAlarm(step);
    }
    return { scopes: states.size, changed };
  }

  /**
   * The scopes a webhook's catch-up still waits for: none once any scope's answer moved since it
   * came (Unleash's revision tick, which moves every environment at once, has then passed the
   * change, so the others' 304s are real), else those whose answer has not moved.
   */
  private waitingScopes(): ScopeState[] {
    const catchUp = this.catchUp;
    if (!catchUp || catchUp.stepsLeft <= 0) return [];
    const states = [...this.scopes.states.values()];
    const moved = (state: ScopeState) => catchUp.versions.has(state.key) && state.snapshot?.version !== catchUp.versions.get(state.key);
    if (states.some(moved)) return [];
    return states.filter((state) => state.token && state.snapshot?.version === catchUp.versions.get(state.key));
  }

  /** A catch-up alarm: only the waiting scopes are polled; revalidation and metrics wait for the regular alarm. */
  private async catchUpScopes(): Promise<void> {
    await Promise.all(this.waitingScopes().map((state) => this.scopes.refresh(state)));
    if (this.catchUp) this.catchUp.stepsLeft--;
    await this.scheduleNext();
  }

  /**
   * The next alarm: the next catch-up step while a webhook's catch-up waits for a scope, else
   * the regular one. A regular alarm that came first does not end the catch-up (it polled too
   * early as well), which is what sent some webhook changes a whole interval late.
   */
  private async scheduleNext(): Promise<void> {
    const now = Date.now();
    if (this.waitingScopes().length === 0) this.catchUp = null;
    const at = this.catchUp ? Math.min(now + CATCH_UP_STEP_MS, this.regularAt) : this.regularAt;
    const asked = await this.ctx.storage.getAlarm();
    if (asked === null || asked > at || asked <= now) await this.ctx.storage.setAlarm(at);
  }

  // ---- metrics -----------------------------------------------------------------------------

  /** Usage and registrations from SDKs of `secret`'s scope, merged until the next forward. */
  async addMetrics(
    secret: string,
    rows: readonly MetricRow[],
    applications: readonly ApplicationRow[],
    seenTokens: readonly string[] = [],
  ): Promise<boolean> {
    const validity = await this.validated(secret);
    if (validity.status !== 'valid') return false;
    // What an Edge behind this one saw: passed on for the upstream to judge, as Unleash Edge does.
    for (const seen of seenTokens) if (seen.length > 0 && seen.length <= 512 && seen.isWellFormed()) this.metrics.noteSeen(seen);
    const state = validity.token.type === 'client' ? this.scopes.adopt(validity.token) : this.scopes.serving(validity.token);
    if (!state) return false;
    this.metrics.add(state.key, validity.token.environment, rows, applications);
    this.arm();
    return true;
  }

  /** Forwards each scope's merged metrics whose minute has passed (all of them when `force`). */
  flushMetrics(force = false): Promise<number> {
    return this.metrics.flush(force);
  }

  // ---- the alarm ---------------------------------------------------------------------------

  private arm(): void {
    void this.ctx.storage.getAlarm().then((at) => {
      if (at === null) return this.ctx.storage.setAlarm(Date.now() + this.intervalMs);
    });
  }

  override async alarm(): Promise<void> {
    if (Date.now() < this.regularAt && this.catchUp) return this.catchUpScopes();
    const validSecrets = this.tokens.validSecrets();
    if (validSecrets.length > 0) {
      // Every valid token in one call: a token revoked upstream stops within one interval.
      await this.tokens
        .validateUpstream(validSecrets)
        .catch((error: unknown) => log.warn('edge: revalidating tokens failed; keeping them', { error: String(error) }));
    }
    const states = [...this.scopes.states.values()];
    await Promise.all(states.filter((state) => state.token).map((state) => this.scopes.refresh(state)));
    await this.scopes.probeClientTokens();
    await this.metrics.flush();
    await this.storeLastSuccess();
    if ([...this.scopes.states.values()].some((state) => state.token) || this.metrics.waiting()) {
      this.regularAt = Date.now() + this.intervalMs;
      // A webhook may have asked for an earlier one meanwhile (refreshAll): keep the earlier.
      await this.scheduleNext();
    }
  }

  /** Test hook: forget every token, scope and metric in memory (as an eviction does); KV keeps its copies. */
  async forgetMemory(): Promise<void> {
    this.tokens.clear();
    this.scopes.clear();
    this.metrics.clear();
    this.configuredTokensTried = false;
  }

  private async storeLastSuccess(): Promise<void> {
    if (upstreamStats.lastSuccessAt <= this.storedLastSuccessAt) return;
    this.storedLastSuccessAt = upstreamStats.lastSuccessAt;
    await this.ctx.storage.put(LAST_SUCCESS_KEY, this.storedLastSuccessAt);
  }

  // ---- what /internal-backstage shows --------------------------------------------------------

  /** The upstream's side of health: when it last answered (here or before a restart), the last failure. */
  private upstreamHealth(): UpstreamHealth {
    const lastSuccessAt = Math.max(upstreamStats.lastSuccessAt, this.storedLastSuccessAt) || null;
    const failingNow = upstreamStats.lastErrorAt > upstreamStats.lastSuccessAt;
    const silentFor = Date.now() - (lastSuccessAt ?? this.startedAt);
    // Stale: the last call failed, or nothing has answered for two intervals (+5 s) while scopes are served.
    const stale = failingNow || (silentFor > this.intervalMs * 2 + 5000 && (lastSuccessAt !== null || this.scopes.states.size > 0));
    return {
      stale,
      staleSince: stale ? iso(lastSuccessAt ?? this.startedAt) : null,
      lastSuccessAt: iso(lastSuccessAt),
      lastError: upstreamStats.lastError,
      lastErrorAt: iso(upstreamStats.lastErrorAt),
      calls: { ...upstreamStats.calls },
      failures: { ...upstreamStats.failures },
    };
  }

  async status(withText = false): Promise<SyncStatus> {
    return {
      upstream: this.upstream,
      intervalSeconds: this.intervalMs / 1000,
      health: this.upstreamHealth(),
      tokenCounts: this.tokens.counts(),
      scopes: [...this.scopes.states.values()].map((state) => ({
        key: state.key,
        environment: state.scope.environment,
        projects: state.scope.projects,
        features: state.snapshot ? countFeatures(state.snapshot.text) : null,
        confirmedAt: iso(state.snapshot?.confirmedAt),
        changedAt: iso(state.changedAt),
        lastError: state.lastError,
        armed: state.token !== null,
        ...(withText && state.snapshot ? { text: state.snapshot.text } : {}),
      })),
      tokens: this.tokens.validated(),
    };
  }
}

function iso(ms: number | null | undefined): string | null {
  return ms ? new Date(ms).toISOString() : null;
}

function countFeatures(text: string): number | null {
  try {
    const body = JSON.parse(text) as { features?: unknown };
    return Array.isArray(body.features) ? body.features.length : null;
  } catch {
    return null;
  }
}
