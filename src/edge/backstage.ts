/**
 * Edge mode's `/internal-backstage/*` (docs/edge.md, "Operating it"): health and readiness that
 * say how stale the served flags are and why, Prometheus metrics, and (for the holder of the
 * webhook secret) the tokens and flag definitions held.
 */
import type { IRequest } from 'itty-router';
import { keyFromHeader } from '../auth/authenticate';
import { digestsEqual } from '../auth/secrets';
import type { Env } from '../env';
import { authenticationRequired } from '../http/errors';
import { json } from '../http/responses';
import { sha256Hex } from '../lib/encoding';
import { kvKey } from './persisted';
import { label, requestMetricsText } from './request-metrics';
import { syncObject } from './scope';

/** Whether the request carries the webhook's shared secret (compared as digests: no length or prefix shows in time). */
export async function holdsWebhookSecret(request: Request, env: Env): Promise<boolean> {
  const expected = env.EDGE_WEBHOOK_SECRET;
  const given = keyFromHeader(request);
  if (!expected || given === null) return false;
  return digestsEqual(await sha256Hex(given), await sha256Hex(expected));
}

/**
 * `status` stays `OK` while the Worker answers (a liveness probe must not recycle the Worker
 * that serves the last good flags); `upstream.stale`, `staleSince` and `lastError` say whether
 * those flags are current.
 */
export async function health(_request: IRequest, env: Env): Promise<Response> {
  const status = await syncObject(env).status();
  const now = Date.now();
  const ages = status.scopes.map((scope) => (scope.confirmedAt ? (now - Date.parse(scope.confirmedAt)) / 1000 : null));
  const known = ages.filter((age): age is number => age !== null);
  const oldest = known.length > 0 ? Math.round(Math.max(...known)) : null;
  // A scope not confirmed by upstream for two intervals is stale too (it is still answered, from the last good copy).
  const scopeStale = ages.some((age) => age === null || age > status.intervalSeconds * 2 + 5);
  const { health: upstream } = status;
  return json({
    status: 'OK',
    upstream: {
      url: status.upstream,
      intervalSeconds: status.intervalSeconds,
      stale: upstream.stale || scopeStale,
      staleSince: upstream.staleSince,
      lastSuccessAt: upstream.lastSuccessAt,
      lastError: upstream.lastError,
      lastErrorAt: upstream.lastErrorAt,
    },
    tokens: status.tokenCounts,
    scopes: status.scopes.map((scope, index) => ({
      scope: scope.key,
      features: scope.features,
      confirmedAt: scope.confirmedAt,
      secondsSinceConfirmed: ages[index] === null ? null : Math.round(ages[index]!),
      changedAt: scope.changedAt,
      lastError: scope.lastError,
    })),
    oldestSnapshotSeconds: oldest,
  });
}

/** Ready when there are flags to serve: a scope in the sync object, or one persisted in KV (after a restart). */
export async function ready(_request: IRequest, env: Env): Promise<Response> {
  const status = await syncObject(env).status();
  let ok = status.scopes.some((scope) => scope.features !== null);
  if (!ok && env.EDGE_SNAPSHOTS) {
    const listed = await env.EDGE_SNAPSHOTS.list({ prefix: kvKey(status.upstream, ''), limit: 1 });
    ok = listed.keys.length > 0;
  }
  return json({ status: ok ? 'READY' : 'NOT_READY' }, ok ? 200 : 503);
}

/** Backstage views that name tokens and flags: only for whoever holds the webhook secret. */
function operatorOnly(handler: (env: Env) => Promise<Response>) {
  return async (request: IRequest, env: Env): Promise<Response> => {
    if (!(await holdsWebhookSecret(request, env))) throw authenticationRequired(request.headers.has('authorization'));
    return handler(env);
  };
}

export const backstageTokens = operatorOnly(async (env) => {
  const status = await syncObject(env).status();
  return json({ tokens: status.tokens });
});

/** As Unleash Edge: the flag definitions held, per scope (`<environment>:<projects>`), as the upstream sent them. */
export const backstageFeatures = operatorOnly(async (env) => {
  const status = await syncObject(env).status(true);
  const parts = status.scopes.flatMap((scope) => (scope.text === undefined ? [] : [`${JSON.stringify(scope.key)}:${scope.text}`]));
  return new Response(`{${parts.join(',')}}`, { headers: { 'content-type': 'application/json; charset=utf-8' } });
});

function gauge(name: string, help: string, samples: [string, number][], type = 'gauge'): string {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples.map(([labels, value]) => `${name}${labels} ${value}`)].join('\n');
}

/** Prometheus text, in Unleash Edge's style (docs/edge.md lists every series). Open, as Edge's is. */
export async function backstageMetrics(_request: IRequest, env: Env): Promise<Response> {
  const status = await syncObject(env).status();
  const now = Date.now();
  const kinds = Object.keys(status.health.calls);
  const scopeLabels = (scope: (typeof status.scopes)[number]) =>
    `{environment=${label(scope.environment)},projects=${label([...scope.projects].sort().join(','))}}`;
  const text = [
    requestMetricsText(),
    gauge(
      'upstream_requests_total',
      'Calls the sync object made to the upstream Unleash, by kind (validate, features, metrics).',
      kinds.map((kind) => [`{kind=${label(kind)}}`, status.health.calls[kind]!]),
      'counter',
    ),
    gauge(
      'upstream_failures_total',
      'Calls to the upstream that got no answer or an answer other than 2xx/304, by kind.',
      kinds.map((kind) => [`{kind=${label(kind)}}`, status.health.failures[kind]!]),
      'counter',
    ),
    gauge('upstream_stale', '1 while the upstream is not confirming the flags served.', [['', status.health.stale ? 1 : 0]]),
    gauge(
      'features_snapshot_age_seconds',
      'Seconds since the upstream last confirmed each scope’s flags.',
      status.scopes.flatMap((scope) =>
        scope.confirmedAt ? [[scopeLabels(scope), Math.round((now - Date.parse(scope.confirmedAt)) / 1000)] as [string, number]] : [],
      ),
    ),
    gauge(
      'features_count',
      'Flags in each scope’s snapshot.',
      status.scopes.flatMap((scope) => (scope.features === null ? [] : [[scopeLabels(scope), scope.features] as [string, number]])),
    ),
    gauge('token_cache_valid_tokens', 'Valid tokens the sync object holds (offline: vouched for by the token store only).', [
      ['{source="upstream"}', status.tokenCounts.valid - status.tokenCounts.offline],
      ['{source="offline"}', status.tokenCounts.offline],
    ]),
  ].join('\n');
  return new Response(`${text}\n`, { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' } });
}
