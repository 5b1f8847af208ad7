/**
 * Edge mode against the LIVE oracles (`npm run test:oracles`; not in CI, which has no Unleash:
 * there the same behaviours run against recordings, test/edge/). For each of Unleash 8.2.0
 * (:4242) and 6.10.1 (:4243): our Worker under `wrangler dev --env edge` with that Unleash as
 * its upstream, through a small proxy this test can stop (the upstream "going down" without
 * stopping a shared oracle). Everything made on the oracles is named `edge-or-<run>-…`.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Unleash } from 'unleash-client';
import { UnleashClient } from 'unleash-proxy-client';
import { testWorkerPort } from '../support/node-env';
import { startEdge as startEdgeWith, until } from '../support/edge-oracle';

const WEBHOOK_SECRET = 'edge-oracle-webhook-secret';
const RUN = Date.now().toString(36);
const ORACLES = [
  { version: '8.2.0', url: 'http://127.0.0.1:4242', admin: '*:*.unleash-insecure-admin-api-token', offset: 0 },
  { version: '6.10.1', url: 'http://127.0.0.1:4243', admin: '*:*.unleash6-admin-token', offset: 10 },
];

/** A pass-through proxy to the oracle that can be taken down (connections refused) and up again. */
function startProxy(
  port: number,
  target: string,
): Promise<{ down: () => Promise<void>; up: () => Promise<void>; close: () => Promise<void> }> {
  const targetUrl = new URL(target);
  let server: Server;
  const sockets = new Set<Socket>();
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((incoming, outgoing) => {
        const forwarded = httpRequest(
          { host: targetUrl.hostname, port: targetUrl.port, path: incoming.url, method: incoming.method, headers: incoming.headers },
          (answer) => {
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(outgoing);
          },
        );
        forwarded.on('error', () => outgoing.destroy());
        incoming.pipe(forwarded);
      });
      server.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return listen().then(() => ({ down: stop, up: listen, close: stop }));
}

