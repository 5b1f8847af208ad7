/**
 * Edge mode against a PRIVATE copy of the real Unleash 8.2.0 that this test stops and starts
 * (`npm run test:oracles`; the shared oracles are never stopped). The copy is the shared oracle's
 * folder (`UNLEASH8_ORACLE_DIR`, default /work/shared/unleash8-oracle) copied once with its
 * node_modules to the temp directory, run on its own port and database, with
 * `UNLEASH_ALLOW_PRIVATE_URL_IN_INTEGRATION=true` so its webhook integration may call loopback.
 *
 * 1. 20 backend tokens poll from one address every second for a minute: 0 × 429; meanwhile a
 *    flag toggled in Unleash reaches the Edge by the webhook the REAL integration sends (< 2 s,
 *    with a 60 s poll interval, so only the webhook explains it).
 * 2. Unleash stopped, the Edge restarted on the same persisted state: the last flags are served
 *    to every token it validated before; `/ready` is 200 and health says stale.
 * 3. Unleash back: no SDK gets a 429. The figures go to bench/edge/RESULTS.md.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEdge, until } from '../support/edge-oracle';
import { testWorkerPort } from '../support/node-env';

const SOURCE = process.env.UNLEASH8_ORACLE_DIR ?? '/work/shared/unleash8-oracle';
const COPY = path.join(os.tmpdir(), 'edge-private-unleash8');
const UPSTREAM_PORT = Number(process.env.EDGE_PRIVATE_UPSTREAM_PORT ?? 4600);
const UPSTREAM = `http://127.0.0.1:${UPSTREAM_PORT}`;
const ADMIN = '*:*.unleash-insecure-admin-api-token';
const SECRET = 'edge-restart-oracle-webhook-secret';
const FLAG = 'edge-restart-flag';
/** The webhook events Unleash 8.2.0 offers for flag changes (its `GET /api/admin/addons` providers list). */
const EVENTS = [
  'feature-created',
  'feature-updated',
  'feature-archived',
  'feature-revived',
  'feature-stale-on',
  'feature-stale-off',
  'feature-completed',
  'feature-environment-enabled',
  'feature-environment-disabled',
  'feature-strategy-add',
  'feature-strategy-update',
  'feature-strategy-remove',
  'feature-metadata-updated',
  'feature-variants-updated',
  'feature-project-change',
];

const upstreamEnv = {
  ...process.env,
  ORACLE_PORT: String(UPSTREAM_PORT),
  ORACLE_DB_NAME: 'edge_private_unleash8',
  UNLEASH_ALLOW_PRIVATE_URL_IN_INTEGRATION: 'true',
};
function startUpstream(fresh: boolean): void {
  execFileSync(path.join(COPY, 'start.sh'), fresh ? ['--fresh'] : [], { env: upstreamEnv, stdio: 'ignore' });
}
function stopUpstream(): void {
  // --keep-pg: the PostgreSQL cluster is shared with the shared oracle.
  execFileSync(path.join(COPY, 'stop.sh'), ['--keep-pg'], { env: upstreamEnv, stdio: 'ignore' });
}

/** GET /api/client/features; a connection the local runtime drops is status 0, its reason kept. */
async function poll(base: string, token: string): Promise<number> {
  try {
    const response = await fetch(`${base}/api/client/features`, { headers: { authorization: token } });
    if (response.status !== 200 && !figures.firstRefusal) figures.firstRefusal = `${response.status} ${await response.text()}`;
    else await response.body?.cancel();
    return response.status;
  } catch (error) {
    figures.dropped = String(error);
    return 0;
  }
}

