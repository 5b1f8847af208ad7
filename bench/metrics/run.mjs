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
// machine falls on both):
// 1. probes alone (an SDK poll and an admin write, each in a loop);
// 2. fixed rate: METRICS_BENCH_RATE posts a second (default the issue's scenario, 10,000
//    instances each reporting every 60 s = 167/s) for METRICS_BENCH_RATE_SECONDS, sent on a
//    clock whatever the answers do (at most METRICS_BENCH_RATE_MAX_IN_FLIGHT unanswered; a
//    send due while that many wait is counted as missed), with the probes alongside; then the
//    wait until D1 holds every posted count. This is what "SDK poll and admin write latency
//    unchanged by the metrics load" is judged on: probes alone vs under that load.
// 3. saturation: a few hundred posts one at a time (a post's own latency), then
//    METRICS_BENCH_POSTS at METRICS_BENCH_CONCURRENCY in flight (as fast as the system
//    answers) with the probes alongside; then the wait until D1 holds every posted count.
// Each loaded phase also reports the Worker's CPU per post: workerd's user + system time from
// /proc (Linux), net of the probes' CPU rate measured alone.
// Every post comes from its own instance id (they run on across phases and rounds), each
// naming the same 50 flags. Checks that D1's counts equal the sum of what was posted. Writes
// RESULTS.md here unless METRICS_BENCH_WRITE_RESULTS=0.
//
// Env: METRICS_BENCH_ROUNDS (2), METRICS_BENCH_POSTS (5000; 0 skips the saturation phase),
// METRICS_BENCH_CONCURRENCY (16), METRICS_BENCH_SINGLE_POSTS (300: posted one at a time first),
// METRICS_BENCH_RATE (167 posts/s; 0 skips the fixed-rate phase), METRICS_BENCH_RATE_SECONDS (20),
// METRICS_BENCH_RATE_MAX_IN_FLIGHT (256), METRICS_BENCH_PROBE_SECONDS (5), METRICS_BENCH_CONTROL (1:
// after the fixed rate, the same rate of GET /health with the probes, for the runtime's own share),
// METRICS_BENCH_PORT (8830; "before" listens on the port after it), METRICS_BENCH_ONLY
// (before|after: start only one system, print per-round lines, write nothing),
// METRICS_BENCH_WRITE_RESULTS (1; 0 prints the table without rewriting RESULTS.md).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
/** 10,000 instances, each reporting every 60 s. */
const RATE = Number(process.env.METRICS_BENCH_RATE ?? 10_000 / 60);
const RATE_SECONDS = Number(process.env.METRICS_BENCH_RATE_SECONDS ?? 20);
const RATE_MAX_IN_FLIGHT = Number(process.env.METRICS_BENCH_RATE_MAX_IN_FLIGHT ?? 256);
const PORT = Number(process.env.METRICS_BENCH_PORT ?? 8830);
const WRITE_RESULTS = process.env.METRICS_BENCH_WRITE_RESULTS !== '0';
/** A control phase after the fixed-rate one: the same rate of GET /health with the probes (METRICS_BENCH_CONTROL=0 skips it). */
const CONTROL = process.env.METRICS_BENCH_CONTROL !== '0';
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

/** The processes this one started (Miniflare's workerd), from /proc (Linux). */
function childPids() {
  const pids = new Set();
  try {
    for (const task of readdirSync(`/proc/${process.pid}/task`)) {
      const children = readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').trim();
      for (const pid of children.split(/\s+/)) if (pid) pids.add(Number(pid));
    }
  } catch {
    // not Linux: no CPU figures
  }
  return pids;
}

const TICK_MS = 1000 / 100; // USER_HZ
/** CPU time (user + system, ms) the processes `pids` have used so far; NaN where /proc is not readable. */
function cpuMs(pids) {
  if (pids.size === 0) return NaN;
  let ticks = 0;
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * TICK_MS;
}

