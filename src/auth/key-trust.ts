/**
 * "Is this key still trusted?", for the SDK fast paths (client-api/memo.ts answers repeated
 * polls, frontend-api/early.ts answers a trusted frontend key before routing). Both keep
 * something on the strength of a key the full path authenticated, and both may use it only
 * while the full path would accept the key without looking it up again:
 *
 * - the isolate still trusts the key's record (`trustedUntil`, at most ISOLATE_CACHE_TTL_MS),
 * - no credential has been forgotten in this isolate since (a revocation or expiry change in
 *   this isolate takes effect at once, as on the full path),
 * - the token has not expired.
 *
 * The last-seen time of the token is still recorded, once a minute, as the full path does.
 */
import { keyFromHeader, SEEN_AT_INTERVAL_MS, touchSeenAt } from './authenticate';
import { rememberedHashOfKey } from './key-hashes';
import type { ApiTokenRecord } from './principal';
import { trustedUntil } from './token-records';
import { credentialGeneration } from '../db/coherence';
import type { Env } from '../env';

/** What a fast path holds about a key it may answer for without a look-up. */
export interface KeyTrust {
  /** When the isolate stops trusting the key's record (ms). */
  until: number;
  /** When the token expires (ms), Infinity for never. */
  expiresAt: number;
  /** The credential generation it was trusted at: any credential forgotten since ends the trust. */
  generation: number;
  /** When to record the token's last use again. */
  touchAt: number;
}

/**
 * The trust the isolate gives the request's key now, after the full path authenticated it as
 * `token`; undefined when the isolate would look the key up again (nothing may be kept).
 */
export function trustKey(request: Request, token: ApiTokenRecord): KeyTrust | undefined {
  const raw = keyFromHeader(request);
  const hash = raw === null ? undefined : rememberedHashOfKey(raw);
  const until = hash === undefined ? 0 : trustedUntil('apikey', hash);
  if (until === 0) return undefined;
  return {
    until,
    expiresAt: token.expiresAt === null ? Infinity : Date.parse(token.expiresAt),
    generation: credentialGeneration(),
    touchAt: Date.now() + SEEN_AT_INTERVAL_MS,
  };
}

/** Whether the key is still trusted at `now` (ms). */
export function stillTrusted(trust: KeyTrust, now: number): boolean {
  return now < trust.until && now < trust.expiresAt && trust.generation === credentialGeneration();
}

/** Records the token's last use when a minute has passed since the last record (on an answer from a fast path). */
export function touchIfDue(trust: KeyTrust, now: number, env: Env, ctx: ExecutionContext, tokenId: string | null): void {
  if (tokenId === null || now < trust.touchAt) return;
  trust.touchAt = now + SEEN_AT_INTERVAL_MS;
  touchSeenAt(env, ctx, 'apikey', tokenId);
}