/** A small seeded generator: the same 200 contexts each run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe.each(ORACLES)('Edge mode in front of the live Unleash $version', (oracle) => {
  const port = testWorkerPort(9100) + 20 + oracle.offset;
  const proxyPort = port + 1;
  const flag = `edge-or-${RUN}-flag`;
  let edge: { base: string; stop: () => void };
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  const tokens: Record<'clientDev' | 'clientProd' | 'frontendDev', string> = { clientDev: '', clientProd: '', frontendDev: '' };

  const upstream = async (method: string, apiPath: string, body?: unknown) => {
    const response = await fetch(`${oracle.url}${apiPath}`, {
      method,
      headers: { authorization: oracle.admin, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.status >= 300) throw new Error(`${method} ${apiPath}: ${response.status} ${await response.text()}`);
    const text = await response.text();
    return text ? JSON.parse(text) : null;
  };
  const toggle = (on: boolean, environment = 'development') =>
    upstream('POST', `/api/admin/projects/default/features/${flag}/environments/${environment}/${on ? 'on' : 'off'}`);
  const webhook = () => fetch(`${edge.base}/edge/webhook`, { method: 'POST', headers: { authorization: WEBHOOK_SECRET } });

  beforeAll(async () => {
    const health = await fetch(`${oracle.url}/health`).catch(() => null);
    if (!health?.ok) throw new Error(`Unleash ${oracle.version} is not running on ${oracle.url}: start it with its start.sh`);
    await upstream('POST', '/api/admin/projects/default/features', { name: flag, type: 'release' });
    await upstream('POST', `/api/admin/projects/default/features/${flag}/environments/development/strategies`, {
      name: 'flexibleRollout',
      constraints: [],
      parameters: { rollout: '100', stickiness: 'default', groupId: flag },
    });
    await toggle(true);
    const make = async (type: string, environment: string) =>
      (
        await upstream('POST', '/api/admin/api-tokens', {
          tokenName: `edge-or-${RUN}-${type}-${environment}`,
          type,
          environment,
          projects: ['default'],
        })
      ).secret as string;
    tokens.clientDev = await make('client', 'development');
    tokens.clientProd = await make('client', 'production');
    tokens.frontendDev = await make('frontend', 'development');
    proxy = await startProxy(proxyPort, oracle.url);
    edge = await startEdgeWith(port, `http://127.0.0.1:${proxyPort}`, { webhookSecret: WEBHOOK_SECRET });
  }, 180_000);

  afterAll(async () => {
    edge?.stop();
    await proxy?.close().catch(() => undefined);
  });

  it('the official Node SDK sees a flag toggled upstream: at once by webhook, within the interval by polling', async () => {
    const unleash = new Unleash({
      url: `${edge.base}/api`,
      appName: `edge-or-${RUN}-node`,
      customHeaders: { Authorization: tokens.clientDev },
      refreshInterval: 300,
      disableMetrics: true,
    });
    try {
      await until('the SDK synchronised', async () => unleash.isEnabled(flag));
      await toggle(false);
      const pushed = Date.now();
      expect((await webhook()).status).toBe(200);
      await until('the SDK saw the flag off (webhook)', async () => !unleash.isEnabled(flag), 10_000);
      const byWebhookMs = Date.now() - pushed;
      await toggle(true);
      const polled = Date.now();
      await until('the SDK saw the flag on (polling)', async () => unleash.isEnabled(flag), 15_000);
      console.log(`Unleash ${oracle.version}: webhook ${byWebhookMs} ms, polling ${Date.now() - polled} ms`);
    } finally {
      unleash.destroy();
    }
  });

  it('the official Node SDK in streaming mode sees a flag toggled upstream, pushed down its open stream', async () => {
    const unleash = new Unleash({
      url: `${edge.base}/api`,
      appName: `edge-or-${RUN}-node-streaming`,
      customHeaders: { Authorization: tokens.clientDev },
      disableMetrics: true,
      skipInstanceCountWarning: true,
      experimentalMode: { type: 'streaming' },
    });
    // The SDK falls back to polling when its stream fails: a mode change or an error fails the test.
    const trouble: unknown[] = [];
    unleash.on('mode', (change: unknown) => trouble.push(change));
    unleash.on('error', (error: unknown) => trouble.push(error));
    try {
      await until('the streaming SDK synchronised', async () => unleash.isEnabled(flag));
      await toggle(false);
      const pushed = Date.now();
      expect((await webhook()).status).toBe(200);
      await until('the streaming SDK saw the flag off (webhook)', async () => !unleash.isEnabled(flag), 10_000);
      const byWebhookMs = Date.now() - pushed;
      await toggle(true);
      const polled = Date.now();
      await until('the streaming SDK saw the flag on (the sync object polling)', async () => unleash.isEnabled(flag), 15_000);
      console.log(`Unleash ${oracle.version} streaming: webhook ${byWebhookMs} ms, polling ${Date.now() - polled} ms`);
      expect(trouble).toEqual([]);
    } finally {
      unleash.destroy();
    }
  });

  it('the official frontend SDK sees a flag toggled upstream', async () => {
    const client = new UnleashClient({
      url: `${edge.base}/api/frontend`,
      clientKey: tokens.frontendDev,
      appName: `edge-or-${RUN}-browser`,
      refreshInterval: 1,
      disableMetrics: true,
    });
    try {
      await client.start();
      await until('the frontend SDK saw the flag on', async () => client.isEnabled(flag));
      await toggle(false);
      await webhook();
      await until('the frontend SDK saw the flag off', async () => !client.isEnabled(flag), 10_000);
      await toggle(true);
      await webhook();
    } finally {
      client.stop();
    }
  });

  it('answers 200 seeded random contexts through its frontend API as the upstream’s own /api/frontend does', async () => {
    await webhook();
    // The flag was switched on just before: compare once the edge has it (Unleash's revision ticks each second).
    await until('the edge has the flag on', async () => {
      const one = await fetch(`${edge.base}/api/client/features/${flag}`, { headers: { authorization: tokens.clientDev } });
      return ((await one.json()) as { enabled: boolean }).enabled;
    });
    const next = seeded(200);
    for (let i = 0; i < 200; i++) {
      const query = new URLSearchParams({
        userId: `u${Math.floor(next() * 12)}`,
        sessionId: String(Math.floor(next() * 1e6)),
        appName: next() < 0.5 ? 'frontend-api' : `edge-or-app`,
        ...(next() < 0.3 ? { 'properties[plan]': next() < 0.5 ? 'pro' : 'free' } : {}),
      }).toString();
      const get = async (base: string) => {
        const response = await fetch(`${base}/api/frontend?${query}`, { headers: { authorization: tokens.frontendDev } });
        expect(response.status).toBe(200);
        // Only the flags this test and the recorder made: other people change the rest meanwhile.
        const toggles = ((await response.json()) as { toggles: { name: string }[] }).toggles.filter((t) => t.name.startsWith('edge-'));
        return toggles.sort((a, b) => a.name.localeCompare(b.name));
      };
      expect(await get(edge.base), query).toEqual(await get(oracle.url));
    }
  });

  it('never answers another environment’s flags: a production token sees the flag off', async () => {
    const response = await fetch(`${edge.base}/api/client/features/${flag}`, { headers: { authorization: tokens.clientProd } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { enabled: boolean }).enabled).toBe(false);
  });

  it('forwards metrics posted at the edge upstream with equal counts', async () => {
    const appName = `edge-or-${RUN}-metrics`;
    const bucket = {
      start: new Date(Date.now() - 10_000).toISOString(),
      stop: new Date().toISOString(),
      toggles: { [flag]: { yes: 7, no: 3, variants: {} } },
    };
    for (const token of [tokens.clientDev, tokens.clientDev]) {
      const posted = await fetch(`${edge.base}/api/client/metrics`, {
        method: 'POST',
        headers: { authorization: token, 'content-type': 'application/json' },
        body: JSON.stringify({ appName, instanceId: 'i1', bucket }),
      });
      expect(posted.status).toBe(202);
    }
    const counted = await until(
      'the upstream counted the forwarded metrics',
      async () => {
        const raw = (await upstream('GET', `/api/admin/client-metrics/features/${flag}/raw`)) as {
          data: { appName: string; environment: string; yes: number; no: number }[];
        };
        const rows = raw.data.filter((row) => row.appName === appName);
        const yes = rows.reduce((sum, row) => sum + row.yes, 0);
        return yes >= 14 ? { yes, no: rows.reduce((sum, row) => sum + row.no, 0), environment: rows[0]!.environment } : undefined;
      },
      60_000,
    );
    expect(counted).toEqual({ yes: 14, no: 6, environment: 'development' });
  });

  it('keeps answering from its last good snapshot while the upstream is down, and catches up when it returns', async () => {
    const before = await (await fetch(`${edge.base}/api/client/features`, { headers: { authorization: tokens.clientDev } })).json();
    await proxy.down();
    await until(
      'health to report the upstream failing',
      async () => {
        const health = (await (await fetch(`${edge.base}/internal-backstage/health`)).json()) as { scopes: { lastError: string | null }[] };
        return health.scopes.some((scope) => scope.lastError !== null);
      },
      15_000,
    );
    const during = await fetch(`${edge.base}/api/client/features`, { headers: { authorization: tokens.clientDev } });
    expect(during.status).toBe(200);
    const names = (body: { features: { name: string }[] }) => body.features.map((f) => f.name).sort();
    expect(names((await during.json()) as { features: { name: string }[] })).toEqual(names(before as { features: { name: string }[] }));
    await toggle(false);
    await proxy.up();
    await until(
      'the edge caught up with the change made while it was cut off',
      async () => {
        const one = await fetch(`${edge.base}/api/client/features/${flag}`, { headers: { authorization: tokens.clientDev } });
        return one.status === 200 && ((await one.json()) as { enabled: boolean }).enabled === false;
      },
      15_000,
    );
  });

  it('stops a token revoked upstream within the interval, and never asks upstream about an unknown token twice', async () => {
    const listed = (await upstream('GET', '/api/admin/api-tokens')) as { tokens: { secret: string }[] };
    expect(listed.tokens.some((t) => t.secret === tokens.clientProd)).toBe(true);
    await upstream('DELETE', `/api/admin/api-tokens/${encodeURIComponent(tokens.clientProd)}`);
    const revokedAt = Date.now();
    // Unleash itself accepts a deleted token until its token cache refreshes (each minute; 8.2.0's
    // /edge/validate lists it longer still): the edge follows the upstream's client API.
    await until(
      'the revoked token refused at the edge',
      async () => (await fetch(`${edge.base}/api/client/features`, { headers: { authorization: tokens.clientProd } })).status === 401,
      100_000,
    );
    console.log(`Unleash ${oracle.version}: revoked token refused after ${Date.now() - revokedAt} ms`);
    const unknown = `default:development.edge0r${RUN}0000000000000000000000000000000000000000`;
    expect((await fetch(`${edge.base}/api/client/features`, { headers: { authorization: unknown } })).status).toBe(401);
  });
});
