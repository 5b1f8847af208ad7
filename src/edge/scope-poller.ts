/**
 * The sync object's scopes (sync.ts): one snapshot per token scope (environment + projects),
 * polled with `If-None-Match` by a valid client token of that scope, the last good one
 * written to KV (persisted.ts) so a cold object or an upstream outage still answers.
 */
import type { Env } from '../env';
import { log } from '../log';
import { murmur3 } from '../sdk/evaluation/murmur';
import { kvKey, type StoredSnapshot } from './persisted';
import { scopeKey, subsumes, type Scope } from './snapshot-source';
import type { TokenCache } from './token-cache';
import { fetchFeatures, UpstreamError, type UpstreamToken } from './upstream';

export interface ScopeState {
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

export class ScopePoller {
  readonly states = new Map<string, ScopeState>();

  constructor(
    private readonly env: Env,
    private readonly upstream: () => string,
    private readonly tokens: TokenCache,
  ) {}

  /** A valid client token arms its scope (made on first sight) for polling. */
  adopt(token: UpstreamToken): ScopeState {
    const scope: Scope = { environment: token.environment, projects: token.projects };
    const key = scopeKey(scope);
    let state = this.states.get(key);
    if (!state) {
      state = { scope, key, token: null, snapshot: null, lastAttemptAt: 0, lastError: null, changedAt: null, pending: null };
      this.states.set(key, state);
    }
    state.token ??= token.token;
    return state;
  }

  /** A token found invalid no longer speaks for its scope; another valid one of the scope takes over. */
  forget(secret: string): void {
    for (const state of this.states.values()) {
      if (state.token !== secret) continue;
      state.token = this.tokens.clientTokenOf(state.key);
    }
  }

  /** The scope answering a frontend token: a backend scope of its environment covering all its projects. */
  serving(token: UpstreamToken): ScopeState | undefined {
    let best: ScopeState | undefined;
    for (const state of this.states.values()) {
      if (!state.token || !subsumes(state.scope, token)) continue;
      // The narrowest covering scope: it is what a backend token of exactly that scope would see.
      if (!best || state.scope.projects.length < best.scope.projects.length) best = state;
    }
    return best;
  }

  async load(state: ScopeState): Promise<void> {
    const stored = await this.env.EDGE_SNAPSHOTS?.get<StoredSnapshot>(kvKey(this.upstream(), state.key), 'json');
    if (stored && !state.snapshot) state.snapshot = stored;
  }

  /** One poll of a scope; concurrent callers share it. A failure keeps the last good snapshot. */
  refresh(state: ScopeState): Promise<void> {
    if (state.pending) return state.pending;
    const run = async () => {
      state.lastAttemptAt = Date.now();
      if (!state.token) {
        state.lastError = 'no valid backend token of this scope seen since the sync object started';
        return;
      }
      try {
        const answer = await fetchFeatures(this.upstream(), state.token, state.snapshot?.version ?? null);
        const now = Date.now();
        if (answer.status === 'unchanged' && state.snapshot) {
          state.snapshot = { ...state.snapshot, confirmedAt: now };
        } else if (answer.status === 'changed') {
          JSON.parse(answer.body); // an answer that is not JSON is an upstream failure, not a snapshot
          const version = answer.etag ?? `"${murmur3(answer.body).toString(16)}"`;
          state.snapshot = { version, text: answer.body, confirmedAt: now };
          state.changedAt = now;
          await this.env.EDGE_SNAPSHOTS?.put(kvKey(this.upstream(), state.key), JSON.stringify(state.snapshot));
        }
        state.lastError = null;
      } catch (error) {
        state.lastError = error instanceof Error ? error.message : String(error);
        if (error instanceof UpstreamError && (error.status === 401 || error.status === 403) && state.token) {
          // The upstream no longer accepts this scope's token: drop it at once, not at the next revalidation.
          this.tokens.refuse(state.token);
          this.forget(state.token);
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
   * Unleash 8.2.0's `/edge/validate` goes on listing a deleted token for many minutes while its
   * client API refuses it at once (recorded: test/fixtures/edge-upstream-8.json). So every other
   * valid backend token of a scope is also asked for the scope's flags with the current ETag each
   * interval (a 304 for the upstream), and dropped on 401/403: O(backend tokens) calls, as few as
   * the tokens a team made, not as many as its SDK instances.
   */
  async probeClientTokens(): Promise<void> {
    const probes: Promise<void>[] = [];
    for (const [secret, info] of this.tokens.clientTokens()) {
      const state = this.states.get(scopeKey(info));
      if (!state || state.token === secret) continue;
      probes.push(
        fetchFeatures(this.upstream(), secret, state.snapshot?.version ?? null).then(
          () => undefined,
          (error: unknown) => {
            if (error instanceof UpstreamError && (error.status === 401 || error.status === 403)) this.tokens.refuse(secret);
          },
        ),
      );
    }
    await Promise.all(probes);
  }

  clear(): void {
    this.states.clear();
  }
}
