// Metrics ingestion benchmark: many SDK instances posting usage, before and after the metrics
// Queue, in one run. "Before" is a detached worktree of the commit before the change
// (METRICS_BENCH_BEFORE_DIR, default /work/wt-metrics-before; made with
// `git worktree add --detach <dir> d18973e` and node_modules hard-linked in); "after" is this
// tree. Each is bundled as `wrangler deploy --dry-run` bundles it and served by Miniflare's own
// HTTP server (bench/sdk/miniflare.mjs explains why not wrangler dev), behind a wrapper module
// that counts the D1 statements each invocation runs and the rows D1's result meta says they
// wrote, by what ran them (metrics requests, the metrics consumer, everything else).
//
// Per round and system (rounds alternate before/after, so load from other work on the shared
// machine falls on both): probes alone (an SDK poll and an admin write, each in a loop), a few
// hundred posts one at a time, then METRICS_BENCH_POSTS metrics posts at METRICS_BENCH_CONCURRENCY in flight (as fast as the
// system answers) with the probes running alongside; then, for "after", the wait until the
// consumer has counted every post. Instance ids run on across rounds, so the posts come from
// rounds x posts distinct instances (10,600 by default), each naming the same 50 flags.
// Checks that D1's counts equal the sum of what was posted. Writes RESULTS.md here.
//
// Env: METRICS_BENCH_ROUNDS (2), METRICS_BENCH_POSTS (5000), METRICS_BENCH_CONCURRENCY (16),
// METRICS_BENCH_SINGLE_POSTS (300: posted one at a time first, for a post's own latency),
// METRICS_BENCH_PROBE_SECONDS (5), METRICS_BENCH_PORT (8830; before +1),
// METRICS_BENCH_WRITE_RESULTS (1).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare, convertV4MiniflareOptions } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';
import { BENCH_ADMIN_TOKEN, ROOT, fmt, machine, percentile } from '../lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BEFORE_DIR = process.env.METRICS_BENCH_BEFORE_DIR ?? '/work/wt-metrics-before';
const ROUNDS = Number(process.env.METRICS_BENCH_ROUNDS ?? 2);
const POSTS = Number(process.env.METRICS_BENCH_POSTS ?? 5000);
const CONCURRENCY = Number(process.env.METRICS_BENCH_CONCURRENCY ?? 16);
const SINGLE_POSTS = Number(process.env.METRICS_BENCH_SINGLE_POSTS ?? 300);
const PROBE_SECONDS = Number(process.env.METRICS_BENCH_PROBE_SECONDS ?? 5);
const PORT = Number(process.env.METRICS_BENCH_PORT ?? 8830);
const WRITE_RESULTS = process.env.METRICS_BENCH_WRITE_RESULTS !== '0';
const FLAGS = 50;
const APPS = 10;
const PROJECT = 'default';
const ENVIRONMENT = 'development';

// ---------------------------------------------------------------------------------------
// The counting wrapper: the tree's bundle is imported by this module, which hands each
// invocation a D1 binding that counts what runs through it.

const ENTRY = `
import worker from './index.js';
const counters = {};
function bump(category, statements, rowsWritten, unmetered = 0) {
  const c = (counters[category] ??= { statements: 0, rowsWritten: 0, unmetered: 0 });
  c.statements += statements;
  c.rowsWritten += rowsWritten;
  c.unmetered += unmetered;
}
const targets = new WeakMap();
const written = (result) => (result && result.meta && result.meta.rows_written) || 0;
function wrapStatement(statement, category) {
  const proxy = new Proxy(statement, {
    get(target, property) {
      if (property === 'bind') return (...args) => wrapStatement(target.bind(...args), category);
      if (property === 'run' || property === 'all')
        return async (...args) => { const result = await target[property](...args); bump(category, 1, written(result)); return result; };
      // first() and raw() answer no meta: counted as statements, their rows written unknown (reads here).
      if (property === 'first' || property === 'raw')
        return async (...args) => { const result = await target[property](...args); bump(category, 1, 0, 1); return result; };
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  targets.set(proxy, statement);
  return proxy;
}
function wrapDb(db, category) {
  return new Proxy(db, {
    get(target, property) {
      if (property === 'prepare') return (query) => wrapStatement(target.prepare(query), category);
      if (property === 'batch')
        return async (statements) => {
          const results = await target.batch(statements.map((s) => targets.get(s) ?? s));
          bump(category, statements.length, results.reduce((n, r) => n + written(r), 0));
          return results;
        };
      if (property === 'withSession') return (...args) => wrapDb(target.withSession(...args), category);
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
const wrapped = new Map();
function envFor(env, category) {
  let entry = wrapped.get(category);
  if (!entry || entry.env !== env) wrapped.set(category, (entry = { env, wrapped: { ...env, DB: wrapDb(env.DB, category) } }));
  return entry.wrapped;
}
export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === '/__bench/d1') return Response.json(counters);
    if (url.pathname === '/__bench/sql') {
      const { results } = await env.DB.prepare(await request.text()).all();
      return Response.json(results);
    }
    const metrics = ['/api/client/metrics', '/api/frontend/client/metrics'].some((p) => url.pathname === p || url.pathname.startsWith(p + '/'));
    return worker.fetch(request, envFor(env, metrics ? 'metrics-requests' : 'other-requests'), ctx);
  },
  async queue(batch, env, ctx) {
    const c = (counters['batches:' + batch.queue] ??= { batches: 0, messages: 0 });
    c.batches++;
    c.messages += batch.messages.length;
    return worker.queue(batch, envFor(env, 'queue:' + batch.queue), ctx);
  },
  async scheduled(controller, env, ctx) {
    return worker.scheduled(controller, envFor(env, 'scheduled'), ctx);
  },
};
`;

