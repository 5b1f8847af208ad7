/**
 * Where the binding gets what it answers from: whether a key is still trusted, and the
 * snapshot of flags for its scope. In the service (today) both are the SDK APIs' own: the
 * key through `apiKeyRecord` (isolate cache, KV, D1; revocation and expiry exactly as on
 * HTTP), the snapshot through `snapshotFor` (the isolate's, re-read once per revision tick and
 * at once after a local write). Edge mode gives its own source (keys validated upstream,
 * snapshots per token scope): `sourceFor` is the one place that chooses.
 */
import { apiKeyRecord } from '../auth/authenticate';
import type { ApiTokenRecord } from '../auth/principal';
import type { Env } from '../env';
import { snapshotFor, type Snapshot } from '../sdk/client-api/snapshot';
import { environmentOf } from '../sdk/client-api/token-environment';

export interface BindingSource {
  /** The record of a live key by the SHA-256 of its secret, or null (unknown, revoked, expired). */
  trustedKey(env: Env, ctx: ExecutionContext, hash: string): Promise<ApiTokenRecord | null>;
  /** The snapshot a key's answers come from (its environment; its projects filter later). */
  snapshot(env: Env, token: ApiTokenRecord): Promise<Snapshot>;
}

/** The service's own: D1 is the source of flags. */
export const serviceSource: BindingSource = {
  trustedKey: apiKeyRecord,
  snapshot: (env, token) => snapshotFor(env, environmentOf(token)),
};

/** The source for this deployment. Edge mode (wrangler environment `edge`) plugs in here. */
export function sourceFor(_env: Env): BindingSource {
  return serviceSource;
}