async function startTree(root, port) {
  const before = childPids();
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
  const pids = new Set([...childPids()].filter((pid) => !before.has(pid)));
  return {
    base: url.origin,
    cpu: () => cpuMs(pids),
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
  system.nextInstance = 0;
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

function counted(system, body) {
  const s = sums(body);
  system.posted.yes += s.yes;
  system.posted.no += s.no;
  system.posted.posts++;
}

/** `total` posts, each from a new instance, `concurrency` in flight as fast as they answer. */
async function postMetrics(system, total, concurrency) {
  const sdk = client(system.base, system.clientToken);
  const latencies = [];
  let next = 0;
  const started = performance.now();
  async function worker() {
    while (next < total) {
      next++;
      const body = report(system.nextInstance++);
      const t0 = performance.now();
      const response = await sdk('POST', '/api/client/metrics', body);
      await response.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (response.status !== 202) throw new Error(`metrics post: ${response.status}`);
      counted(system, body);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { latencies, rps: total / seconds };
}

/**
 * Posts on a clock: the i-th is due `i / rate` s after the start, each from a new instance,
 * sent whether or not the earlier ones were answered (an SDK fleet does not wait for the
 * server). A send due while `maxInFlight` are unanswered is skipped and counted as missed.
 */
async function postAtRate(system, rate, seconds, maxInFlight, control = false) {
  const sdk = client(system.base, system.clientToken);
  const total = Math.round(rate * seconds);
  const latencies = [];
  const errors = [];
  const pending = new Set();
  let missed = 0;
  let sent = 0;
  let lateMs = 0;
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    else lateMs = Math.max(lateMs, -wait);
    if (pending.size >= maxInFlight) {
      missed++;
      continue;
    }
    // The control sends the runtime's cheapest request instead: what any traffic at this rate costs the probes here.
    const body = control ? null : report(system.nextInstance++);
    sent++;
    const t0 = performance.now();
    const post = (body === null ? fetch(`${system.base}/health`) : sdk('POST', '/api/client/metrics', body))
      .then(async (response) => {
        await response.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (response.status !== (body === null ? 200 : 202))
          throw new Error(`${body === null ? 'health' : 'metrics post'}: ${response.status}`);
        if (body !== null) counted(system, body);
      })
      .catch((error) => errors.push(error))
      .finally(() => pending.delete(post));
    pending.add(post);
  }
  const sendSeconds = (performance.now() - started) / 1000;
  await Promise.all([...pending]);
  if (errors.length > 0) throw errors[0];
  return { latencies, sent, missed, rate: sent / sendSeconds, lateMs, answeredSeconds: (performance.now() - started) / 1000 };
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

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function round(system) {
  const outcome = { loadAtStart: os.loadavg()[0] };
  const idleCpu0 = system.cpu();
  const idleT0 = performance.now();
  const idle = startProbes(system);
  await sleep(PROBE_SECONDS * 1000);
  outcome.alone = await idle.stop();
  /** The Worker's CPU ms per second with only the probes running. */
  const probeCpuRate = (system.cpu() - idleCpu0) / ((performance.now() - idleT0) / 1000);
  /**
   * The Worker's CPU (workerd: requests, consumer, local D1) from the first post until D1 holds
   * every count, less what the probes used alongside (at their rate alone), per post.
   */
  const cpuPerPost = (cpu0, t0, tPosted, posts) => (system.cpu() - cpu0 - probeCpuRate * ((tPosted - t0) / 1000)) / posts;

  if (RATE > 0) {
    const before = metricsWork(await d1Counters(system));
    const posts0 = system.posted.posts;
    const cpu0 = system.cpu();
    const t0 = performance.now();
    const alongside = startProbes(system);
    const paced = await postAtRate(system, RATE, RATE_SECONDS, RATE_MAX_IN_FLIGHT);
    const loaded = await alongside.stop();
    const tPosted = performance.now();
    const load = os.loadavg()[0];
    const drain = await drained(system);
    const cpu = cpuPerPost(cpu0, t0, tPosted, system.posted.posts - posts0);
    const after = metricsWork(await d1Counters(system));
    outcome.paced = {
      ...paced,
      cpu,
      posts: system.posted.posts - posts0,
      statements: after.statements - before.statements,
      rowsWritten: after.rowsWritten - before.rowsWritten,
      drain,
      loaded,
      load,
    };
  }

  if (RATE > 0 && CONTROL) {
    // The same rate of GET /health: the share of the probes' latency that any requests at this
    // rate take on this machine (one workerd, 2 cores shared with this client), whatever they do.
    const alongside = startProbes(system);
    const paced = await postAtRate(system, RATE, RATE_SECONDS, RATE_MAX_IN_FLIGHT, true);
    outcome.control = { ...paced, loaded: await alongside.stop(), load: os.loadavg()[0] };
  }

  if (POSTS > 0) {
    const before = metricsWork(await d1Counters(system));
    // One at a time: a post's own latency, without queueing behind others in the client.
    const single = await postMetrics(system, SINGLE_POSTS, 1);
    const cpu0 = system.cpu();
    const t0 = performance.now();
    const alongside = startProbes(system);
    const posts = await postMetrics(system, POSTS, CONCURRENCY);
    const loaded = await alongside.stop();
    const tPosted = performance.now();
    const load = os.loadavg()[0];
    const drain = await drained(system);
    const cpu = cpuPerPost(cpu0, t0, tPosted, POSTS);
    const after = metricsWork(await d1Counters(system));
    outcome.saturated = {
      cpu,
      posts: POSTS + SINGLE_POSTS,
      rps: posts.rps,
      latencies: posts.latencies,
      singleLatencies: single.latencies,
      statements: after.statements - before.statements,
      rowsWritten: after.rowsWritten - before.rowsWritten,
      drain,
      loaded,
      load,
    };
  }
  return outcome;
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
const stat = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
};
const ms = (value) => `${fmt(value, 1)} ms`;
const pair = (s) => `${ms(s.p50)} / ${ms(s.p95)}`;
try {
  for (const system of systems) await seed(system);
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so neither always meets the same moment of the machine's load.
    const order = r % 2 === 0 ? systems : [...systems].reverse();
    for (const system of order) {
      const outcome = await round(system);
      if (process.env.METRICS_BENCH_DEBUG) console.log(JSON.stringify(await d1Counters(system)));
      results[system.name].push(outcome);
      const lines = [
        `round ${r + 1} ${system.name}: probes alone poll ${pair(stat(outcome.alone.poll))}, write ${pair(stat(outcome.alone.write))}, load ${outcome.loadAtStart.toFixed(2)}`,
      ];
      const p = outcome.paced;
      if (p)
        lines.push(
          `  fixed rate ${fmt(RATE, 0)}/s: sent ${p.sent} at ${fmt(p.rate, 0)}/s (${p.missed} missed, latest send ${fmt(p.lateMs, 0)} ms late), post ${pair(stat(p.latencies))}, Worker CPU ${fmt(p.cpu, 2)} ms/post, poll ${pair(stat(p.loaded.poll))}, write ${pair(stat(p.loaded.write))}, ${p.statements} statements, ${p.rowsWritten} rows, counts in D1 after ${fmt(p.drain.seconds, 1)} s (${p.drain.exact ? 'exact' : 'MISMATCH'}), load ${p.load.toFixed(2)}`,
        );
      const q = outcome.saturated;
      if (q)
        lines.push(
          `  saturation: ${fmt(q.rps, 0)} posts/s, Worker CPU ${fmt(q.cpu, 2)} ms/post, single post ${pair(stat(q.singleLatencies))}, ${q.statements} statements, ${q.rowsWritten} rows written, counts in D1 after ${fmt(q.drain.seconds, 1)} s (${q.drain.exact ? 'exact' : 'MISMATCH'}), load ${q.load.toFixed(2)}`,
        );
      console.log(lines.join('\n'));
    }
  }
} finally {
  for (const system of systems) await system.stop();
}
if (systems.length < 2) process.exit(0);
const load1 = os.loadavg();

function summarise(name) {
  const rounds = results[name];
  const all = (pick) => rounds.flatMap(pick);
  const sum = (pick) => rounds.reduce((n, r) => n + pick(r), 0);
  const out = {
    pollAlone: stat(all((r) => r.alone.poll)),
    writeAlone: stat(all((r) => r.alone.write)),
  };
  if (RATE > 0) {
    const posts = sum((r) => r.paced.posts);
    out.paced = {
      sent: sum((r) => r.paced.sent),
      missed: sum((r) => r.paced.missed),
      rate: sum((r) => r.paced.rate) / rounds.length,
      cpu: sum((r) => r.paced.cpu * r.paced.posts) / posts,
      statementsPer1000: (sum((r) => r.paced.statements) / posts) * 1000,
      rowsPer1000: (sum((r) => r.paced.rowsWritten) / posts) * 1000,
      post: stat(all((r) => r.paced.latencies)),
      poll: stat(all((r) => r.paced.loaded.poll)),
      write: stat(all((r) => r.paced.loaded.write)),
      drainMax: Math.max(...rounds.map((r) => r.paced.drain.seconds)),
      exact: rounds.every((r) => r.paced.drain.exact),
      load: rounds.map((r) => r.paced.load),
    };
    if (CONTROL)
      out.control = {
        poll: stat(all((r) => r.control.loaded.poll)),
        write: stat(all((r) => r.control.loaded.write)),
        request: stat(all((r) => r.control.latencies)),
      };
  }
  if (POSTS > 0) {
    const posts = sum((r) => r.saturated.posts);
    out.saturated = {
      posts,
      rps: sum((r) => r.saturated.rps) / rounds.length,
      cpu: sum((r) => r.saturated.cpu * POSTS) / (POSTS * rounds.length),
      statementsPer1000: (sum((r) => r.saturated.statements) / posts) * 1000,
      rowsPer1000: (sum((r) => r.saturated.rowsWritten) / posts) * 1000,
      post: stat(all((r) => r.saturated.latencies)),
      single: stat(all((r) => r.saturated.singleLatencies)),
      poll: stat(all((r) => r.saturated.loaded.poll)),
      write: stat(all((r) => r.saturated.loaded.write)),
      drainMax: Math.max(...rounds.map((r) => r.saturated.drain.seconds)),
      exact: rounds.every((r) => r.saturated.drain.exact),
    };
  }
  return out;
}
const before = summarise('before');
const after = summarise('after');
const m = machine();
const row = (label, b, a, note = '') => `| ${label} | ${b} | ${a} | ${note} |`;
const growth = (loaded, alone) => `×${fmt(loaded.p50 / alone.p50, 1)} / ×${fmt(loaded.p95 / alone.p95, 1)}`;

const pacedSection = !before.paced
  ? ''
  : `
## Probes alone and under the issue's load (fixed rate)

${fmt(RATE, 0)} metrics posts a second (10,000 instances each reporting every 60 s) for ${RATE_SECONDS} s per round, each from its own
instance id, sent on a clock whether or not earlier posts were answered (at most ${RATE_MAX_IN_FLIGHT} unanswered; a send due while that
many wait is skipped and counted as missed), with the probes alongside. "Alone" is the same probes in the ${PROBE_SECONDS} s just before.
Target: SDK poll and admin write latency unchanged by the metrics load.${
      before.control
        ? `
The control rows replace the posts by the same rate of \`GET /health\` (the cheapest request the Worker answers), with
the probes alongside: the growth any traffic at that rate brings here, where one workerd and this client share 2 cores.
Growth beyond the control's is the metrics path's own.`
        : ''
    }

| | before | after | target |
|---|---|---|---|
${row('posts sent / missed (all rounds)', `${before.paced.sent} / ${before.paced.missed}`, `${after.paced.sent} / ${after.paced.missed}`)}
${row('posts per second sent (mean of rounds)', fmt(before.paced.rate, 0), fmt(after.paced.rate, 0), `${fmt(RATE, 0)}`)}
${row('metrics post p50 / p95 at that rate', pair(before.paced.post), pair(after.paced.post))}
${row('Worker CPU per post (workerd: request, consumer, local D1; net of the probes)', ms(before.paced.cpu), ms(after.paced.cpu), `${fmt(before.paced.cpu / after.paced.cpu, 1)}× less; ${fmt((after.paced.cpu * RATE) / 10, 0)}% of a core at ${fmt(RATE, 0)}/s`)}
${row('SDK poll p50 / p95, alone', pair(before.pollAlone), pair(after.pollAlone))}
${row('SDK poll p50 / p95, with the metrics load', pair(before.paced.poll), pair(after.paced.poll), 'unchanged by the load')}
${row('SDK poll growth p50 / p95', growth(before.paced.poll, before.pollAlone), growth(after.paced.poll, after.pollAlone), '×1.0')}
${row('admin write p50 / p95, alone', pair(before.writeAlone), pair(after.writeAlone))}
${row('admin write p50 / p95, with the metrics load', pair(before.paced.write), pair(after.paced.write), 'unchanged by the load')}
${row('admin write growth p50 / p95', growth(before.paced.write, before.writeAlone), growth(after.paced.write, after.writeAlone), '×1.0')}
${
  before.control
    ? `${row(`control: SDK poll p50 / p95 with ${fmt(RATE, 0)} \`GET /health\` a second instead`, pair(before.control.poll), pair(after.control.poll))}
${row('control: SDK poll growth p50 / p95', growth(before.control.poll, before.pollAlone), growth(after.control.poll, after.pollAlone), "the runtime's own share")}
${row('control: admin write growth p50 / p95', growth(before.control.write, before.writeAlone), growth(after.control.write, after.writeAlone), "the runtime's own share")}
`
    : ''
}${row('D1 statements / rows written per 1,000 posts', `${fmt(before.paced.statementsPer1000, 0)} / ${fmt(before.paced.rowsPer1000, 0)}`, `${fmt(after.paced.statementsPer1000, 1)} / ${fmt(after.paced.rowsPer1000, 0)}`)}
${row('counts all in D1 after the last post (max of rounds)', `${fmt(before.paced.drainMax, 1)} s`, `${fmt(after.paced.drainMax, 1)} s`, '< 60 s')}
${row('D1 counts equal the sum posted', before.paced.exact ? 'yes' : 'NO', after.paced.exact ? 'yes' : 'NO')}
${row('probe samples (poll alone / loaded, write alone / loaded)', `${before.pollAlone.n} / ${before.paced.poll.n}, ${before.writeAlone.n} / ${before.paced.write.n}`, `${after.pollAlone.n} / ${after.paced.poll.n}, ${after.writeAlone.n} / ${after.paced.write.n}`)}
${row('load average (1 min) at the end of each loaded phase', before.paced.load.map((v) => v.toFixed(2)).join(', '), after.paced.load.map((v) => v.toFixed(2)).join(', '))}
`;

const saturatedSection = !before.saturated
  ? ''
  : `
## Saturation: as many posts as each answers

${SINGLE_POSTS} posts one at a time (a post's own latency), then ${POSTS} at ${CONCURRENCY} in flight (as fast as each answers) with the probes
alongside, then the wait until D1 holds every posted count.

| | before | after | target |
|---|---|---|---|
${row('posts per second sustained', fmt(before.saturated.rps, 0), fmt(after.saturated.rps, 0))}
${row('Worker CPU per post (net of the probes)', ms(before.saturated.cpu), ms(after.saturated.cpu))}
${row('D1 statements per 1,000 posts', fmt(before.saturated.statementsPer1000, 0), fmt(after.saturated.statementsPer1000, 1), `${fmt(before.saturated.statementsPer1000 / after.saturated.statementsPer1000, 0)}× fewer (target ≥ 50×)`)}
${row('D1 rows written per 1,000 posts', fmt(before.saturated.rowsPer1000, 0), fmt(after.saturated.rowsPer1000, 0), `${fmt(before.saturated.rowsPer1000 / after.saturated.rowsPer1000, 0)}× fewer`)}
${row('metrics post p50 / p95, one at a time', pair(before.saturated.single), pair(after.saturated.single), 'p95 < 10 ms')}
${row(`metrics post p50 / p95, ${CONCURRENCY} in flight (the rate above)`, pair(before.saturated.post), pair(after.saturated.post))}
${row('counts all in D1 after the last post (max of rounds)', `${fmt(before.saturated.drainMax, 1)} s`, `${fmt(after.saturated.drainMax, 1)} s`, '< 60 s')}
${row('D1 counts equal the sum posted', before.saturated.exact ? 'yes' : 'NO', after.saturated.exact ? 'yes' : 'NO')}
${row('SDK poll p50 / p95, alone', pair(before.pollAlone), pair(after.pollAlone))}
${row('SDK poll p50 / p95, with the saturating load', pair(before.saturated.poll), pair(after.saturated.poll))}
${row('admin write p50 / p95, alone', pair(before.writeAlone), pair(after.writeAlone))}
${row('admin write p50 / p95, with the saturating load', pair(before.saturated.write), pair(after.saturated.write))}
`;

const perRound = systems
  .flatMap((system) => results[system.name].map((r, i) => ({ r, i, name: system.name })))
  .sort((x, y) => x.i - y.i)
  .map(({ r, i, name }) => {
    const p = r.paced;
    const q = r.saturated;
    return `| ${i + 1} | ${name} | ${r.loadAtStart.toFixed(2)} | ${p ? `${fmt(p.rate, 0)}/s, ${p.missed} missed, poll ${pair(stat(p.loaded.poll))}, write ${pair(stat(p.loaded.write))}, load ${p.load.toFixed(2)}` : '—'} | ${q ? `${fmt(q.rps, 0)}/s, ${q.statements} statements, ${q.rowsWritten} rows, load ${q.load.toFixed(2)}` : '—'} |`;
  })
  .join('\n');

const text = `# Metrics ingestion: before and after the metrics Queue

Run: \`npm run bench -- metrics\` (bench/metrics/run.mjs). Date ${m.date}; ${m.cpu}, ${m.memoryGiB} GiB, Node ${m.node}.
The machine is shared with other developers' work: load average ${load0.map((v) => v.toFixed(2)).join(' ')} at the start and
${load1.map((v) => v.toFixed(2)).join(' ')} at the end (2 cores). Rounds alternate before/after so that load falls on both.

- **before**: ${systems[0].commit} (${BEFORE_DIR}), every post a D1 batch on the request path.
- **after**: ${systems[1].commit}, every post one Queue message; the consumer merges up to 100 per D1 batch (docs/metrics.md).

Both are the \`wrangler deploy --dry-run\` bundle served by Miniflare's own HTTP server with local D1, KV and Queues, wrapped
by a module that counts D1 statements and the rows D1's result meta reports written, per invocation kind. One workerd per
system serves the posts, the Queue consumer, local D1 and the probes, on the same 2 cores as this client. ${ROUNDS} rounds per
system; every post from its own instance id, naming the same ${FLAGS} flags, over ${APPS} app names. Probes: an SDK poll
(\`GET /api/client/features\`, ${FLAGS} flags) and an admin write (\`PUT\` a flag's description), each a loop with 20 ms pauses.
"Worker CPU per post" is the user + system time of the system's workerd process (/proc) from the first post of a phase until
D1 holds every count (the requests, the Queue consumer and local D1 alike), less the probes' own CPU rate (measured alone)
times the posting time, divided by the posts: a figure the machine's load hardly moves, unlike the latencies.
${pacedSection}${saturatedSection}
## Per round

| round | system | load at start | fixed rate | saturation |
|---|---|---|---|---|
${perRound}
`;

console.log(text);
if (WRITE_RESULTS) writeFileSync(path.join(HERE, 'RESULTS.md'), text);