async function admin(method: string, route: string, body?: unknown): Promise<any> {
  const response = await fetch(`${UPSTREAM}${route}`, {
    method,
    headers: { authorization: ADMIN, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
  return response.status === 204 ? null : response.json().catch(() => null);
}

async function flagState(base: string, token: string): Promise<{ status: number; enabled?: boolean }> {
  const response = await fetch(`${base}/api/client/features`, { headers: { authorization: token } });
  if (response.status !== 200) return { status: response.status, enabled: (await response.body?.cancel(), undefined) };
  const body = (await response.json()) as { features: { name: string; enabled: boolean }[] };
  return { status: 200, enabled: body.features.find((feature) => feature.name === FLAG)?.enabled };
}

let tokens: string[] = [];
let edge: { base: string; stop: () => void } | undefined;
const port = testWorkerPort(9200) + 20;
const persistTo = mkdtempSync(path.join(os.tmpdir(), 'edge-restart-state-'));
const vars = { EDGE_SYNC_INTERVAL_SECONDS: '60', EDGE_METRICS_INTERVAL_SECONDS: '60' };
const figures: Record<string, unknown> = {};
/** When the webhook was saved: Unleash reads its integrations at most once a minute, so it fires from a minute later on. */
let webhookSavedAt = 0;

beforeAll(async () => {
  if (!existsSync(COPY)) execFileSync('cp', ['-a', SOURCE, COPY]);
  startUpstream(true);
  await admin('POST', '/api/admin/projects/default/features', { name: FLAG, type: 'release' });
  await admin('POST', `/api/admin/projects/default/features/${FLAG}/environments/development/strategies`, {
    name: 'default',
    parameters: {},
  });
  tokens = [];
  for (let i = 0; i < 20; i++) {
    const created = await admin('POST', '/api/admin/api-tokens', {
      tokenName: `edge-restart-${i}`,
      type: 'client',
      environment: 'development',
      projects: ['*'],
    });
    tokens.push(created.secret);
  }
  edge = await startEdge(port, UPSTREAM, { webhookSecret: SECRET, persistTo, vars });
  // docs/edge.md's webhook, as an operator sets it up: no body template at all (omitted, not empty).
  await admin('POST', '/api/admin/addons', {
    provider: 'webhook',
    enabled: true,
    parameters: { url: `${edge.base}/edge/webhook`, authorization: SECRET, contentType: 'application/json' },
    events: EVENTS,
    projects: ['*'],
    environments: ['*'],
  });
  webhookSavedAt = Date.now();
}, 600_000);

afterAll(() => {
  edge?.stop();
  try {
    stopUpstream();
  } catch {
    // already stopped
  }
  console.log('edge restart figures', JSON.stringify(figures));
});

describe('Edge mode in front of a private Unleash 8.2.0', () => {
  it('20 valid tokens polling from one address every second for a minute or more: 0 × 429; a toggle reaches the Edge by the real webhook in < 2 s', async () => {
    const statuses: number[] = [];
    let toggledAt = 0;
    let seenAfter: number | null = null;
    const started = Date.now();
    for (let second = 0; second < 60 || !toggledAt; second++) {
      const tick = Date.now();
      statuses.push(...(await Promise.all(tokens.map((token) => poll(edge!.base, token)))));
      if (!toggledAt && second >= 10 && Date.now() - webhookSavedAt > 62_000) {
        toggledAt = Date.now();
        await admin('POST', `/api/admin/projects/default/features/${FLAG}/environments/development/on`);
        // Watched closely (every 50 ms) until the Edge shows it.
        seenAfter = await until(
          'the toggle at the Edge',
          async () => ((await flagState(edge!.base, tokens[0]!)).enabled === true ? Date.now() - toggledAt : undefined),
          10_000,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (Date.now() - tick))));
    }
    figures.polling = {
      requests: statuses.length,
      tooMany: statuses.filter((s) => s === 429).length,
      seconds: (Date.now() - started) / 1000,
    };
    figures.webhookMs = seenAfter;
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(seenAfter).toBeLessThan(2000);
  });

  it('upstream stopped, Edge restarted on the same state: last flags served to every token it saw; no 429 when the upstream returns', async () => {
    stopUpstream();
    edge!.stop();
    const restartAt = Date.now();
    edge = await startEdge(port, UPSTREAM, { webhookSecret: SECRET, persistTo, vars });
    const up = Date.now() - restartAt;
    let firstServed: number | null = null;
    const during: number[] = [];
    for (let round = 0; round < 4; round++) {
      for (const token of tokens) {
        // The last flags: the toggle of the first test, served from the persisted snapshot.
        const { status, enabled } = await flagState(edge.base, token);
        during.push(status === 200 && enabled === true ? 200 : status === 200 ? -1 : status);
        if (status === 200) firstServed ??= Date.now() - restartAt;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const ready = await fetch(`${edge.base}/internal-backstage/ready`);
    const health = (await (await fetch(`${edge.base}/internal-backstage/health`)).json()) as {
      upstream: { stale: boolean; lastError: string };
    };
    figures.outage = {
      served: during.filter((s) => s === 200).length,
      total: during.length,
      workerUpMs: up,
      firstServedAfterRestartMs: firstServed,
    };
    expect(during.filter((status) => status !== 200)).toEqual([]);
    expect(ready.status).toBe(200);
    expect(health.upstream.stale).toBe(true);
    expect(health.upstream.lastError).toMatch(/upstream/);

    startUpstream(false);
    const back: number[] = [];
    for (let second = 0; second < 20; second++) {
      back.push(...(await Promise.all(tokens.map((token) => poll(edge!.base, token)))));
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    figures.afterReturn = { requests: back.length, tooMany: back.filter((s) => s === 429).length };
    expect(back.filter((status) => status !== 200)).toEqual([]);
  });
});
