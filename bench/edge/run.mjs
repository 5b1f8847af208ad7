// Edge-mode benchmark (bench/edge/RESULTS.md): the Worker under `wrangler dev --env edge` in
// front of a live Unleash (default 8.2.0 on :4242) through a counting proxy.
//   node bench/edge/run.mjs [--upstream http://127.0.0.1:4242] [--admin '*:*.…'] [--port 9150]
//        [--instances 1000] [--toggles 20] [--modes webhook,polling] [--skip-load] [--trace]
// 1. Upstream requests per minute while `--instances` simulated SDK instances poll the edge
//    every 15 s over 3 token scopes (backend development, backend production, frontend).
// 2. Propagation of an upstream toggle to the edge's client answer, p50/p95, by webhook and by
//    polling (the default 15 s interval). Everything made upstream is named `edge-bench-<run>-…`.
//    `--trace` prints, per toggle, when the upstream's own client API showed the change (asked
//    directly every 50 ms) and each upstream call the edge made (through the proxy), in ms
//    after the toggle: where a slow toggle spent its time. `--near-alarm` lands each webhook
//    toggle about 0.4 s before the sync object's regular alarm (seen as its POST /edge/validate
//    through the proxy), the case that used to wait a whole interval.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    upstream: { type: 'string', default: 'http://127.0.0.1:4242' },
    admin: { type: 'string', default: '*:*.unleash-insecure-admin-api-token' },
    port: { type: 'string', default: '9150' },
    instances: { type: 'string', default: '1000' },
    toggles: { type: 'string', default: '20' },
    modes: { type: 'string', default: 'webhook,polling' },
    'skip-load': { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
    'near-alarm': { type: 'boolean', default: false },
  },
});
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const PORT = Number(args.port);
const PROXY_PORT = PORT + 1;
const RUN = Date.now().toString(36);
const FLAG = `edge-bench-${RUN}-flag`;
const SECRET = `edge-bench-${RUN}-webhook`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const counts = new Map();
let counting = false;
/** Upstream calls the edge made, while tracing: [ms since the toggle, what, status]. */
let calls = null;
let toggledAt = 0;
/** When the edge last sent POST /edge/validate: its regular alarm (catch-up alarms do not validate). */
let validatedAt = 0;
function startProxy() {
  const target = new URL(args.upstream);
  const server = createServer((incoming, outgoing) => {
    const key = `${incoming.method} ${incoming.url.split('?')[0]}`;
    if (counting) counts.set(key, (counts.get(key) ?? 0) + 1);
    const sentAt = performance.now();
    if (key === 'POST /edge/validate') validatedAt = sentAt;
    const forwarded = httpRequest(
      { host: target.hostname, port: target.port, path: incoming.url, method: incoming.method, headers: incoming.headers },
      (answer) => {
        calls?.push(
          `${Math.round(sentAt - toggledAt)}→${Math.round(performance.now() - toggledAt)} ${key.replace('/api/client/features', 'features')} ${answer.statusCode}`,
        );
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  return new Promise((resolve) => server.listen(PROXY_PORT, '127.0.0.1', () => resolve(server)));
}

async function upstream(method, apiPath, body) {
  const response = await fetch(`${args.upstream}${apiPath}`, {
    method,
    headers: { authorization: args.admin, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status >= 300) throw new Error(`${method} ${apiPath}: ${response.status} ${await response.text()}`);
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

function startEdge() {
  const persistTo = mkdtempSync(path.join(os.tmpdir(), 'edge-bench-'));
  const vars = { EDGE_UPSTREAM_URL: `http://127.0.0.1:${PROXY_PORT}`, EDGE_WEBHOOK_SECRET: SECRET };
  const child = spawn(
    path.join(ROOT, 'node_modules', '.bin', 'wrangler'),
    [
      'dev',
      '--env',
      'edge',
      '--ip',
      '127.0.0.1',
      '--port',
      String(PORT),
      '--persist-to',
      persistTo,
      '--log-level',
      'warn',
      ...Object.entries(vars).flatMap(([name, value]) => ['--var', `${name}:${value}`]),
    ],
    {
      cwd: ROOT,
      env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: '1' },
      stdio: ['ignore', 'ignore', 'inherit'],
      detached: true,
    },
  );
  return {
    stop: () => {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // gone
      }
      rmSync(persistTo, { recursive: true, force: true });
    },
  };
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function flagAtEdge(base, token) {
  const response = await fetch(`${base}/api/client/features/${FLAG}`, { headers: { authorization: token } });
  return response.status === 200 ? (await response.json()).enabled : undefined;
}

/** The flag as the upstream's own client API answers it now (asked directly, not through the edge). */
async function flagUpstream(token) {
  const response = await fetch(`${args.upstream}/api/client/features/${FLAG}`, { headers: { authorization: token } });
  return response.status === 200 ? (await response.json()).enabled : undefined;
}

async function propagation(base, token, viaWebhook, toggles) {
  const times = [];
  const traces = [];
  let state = await flagAtEdge(base, token);
  for (let i = 0; i < toggles; i++) {
    const want = !state;
    if (args['near-alarm']) {
      const seen = validatedAt;
      while (validatedAt === seen) await sleep(50);
      await sleep(Math.max(0, validatedAt + 15_000 - 400 - performance.now()));
    }
    await upstream('POST', `/api/admin/projects/default/features/${FLAG}/environments/development/${want ? 'on' : 'off'}`);
    const started = performance.now();
    toggledAt = started;
    if (args.trace) calls = [];
    // The upstream's own answer, watched beside the edge's: when did Unleash itself show it?
    let upstreamAt = null;
    let watching = args.trace;
    const watcher = (async () => {
      while (watching && upstreamAt === null) {
        if ((await flagUpstream(token)) === want) upstreamAt = performance.now() - started;
        else await sleep(50);
      }
    })();
    let webhookAt = null;
    if (viaWebhook) {
      await fetch(`${base}/edge/webhook`, { method: 'POST', headers: { authorization: SECRET } });
      webhookAt = performance.now() - started;
    }
    while ((await flagAtEdge(base, token)) !== want) {
      if (performance.now() - started > 60_000) throw new Error('no propagation within 60 s');
      await sleep(50);
    }
    const took = performance.now() - started;
    times.push(took);
    watching = false;
    await watcher;
    if (args.trace) {
      const line = `${viaWebhook ? 'webhook' : 'polling'} #${i + 1}: edge ${Math.round(took)} ms; upstream's own answer ${upstreamAt === null ? 'not yet' : `${Math.round(upstreamAt)} ms`}${webhookAt === null ? '' : `; webhook answered ${Math.round(webhookAt)} ms`}; upstream calls (sent→answered ms): ${calls.join(', ')}`;
      traces.push(line);
      console.log(line);
      calls = null;
    }
    state = want;
    // Land the next toggle at a random point of the polling interval (15 s).
    if (!args['near-alarm']) await sleep(Math.random() * (viaWebhook ? 3000 : 15_000));
  }
  times.sort((a, b) => a - b);
  return {
    n: times.length,
    p50: Math.round(percentile(times, 50)),
    p95: Math.round(percentile(times, 95)),
    max: Math.round(times.at(-1)),
    over2s: times.filter((t) => t > 2000).length,
  };
}

async function main() {
  const proxy = await startProxy();
  const edge = startEdge();
  const base = `http://127.0.0.1:${PORT}`;
  try {
    await upstream('POST', '/api/admin/projects/default/features', { name: FLAG, type: 'release' });
    await upstream('POST', `/api/admin/projects/default/features/${FLAG}/environments/development/strategies`, {
      name: 'default',
      constraints: [],
      parameters: {},
    });
    await upstream('POST', `/api/admin/projects/default/features/${FLAG}/environments/development/on`);
    const token = async (type, environment) =>
      (
        await upstream('POST', '/api/admin/api-tokens', {
          tokenName: `edge-bench-${RUN}-${type}-${environment}`,
          type,
          environment,
          projects: ['default'],
        })
      ).secret;
    const scopes = [
      { token: await token('client', 'development'), path: '/api/client/features' },
      { token: await token('client', 'production'), path: '/api/client/features' },
      { token: await token('frontend', 'development'), path: '/api/frontend' },
    ];
    for (let i = 0; i < 480; i++) {
      try {
        if ((await fetch(`${base}/internal-backstage/health`)).ok) break;
      } catch {
        // not up yet
      }
      await sleep(500);
    }
    // Backend scopes first, so the frontend scope has one to be answered from.
    for (const scope of scopes) await fetch(`${base}${scope.path}`, { headers: { authorization: scope.token } });

    // 1. Upstream requests per minute under SDK load.
    const instances = args['skip-load'] ? 0 : Number(args.instances);
    let sdkRequests = 0;
    let stop = false;
    const loops = Array.from({ length: instances }, async (_, i) => {
      const scope = scopes[i % scopes.length];
      let etag = null;
      await sleep(Math.random() * 15_000);
      while (!stop) {
        const query = scope.path === '/api/frontend' ? `?userId=u${i}&sessionId=${i}` : '';
        const response = await fetch(`${base}${scope.path}${query}`, {
          headers: { authorization: scope.token, ...(etag ? { 'if-none-match': etag } : {}) },
        }).catch(() => null);
        if (response) {
          sdkRequests++;
          etag = response.headers.get('etag') ?? etag;
          await response.arrayBuffer();
        }
        await sleep(15_000);
      }
    });
    if (instances > 0) await sleep(15_000);
    counting = true;
    const before = sdkRequests;
    if (instances > 0) await sleep(60_000);
    counting = false;
    const minuteSdk = sdkRequests - before;
    stop = true;
    await Promise.all(loops);
    const upstreamCounts = Object.fromEntries(counts);
    const upstreamTotal = [...counts.values()].reduce((a, b) => a + b, 0);

    // 2. Propagation.
    const clientToken = scopes[0].token;
    const modes = args.modes.split(',');
    const webhook = modes.includes('webhook') ? await propagation(base, clientToken, true, Number(args.toggles)) : null;
    const polling = modes.includes('polling') ? await propagation(base, clientToken, false, Number(args.toggles)) : null;

    console.log(
      JSON.stringify(
        {
          date: new Date().toISOString(),
          load: os.loadavg().map((l) => l.toFixed(2)),
          instances,
          minuteSdk,
          upstreamTotal,
          upstreamCounts,
          webhook,
          polling,
        },
        null,
        2,
      ),
    );
  } finally {
    edge.stop();
    proxy.close();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
