/**
 * The tokens this Edge has seen valid, kept in the sync object's durable storage so that a
 * restart during an upstream outage (a deploy, an eviction) still serves the SDKs it served
 * before. Only the SHA-256 of each secret is stored, with its scope and when the upstream last
 * confirmed it; the secret itself stays in memory (it arrives again with the SDK's next call).
 * A stored token is trusted without the upstream for EDGE_OFFLINE_TOKEN_HOURS after that
 * confirmation (docs/edge.md, "Through an outage and a restart").
 */
import { sha256Hex } from '../lib/encoding';
import type { UpstreamToken } from './upstream';

const PREFIX = 'token:';
/** A week by default: outages of a day or two are survived, a token revoked meanwhile is not kept for ever. */
const DEFAULT_TRUST_HOURS = 168;

interface PersistedToken {
  type: UpstreamToken['type'];
  environment: string;
  projects: string[];
  /** When the upstream last said this token is valid, ms. */
  confirmedAt: number;
}

export function trustMs(hours: string | undefined): number {
  const value = Number(hours ?? '');
  return (Number.isFinite(value) && value > 0 ? value : DEFAULT_TRUST_HOURS) * 3_600_000;
}

export class TokenStore {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly trust: number,
  ) {}

  /** The stored token of `secret`, when the upstream confirmed it within the trust window. */
  async find(secret: string, now = Date.now()): Promise<UpstreamToken | null> {
    const stored = await this.storage.get<PersistedToken>(PREFIX + (await sha256Hex(secret)));
    if (!stored || now - stored.confirmedAt > this.trust) return null;
    return { token: secret, type: stored.type, environment: stored.environment, projects: stored.projects };
  }

  /** When the stored token of `secret` was last confirmed (null when none is stored). */
  async confirmedAt(secret: string): Promise<number | null> {
    return (await this.storage.get<PersistedToken>(PREFIX + (await sha256Hex(secret))))?.confirmedAt ?? null;
  }

  /** What the upstream just said: valid tokens stored (confirmed now), refused ones removed. */
  async record(valid: readonly UpstreamToken[], refused: readonly string[], now = Date.now()): Promise<void> {
    const entries: Record<string, PersistedToken> = {};
    for (const token of valid) {
      entries[PREFIX + (await sha256Hex(token.token))] = {
        type: token.type,
        environment: token.environment,
        projects: token.projects,
        confirmedAt: now,
      };
    }
    const removed = await Promise.all(refused.map(async (secret) => PREFIX + (await sha256Hex(secret))));
    // storage.put/delete take at most 128 keys at once.
    const keys = Object.keys(entries);
    for (let i = 0; i < keys.length; i += 128) {
      await this.storage.put(Object.fromEntries(keys.slice(i, i + 128).map((key) => [key, entries[key]])));
    }
    for (let i = 0; i < removed.length; i += 128) await this.storage.delete(removed.slice(i, i + 128));
  }

  /** How many tokens are stored (valid when last asked), for /internal-backstage/metrics. */
  async count(): Promise<number> {
    return (await this.storage.list({ prefix: PREFIX })).size;
  }
}
