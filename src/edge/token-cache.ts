/**
 * The sync object's token cache (sync.ts): each SDK token validated upstream once
 * (`POST /edge/validate`), invalid ones remembered for NEGATIVE_TTL_MS, new look-ups limited
 * per second, and what the upstream says about every token handed to the scopes (a valid
 * client token arms its scope, an invalid one stops speaking for it).
 */
import { scopeKey } from './snapshot-source';
import type { TokenStore } from './token-store';
import { validateTokens, type UpstreamToken } from './upstream';

const NEGATIVE_TTL_MS = 5 * 60_000;
const MAX_NEGATIVE = 10_000;
/** Upstream validations of new tokens per second; beyond, they wait for one batched call (deferred). */
const VALIDATIONS_PER_SECOND = 10;
/** Tokens asked about in the one deferred call per second beyond that (`/edge/validate` takes 100). */
const MAX_DEFERRED = 100;

export type ValidateAnswer = { status: 'valid'; token: UpstreamToken } | { status: 'invalid' } | { status: 'unavailable'; reason: string };

/** Who hears of every token the upstream judged: the scopes (scope-poller.ts). */
export interface TokenListener {
  adopt(token: UpstreamToken): void;
  forget(secret: string): void;
}

export interface ValidatedToken {
  token: string;
  type: UpstreamToken['type'];
  environment: string;
  projects: readonly string[];
  status: 'validated';
}

/** Only a secret's public part is ever shown (`<projects>:<environment>.` and 6 characters). */
function redact(secret: string): string {
  const dot = secret.indexOf('.');
  return `${secret.slice(0, dot + 1)}${secret.slice(dot + 1, dot + 7)}…`;
}

export class TokenCache {
  private readonly known = new Map<string, { info: UpstreamToken | null; checkedAt: number }>();
  /** Tokens answered from the token store since the upstream last confirmed them (served offline). */
  private readonly offline = new Set<string>();
  private readonly inflight = new Map<string, Promise<ValidateAnswer>>();
  private validationWindow = { second: 0, count: 0 };
  private deferredBatch: { secrets: string[]; promise: Promise<UpstreamToken[]> } | null = null;

  constructor(
    private readonly upstream: () => string,
    private readonly listener: TokenListener,
    private readonly store: TokenStore | null = null,
  ) {}

  async validate(secret: string): Promise<ValidateAnswer> {
    const known = this.known.get(secret);
    const now = Date.now();
    if (known?.info) return { status: 'valid', token: known.info };
    if (known && now - known.checkedAt < NEGATIVE_TTL_MS) return { status: 'invalid' };
    const running = this.inflight.get(secret);
    if (running) return running;
    // Seen valid before this object started (a restart, an eviction): served at once from the
    // store, and revalidated with every other valid token at the next alarm (within an interval).
    const stored = await this.store?.find(secret, now);
    if (stored) {
      this.remember(secret, stored, now);
      this.offline.add(secret);
      return { status: 'valid', token: stored };
    }
    const second = Math.floor(now / 1000);
    if (this.validationWindow.second !== second) this.validationWindow = { second, count: 0 };
    if (this.validationWindow.count >= VALIDATIONS_PER_SECOND) return this.deferred(secret);
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

  /**
   * Beyond the per-second budget, new tokens wait for the next second and go upstream together in
   * one call (up to MAX_DEFERRED): 20 SDKs starting at once are all answered, a flood of made-up
   * tokens costs the upstream one call a second, and only what does not fit is refused (503).
   */
  private deferred(secret: string): Promise<ValidateAnswer> {
    if (!this.deferredBatch) {
      const secrets: string[] = [];
      const wait = 1000 - (Date.now() % 1000);
      const promise = new Promise((resolve) => setTimeout(resolve, wait)).then(() => {
        this.deferredBatch = null;
        return this.validateUpstream(secrets);
      });
      this.deferredBatch = { secrets, promise };
    }
    const batch = this.deferredBatch;
    if (!batch.secrets.includes(secret)) {
      if (batch.secrets.length >= MAX_DEFERRED) {
        return Promise.resolve({ status: 'unavailable', reason: 'too many unknown tokens at once; try again' });
      }
      batch.secrets.push(secret);
    }
    return batch.promise.then(
      (found): ValidateAnswer => {
        const token = found.find((entry) => entry.token === secret);
        return token ? { status: 'valid', token } : { status: 'invalid' };
      },
      (error: unknown): ValidateAnswer => ({ status: 'unavailable', reason: error instanceof Error ? error.message : String(error) }),
    );
  }

  /** Asks upstream about `secrets` and records every answer (valid and invalid). */
  async validateUpstream(secrets: readonly string[]): Promise<UpstreamToken[]> {
    const found = await validateTokens(this.upstream(), secrets);
    const now = Date.now();
    const valid = new Map(found.map((token) => [token.token, token]));
    if (this.known.size > MAX_NEGATIVE) {
      for (const [secret, state] of this.known) if (!state.info) this.known.delete(secret);
    }
    for (const secret of secrets) {
      const info = valid.get(secret) ?? null;
      this.offline.delete(secret);
      this.remember(secret, info, now);
    }
    await this.store?.record(
      found,
      secrets.filter((secret) => !valid.has(secret)),
      now,
    );
    return secrets.flatMap((secret) => valid.get(secret) ?? []);
  }

  private remember(secret: string, info: UpstreamToken | null, now: number): void {
    this.known.set(secret, { info, checkedAt: now });
    if (info?.type === 'client') this.listener.adopt(info);
    if (!info) this.listener.forget(secret);
  }

  /** How many valid tokens are held, and how many of them only the store vouches for (upstream not asked since). */
  counts(): { valid: number; offline: number } {
    return { valid: this.validSecrets().length, offline: this.offline.size };
  }

  /** The upstream refused this token elsewhere (a 401/403 on its client API): invalid from now on. */
  refuse(secret: string): void {
    this.known.set(secret, { info: null, checkedAt: Date.now() });
    this.offline.delete(secret);
    void this.store?.record([], [secret]);
  }

  isValid(secret: string): boolean {
    return Boolean(this.known.get(secret)?.info);
  }

  validSecrets(): string[] {
    return [...this.known].filter(([, state]) => state.info).map(([secret]) => secret);
  }

  /** Every valid client (backend) token, in the order they were first seen. */
  *clientTokens(): Generator<[string, UpstreamToken]> {
    for (const [secret, known] of this.known) if (known.info?.type === 'client') yield [secret, known.info];
  }

  /** The first valid client token of a scope (by its key), if any. */
  clientTokenOf(key: string): string | null {
    for (const [secret, info] of this.clientTokens()) if (scopeKey(info) === key) return secret;
    return null;
  }

  /** The valid tokens as /internal-backstage/tokens shows them (secrets redacted). */
  validated(): ValidatedToken[] {
    return [...this.known].flatMap(([secret, state]) =>
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
    );
  }

  clear(): void {
    this.known.clear();
    this.offline.clear();
  }
}