function commitOf(dir) {
  const head = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--', 'src', 'wrangler.toml'], { encoding: 'utf8' }).trim();
  return dirty ? `${head}+edits` : head;
}

async function startTree(root, port) {
  const persistTo = mkdtempSync(path.join(os.tmpdir(), 'unleash-metrics-bench-state-'));
  const outdir = mkdtempSync(path.join(os.tmpdir(), 'unleash-metrics-bench-bundle-'));
  const env = {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`,
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    WRANGLER_SEND_METRICS: 'false',
    CI: '1',
  };
  const wrangler = path.join(root, 'node_modules', '.bin', 'wrangler');
  const quiet = { cwd: root, env, stdio: 'ignore' };
  execFileSync(wrangler, ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', persistTo], quiet);
  execFileSync(wrangler, ['deploy', '--dry-run', '--outdir', outdir], quiet);
  const { workerOptions } = unstable_getMiniflareWorkerOptions(path.join(root, 'wrangler.toml'));
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: '127.0.0.1',
      port,
      logRequests: false,
      resourcePersistencePath: path.join(persistTo, 'v3'),
      workers: [
        {
          name: 'unleash-worker',
          compatibilityDate: workerOptions.compatibilityDate,
          compatibilityFlags: workerOptions.compatibilityFlags,
          bindings: { ...workerOptions.bindings, INIT_ADMIN_API_TOKENS: BENCH_ADMIN_TOKEN },
          d1Databases: workerOptions.d1Databases,
          kvNamespaces: workerOptions.kvNamespaces,
          queueProducers: workerOptions.queueProducers,
          queueConsumers: workerOptions.queueConsumers,
          ratelimits: Object.fromEntries(
            Object.entries(workerOptions.ratelimits ?? {}).map(([name, options]) => [
              name,
              { ...options, simple: { ...options.simple, limit: 1_000_000_000 } },
            ]),
          ),
          modulesRoot: outdir,
          modules: [
            { type: 'ESModule', path: path.join(outdir, 'bench-entry.mjs'), contents: ENTRY },
            { type: 'ESModule', path: path.join(outdir, 'index.js'), contents: readFileSync(path.join(outdir, 'index.js'), 'utf8') },
          ],
        },
      ],
    }),
  );
  const url = await mf.ready;
  return {
    base: url.origin,
    commit: commitOf(root),
    async stop() {
      await mf.dispose();
      rmSync(persistTo, { recursive: true, force: true });
      rmSync(outdir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------
// Traffic.

const flagNames = Array.from({ length: FLAGS }, (_, i) => `metricsbench.flag.${String(i).padStart(2, '0')}`);

async function must(response, ...statuses) {
  if (!statuses.includes(response.status)) throw new Error(`${response.url}: ${response.status} ${await response.text()}`);
  return response;
}

function client(base, token) {
  return (method, urlPath, body) =>
    fetch(`${base}${urlPath}`, {
      method,
      headers: { authorization: token, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
}

async function seed(system) {
  const admin = client(system.base, BENCH_ADMIN_TOKEN);
  const data = {
    features: flagNames.map((name) => ({ name, type: 'release', project: PROJECT })),
    featureStrategies: flagNames.map((name) => ({
      name: 'flexibleRollout',
      featureName: name,
      parameters: { rollout: '50', stickiness: 'default', groupId: name },
    })),
    featureEnvironments: flagNames.map((name) => ({ name, featureName: name, environment: ENVIRONMENT, enabled: true })),
    tagTypes: [],
  };
  await must(await admin('POST', '/api/admin/features-batch/import', { project: PROJECT, environment: ENVIRONMENT, data }), 200);
  const response = await must(
    await admin('POST', '/api/admin/api-tokens', {
      tokenName: 'metrics-bench',
      type: 'client',
      environment: ENVIRONMENT,
      projects: [PROJECT],
    }),
    201,
  );
  system.clientToken = (await response.json()).secret;
  system.posted = { yes: 0, no: 0, posts: 0 };
}

function report(instance) {
  const stop = new Date().toISOString();
  const toggles = {};
  flagNames.forEach((name, i) => {
    toggles[name] = { yes: (instance + i) % 7, no: 1 + (i % 3), variants: {} };
  });
  return {
    appName: `bench-app-${instance % APPS}`,
    instanceId: `instance-${instance}`,
    environment: ENVIRONMENT,
    sdkVersion: 'unleash-client-node:6.1.0',
    bucket: { start: stop, stop, toggles },
  };
}

function sums(body) {
  let yes = 0;
  let no = 0;
  for (const counts of Object.values(body.bucket.toggles)) {
    yes += counts.yes;
    no += counts.no;
  }
  return { yes, no };
}

async function d1Counters(system) {
  return (await fetch(`${system.base}/__bench/d1`)).json();
}

async function sqlOf(system, query) {
  return (await fetch(`${system.base}/__bench/sql`, { method: 'POST', body: query })).json();
}

/** Statements and rows of what metrics ran (requests and the metrics queue's consumers). */
function metricsWork(counters) {
  let statements = 0;
  let rowsWritten = 0;
  for (const [category, c] of Object.entries(counters)) {
    if (category === 'metrics-requests' || category.startsWith('queue:unleash-metrics')) {
      statements += c.statements;
      rowsWritten += c.rowsWritten;
    }
  }
  return { statements, rowsWritten };
}

/** The SDK poll and the admin write, each in its own loop until `stop()`; latencies in ms. */
function startProbes(system) {
  const sdk = client(system.base, system.clientToken);
  const admin = client(system.base, BENCH_ADMIN_TOKEN);
  const samples = { poll: [], write: [] };
  let running = true;
  let toggle = 0;
  const loop = async (kind, request) => {
    while (running) {
      const t0 = performance.now();
      const response = await request();
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`${kind}: ${response.status}`);
      samples[kind].push(performance.now() - t0);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const loops = [
    loop('poll', () => sdk('GET', '/api/client/features')),
    loop('write', () => {
      toggle++;
      const flag = flagNames[toggle % FLAGS];
      return admin('PUT', `/api/admin/projects/${PROJECT}/features/${flag}`, { description: `bench write ${toggle}`, type: 'release' });
    }),
  ];
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return samples;
    },
  };
}

async function postMetrics(system, firstInstance, total, concurrency) {
  const sdk = client(system.base, system.clientToken);
  const latencies = [];
  let next = 0;
  const started = performance.now();
  async function worker() {
    while (next < total) {
      const instance = firstInstance + next++;
      const body = report(instance);
      const t0 = performance.now();
      const response = await sdk('POST', '/api/client/metrics', body);
      await response.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (response.status !== 202) throw new Error(`metrics post: ${response.status}`);
      const s = sums(body);
      system.posted.yes += s.yes;
      system.posted.no += s.no;
      system.posted.posts++;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { latencies, rps: total / seconds };
}

/** Until D1 holds every posted count (the consumer is done), or 120 s. */
async function drained(system) {
  const deadline = Date.now() + 120_000;
  const started = performance.now();
  for (;;) {
    const [row] = await sqlOf(system, `SELECT coalesce(sum(yes), 0) AS yes, coalesce(sum("no"), 0) AS "no" FROM client_metrics_env`);
    if (row.yes === system.posted.yes && row.no === system.posted.no) return { seconds: (performance.now() - started) / 1000, exact: true };
    if (row.yes > system.posted.yes || row.no > system.posted.no)
      return { seconds: (performance.now() - started) / 1000, exact: false, row };
    if (Date.now() > deadline) return { seconds: 120, exact: false, row };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function round(system, index) {
  const idle = startProbes(system);
  await new Promise((resolve) => setTimeout(resolve, PROBE_SECONDS * 1000));
  const alone = await idle.stop();
  const before = metricsWork(await d1Counters(system));
  const first = index * (POSTS + SINGLE_POSTS);
  // One at a time: a post's own latency, without queueing behind others in the client.
  const single = await postMetrics(system, first, SINGLE_POSTS, 1);
  const alongside = startProbes(system);
  const posts = await postMetrics(system, first + SINGLE_POSTS, POSTS, CONCURRENCY);
  const loaded = await alongside.stop();
  const drain = await drained(system);
  const after = metricsWork(await d1Counters(system));
  return {
    posts: POSTS + SINGLE_POSTS,
    rps: posts.rps,
    latencies: posts.latencies,
    singleLatencies: single.latencies,
    statements: after.statements - before.statements,
    rowsWritten: after.rowsWritten - before.rowsWritten,
    drain,
    alone,
    loaded,
    load: os.loadavg()[0],
  };
}

// ---------------------------------------------------------------------------------------

if (!existsSync(BEFORE_DIR)) {
  console.error(
    `No "before" tree at ${BEFORE_DIR}. Make one: git worktree add --detach ${BEFORE_DIR} d18973e && cp -al node_modules ${BEFORE_DIR}/`,
  );
  process.exit(2);
}

const load0 = os.loadavg();
const ONLY = process.env.METRICS_BENCH_ONLY;
const systems = [];
if (ONLY !== 'after') systems.push({ name: 'before', ...(await startTree(BEFORE_DIR, PORT + 1)) });
if (ONLY !== 'before') systems.push({ name: 'after', ...(await startTree(ROOT, PORT)) });
const results = { before: [], after: [] };
try {
  for (const system of systems) await seed(system);
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so neither always meets the same moment of the machine's load.
    const order = r % 2 === 0 ? systems : [...systems].reverse();
    for (const system of order) {
      const outcome = await round(system, r);
      if (process.env.METRICS_BENCH_DEBUG) console.log(JSON.stringify(await d1Counters(system)));
      results[system.name].push(outcome);
      console.log(
        `round ${r + 1} ${system.name}: ${fmt(outcome.rps, 0)} posts/s, ${outcome.statements} statements, ${outcome.rowsWritten} rows written, counts in D1 after ${fmt(outcome.drain.seconds, 1)} s (${outcome.drain.exact ? 'exact' : 'MISMATCH'}), load ${os.loadavg()[0].toFixed(2)}`,
      );
    }
  }
} finally {
  for (const system of systems) await system.stop();
}
if (systems.length < 2) process.exit(0);
const load1 = os.loadavg();

function summarise(name) {
  const rounds = results[name];
  const all = (pick) => rounds.flatMap(pick).sort((a, b) => a - b);
  const posts = rounds.reduce((n, r) => n + r.posts, 0);
  const statements = rounds.reduce((n, r) => n + r.statements, 0);
  const rowsWritten = rounds.reduce((n, r) => n + r.rowsWritten, 0);
  const latencies = all((r) => r.latencies);
  const single = all((r) => r.singleLatencies);
  const stat = (samples) => ({ n: samples.length, p50: percentile(samples, 50), p95: percentile(samples, 95) });
  return {
    posts,
    rps: rounds.reduce((n, r) => n + r.rps, 0) / rounds.length,
    statementsPer1000: (statements / posts) * 1000,
    rowsPer1000: (rowsWritten / posts) * 1000,
    post: stat(latencies),
    single: stat(single),
    drainMax: Math.max(...rounds.map((r) => r.drain.seconds)),
    exact: rounds.every((r) => r.drain.exact),
    pollAlone: stat(all((r) => r.alone.poll)),
    pollLoaded: stat(all((r) => r.loaded.poll)),
    writeAlone: stat(all((r) => r.alone.write)),
    writeLoaded: stat(all((r) => r.loaded.write)),
  };
}
const before = summarise('before');
const after = summarise('after');
const m = machine();
const ms = (value) => `${fmt(value, 1)} ms`;
const row = (label, b, a, note = '') => `| ${label} | ${b} | ${a} | ${note} |`;

const text = `# Metrics ingestion: before and after the metrics Queue

Run: \`npm run bench -- metrics\` (bench/metrics/run.mjs). Date ${m.date}; ${m.cpu}, ${m.memoryGiB} GiB, Node ${m.node}.
The machine is shared with other developers' work: load average ${load0.map((v) => v.toFixed(2)).join(' ')} at the start and
${load1.map((v) => v.toFixed(2)).join(' ')} at the end (2 cores). Rounds alternate before/after so that load falls on both.

- **before**: ${systems[0].commit} (${BEFORE_DIR}), every post a D1 batch on the request path.
- **after**: ${systems[1].commit}, every post one Queue message; the consumer merges up to 100 per D1 batch (docs/metrics.md).

Both are the \`wrangler deploy --dry-run\` bundle served by Miniflare's own HTTP server with local D1, KV and Queues, wrapped
by a module that counts D1 statements and the rows D1's result meta reports written, per invocation kind. Each round:
probes alone for ${PROBE_SECONDS} s, ${SINGLE_POSTS} metrics posts one at a time, then ${POSTS} at ${CONCURRENCY} in flight (as fast as each answers) with the probes
alongside, then the wait until D1 holds every posted count. ${ROUNDS} rounds per system: ${before.posts} posts from as many distinct
instance ids (\`instance-0\` … \`instance-${before.posts - 1}\`), each naming the same ${FLAGS} flags, over ${APPS} app names.
Probes: an SDK poll (\`GET /api/client/features\`, ${FLAGS} flags) and an admin write (\`PUT\` a flag's description), each a
loop with 20 ms pauses.

| | before | after | target |
|---|---|---|---|
${row('posts per second sustained', fmt(before.rps, 0), fmt(after.rps, 0))}
${row('D1 statements per 1,000 posts', fmt(before.statementsPer1000, 0), fmt(after.statementsPer1000, 1), `${fmt(before.statementsPer1000 / after.statementsPer1000, 0)}× fewer (target ≥ 50×)`)}
${row('D1 rows written per 1,000 posts', fmt(before.rowsPer1000, 0), fmt(after.rowsPer1000, 0), `${fmt(before.rowsPer1000 / after.rowsPer1000, 0)}× fewer`)}
${row('metrics post p50 / p95, one at a time', `${ms(before.single.p50)} / ${ms(before.single.p95)}`, `${ms(after.single.p50)} / ${ms(after.single.p95)}`, 'p95 < 10 ms')}
${row(`metrics post p50 / p95, ${CONCURRENCY} in flight (the rate above)`, `${ms(before.post.p50)} / ${ms(before.post.p95)}`, `${ms(after.post.p50)} / ${ms(after.post.p95)}`)}
${row('counts all in D1 after the last post (max of rounds)', `${fmt(before.drainMax, 1)} s`, `${fmt(after.drainMax, 1)} s`, '< 60 s')}
${row('D1 counts equal the sum posted', before.exact ? 'yes' : 'NO', after.exact ? 'yes' : 'NO')}
${row('SDK poll p50 / p95, alone', `${ms(before.pollAlone.p50)} / ${ms(before.pollAlone.p95)}`, `${ms(after.pollAlone.p50)} / ${ms(after.pollAlone.p95)}`)}
${row('SDK poll p50 / p95, with the metrics load', `${ms(before.pollLoaded.p50)} / ${ms(before.pollLoaded.p95)}`, `${ms(after.pollLoaded.p50)} / ${ms(after.pollLoaded.p95)}`, 'unchanged by the load')}
${row('admin write p50 / p95, alone', `${ms(before.writeAlone.p50)} / ${ms(before.writeAlone.p95)}`, `${ms(after.writeAlone.p50)} / ${ms(after.writeAlone.p95)}`)}
${row('admin write p50 / p95, with the metrics load', `${ms(before.writeLoaded.p50)} / ${ms(before.writeLoaded.p95)}`, `${ms(after.writeLoaded.p50)} / ${ms(after.writeLoaded.p95)}`, 'unchanged by the load')}
${row('probe samples (poll alone / loaded, write alone / loaded)', `${before.pollAlone.n} / ${before.pollLoaded.n}, ${before.writeAlone.n} / ${before.writeLoaded.n}`, `${after.pollAlone.n} / ${after.pollLoaded.n}, ${after.writeAlone.n} / ${after.writeLoaded.n}`)}

Per round:

| round | system | posts/s | statements | rows written | D1 complete after | load (1 min) |
|---|---|---|---|---|---|---|
${systems
  .flatMap((system) => results[system.name].map((r, i) => ({ r, i, name: system.name })))
  .sort((x, y) => x.i - y.i)
  .map(
    ({ r, i, name }) =>
      `| ${i + 1} | ${name} | ${fmt(r.rps, 0)} | ${r.statements} | ${r.rowsWritten} | ${fmt(r.drain.seconds, 1)} s | ${r.load.toFixed(2)} |`,
  )
  .join('\n')}
`;

console.log(text);
if (WRITE_RESULTS) writeFileSync(path.join(HERE, 'RESULTS.md'), text);
