/**
 * The binding's source in Edge mode (docs/edge.md): a key is checked the way Edge's HTTP routes
 * check a token (validated upstream through the sync object on first sight, then this
 * isolate's cache; an unknown one is remembered as unknown, so repeating it costs the upstream
 * nothing), the flags come from the token scope's snapshot (`snapshotForToken`, the one the
 * Edge's `/api/frontend` answers from), and usage joins the sync object's metrics merge that
 * Edge's own metrics routes feed, forwarded upstream at most once a minute per scope.
 */
import type { ApiTokenRecord } from '../auth/principal';
import type { Env } from '../env';
import { log } from '../log';
import type { MetricsBody } from '../sdk/client-api/schema';
import type { Snapshot } from '../sdk/client-api/snapshot';
import { knownToken, snapshotForToken, syncObject, tokenFor, wellFormedToken } from '../edge/scope';
import { metricRows } from '../edge/routes';
import type { UpstreamToken } from '../edge/upstream';

interface EdgeKey {
  hash: string;
  secret: string;
}

function upstreamToken(token: ApiTokenRecord, key: EdgeKey): UpstreamToken {
  return {
    token: key.secret,
    type: token.type === 'frontend' ? 'frontend' : 'client',
    projects: token.projects,
    environment: token.environment,
  };
}

/** The upstream's verdict on a key, as the binding's key record; null when the upstream does not accept it. */
export async function edgeTrustedKey(env: Env, _ctx: ExecutionContext, key: EdgeKey): Promise<ApiTokenRecord | null> {
  let token = knownToken(key.secret);
  // A malformed key never reaches the upstream (as on HTTP).
  if (token === undefined) token = wellFormedToken(key.secret) ? await tokenFor(env, key.secret) : null;
  if (token === null) return null;
  return {
    hash: key.hash,
    id: null,
    type: token.type,
    name: 'edge',
    projects: token.projects,
    environment: token.environment,
    expiresAt: null,
  };
}

/** Refusals (revoked upstream since the key was checked: 401; no scope: 511; upstream out of reach: 503) become the binding's kinds in the entrypoint. */
export async function edgeSnapshot(env: Env, token: ApiTokenRecord, key: EdgeKey): Promise<Snapshot> {
  return (await snapshotForToken(env, key.secret, upstreamToken(token, key))).snapshot;
}

export async function edgeSendUsage(env: Env, token: ApiTokenRecord, key: EdgeKey, post: MetricsBody): Promise<void> {
  const rows = metricRows(post, token.environment);
  if (rows.length === 0) return;
  if (!(await syncObject(env).addMetrics(key.secret, rows, [])))
    log.warn('edge: binding usage not merged (the key is no longer valid)', { appName: post.appName });
}
