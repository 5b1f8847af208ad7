/**
 * Where the binding gets what it answers from: whether a key is still trusted, the snapshot
 * of flags for its scope, and where its usage counts go. In the service both are the SDK
 * APIs' own: the key through `apiKeyRecord` (isolate cache, KV, D1; revocation and expiry
 * exactly as on HTTP), the snapshot through `snapshotFor` (the isolate's, re-read once per
 * revision tick and at once after a local write), usage into the metrics Queue. Edge mode
 * gives its own (./edge-source.ts: keys validated upstream, snapshots per token scope, usage
 * to the upstream): `sourceFor` is the one place that chooses.
 */
import { apiKeyRecord } from '../auth/authenticate';
import type { ApiTokenRecord } from '../auth/principal';
import type { Env } from '../env';
import type { MetricsBody } from '../sdk/client-api/schema';
import { snapshotFor, type Snapshot } from '../sdk/client-api/snapshot';
import { environmentOf } from '../sdk/client-api/token-environment';
import { queueMetrics, type SdkCaller } from '../sdk/client-api/usage';
import { edgeSendUsage, edgeSnapshot, edgeTrustedKey } from './edge-source';

/** The key a caller presented: its SHA-256 (what the service compares) and the key itself (what Edge mode asks its upstream about). */
export interface PresentedKey {
  hash: string;
  secret: string;
}

export interface BindingSource {
  /** The record of a live key, or null (unknown, revoked, expired). */
  trustedKey(env: Env, ctx: ExecutionContext, key: PresentedKey): Promise<ApiTokenRecord | null>;
  /** The snapshot a key's answers come from (its scope; its projects filter later). */
  snapshot(env: Env, token: ApiTokenRecord, key: PresentedKey): Promise<Snapshot>;
  /** Hands on one bucket of usage counted for a key, as an SDK's metrics post. */
  sendUsage(env: Env, token: ApiTokenRecord, key: PresentedKey, post: MetricsBody): Promise<void>;
}

function callerOf(token: ApiTokenRecord): SdkCaller {
  const environment = environmentOf(token);
  return token.type === 'frontend'
    ? { environment, clientIp: null, frontend: { tokenId: token.id ?? token.hash, projects: token.projects } }
    : { environment, clientIp: null };
}

/** The service's own: D1 is the source of flags. */
const serviceSource: BindingSource = {
  trustedKey: (env, ctx, key) => apiKeyRecord(env, ctx, key.hash),
  snapshot: (env, token) => snapshotFor(env, environmentOf(token)),
  sendUsage: (env, token, _key, post) => queueMetrics(env, callerOf(token), post),
};

/** Edge mode's: the upstream Unleash is the source of keys and flags (./edge-source.ts). */
const edgeSource: BindingSource = { trustedKey: edgeTrustedKey, snapshot: edgeSnapshot, sendUsage: edgeSendUsage };

/** The source for this deployment: Edge mode (wrangler environment `edge`) is set by EDGE_UPSTREAM_URL. */
export function sourceFor(env: Env): BindingSource {
  return env.EDGE_UPSTREAM_URL ? edgeSource : serviceSource;
}
