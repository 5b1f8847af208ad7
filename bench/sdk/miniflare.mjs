// Serves Workers from Miniflare's own HTTP server (workerd listening on the port itself),
// without wrangler dev's proxy in front: under wrangler dev a trivial Worker and ours both stop
// near the same rps, so the proxy, not our code, was being measured.
//
// startProjectWorker: our Worker as `wrangler deploy --dry-run` bundles it, with the bindings
// wrangler.toml declares (read through wrangler's own config loader), and a local D1 that has
// had `wrangler d1 migrations apply --local` run against the same persist directory.
// startTrivialWorker: a Worker that answers fixed bodies, the floor of this harness.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Miniflare, convertV4MiniflareOptions } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';
import { BENCH_ADMIN_TOKEN, ROOT } from '../lib.mjs';

const CLK_TCK = 100;

/** The workerd process Miniflare started for this server: the one listening on `port`. */
function workerdPid(port) {
  const listing = execFileSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(listing)?.[1];
  if (!pid) throw new Error(`nothing listens on ${port}`);
  return Number(pid);
}

/** CPU ms (user + system) a process has used so far, threads included. */
export function processCpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / CLK_TCK) * 1000;
}

/** The pid of the process listening on a TCP port (Unleash's node process, for one). */
export function listenerPid(port) {
  return workerdPid(port);
}

async function serve(worker, port, instance = {}) {
  // Options in the v4 shape (what wrangler's config loader produces), converted by Miniflare.
  const mf = new Miniflare(convertV4MiniflareOptions({ host: '127.0.0.1', port, logRequests: false, ...instance, workers: [worker] }));
  const url = await mf.ready;
  const pid = workerdPid(port);
  return {
    base: url.origin,
    pid,
    cpuMs: () => processCpuMs(pid),
    async stop() {
      await mf.dispose();
    },
  };
}

/** `environment`: a wrangler environment of wrangler.toml (`edge`: Edge mode), as `--env` picks it. */
/** `root`: the checkout to build (another commit's, bench/against.mjs); this one by default. */
export async function startProjectWorker({
  port,
  token = BENCH_ADMIN_TOKEN,
  log = false,
  vars = {},
  instance = {},
  environment,
  root = ROOT,
}) {
  const wranglerBin = path.join(root, 'node_modules', '.bin', 'wrangler');
  const persistTo = mkdtempSync(path.join(os.tmpdir(), 'unleash-sdk-mf-state-'));
  const outdir = mkdtempSync(path.join(os.tmpdir(), 'unleash-sdk-mf-bundle-'));
  // wrangler's launcher runs on the `node` found on PATH; make it this (>= 22) one.
  const env = {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`,
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    WRANGLER_SEND_METRICS: 'false',
    CI: '1',
  };
  const quiet = { cwd: root, env, stdio: log ? 'inherit' : 'ignore' };
  const envArgs = environment ? ['--env', environment] : [];
  const { workerOptions } = unstable_getMiniflareWorkerOptions(path.join(root, 'wrangler.toml'), environment);
  // Edge mode has no D1.
  if (Object.keys(workerOptions.d1Databases ?? {}).length > 0)
    execFileSync(wranglerBin, ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', persistTo, ...envArgs], quiet);
  execFileSync(wranglerBin, ['deploy', '--dry-run', '--outdir', outdir, ...envArgs], quiet);
  // wrangler dev keeps local state under <persist-to>/v3/<service>; use the same root so
  // Miniflare opens the database the migrations were applied to.
  const state = path.join(persistTo, 'v3');
  const server = await serve(
    {
      name: 'unleash-worker',
      compatibilityDate: workerOptions.compatibilityDate,
      compatibilityFlags: workerOptions.compatibilityFlags,
      // The bindings wrangler.toml declares (vars, D1, KV, queues, Durable Objects), plus the bench's admin key.
      bindings: { ...workerOptions.bindings, INIT_ADMIN_API_TOKENS: token, ...vars },
      d1Databases: workerOptions.d1Databases,
      kvNamespaces: workerOptions.kvNamespaces,
      queueProducers: workerOptions.queueProducers,
      queueConsumers: workerOptions.queueConsumers,
      durableObjects: workerOptions.durableObjects,
      // The limiter runs as in production (its cost is part of the path measured), but with
      // limits no bench client reaches: all local callers share one address, and a refused
      // /edge/validate would time the 429 instead of the lookups.
      ratelimits: Object.fromEntries(
        Object.entries(workerOptions.ratelimits ?? {}).map(([name, options]) => [
          name,
          { ...options, simple: { ...options.simple, limit: 1_000_000_000 } },
        ]),
      ),
      modules: true,
      // The bundle is one ES module; passed as text (a scriptPath fails to load in this
      // Miniflare build).
      script: readFileSync(path.join(outdir, 'index.js'), 'utf8'),
    },
    port,
    { resourcePersistencePath: state, ...instance },
  );
  return {
    ...server,
    token,
    async stop() {
      await server.stop();
      rmSync(persistTo, { recursive: true, force: true });
      rmSync(outdir, { recursive: true, force: true });
    },
  };
}

/**
 * The floor: the cheapest Worker that answers the same requests with the same bytes. Each
 * route has a fixed body, ETag and headers; a matching If-None-Match gets 304 with its own
 * headers (the ETag among them), as ours. `bodies` maps a path to
 * `{ body, etag, headers, notModified }` (the last two: header name to value).
 */
export async function startTrivialWorker({ port, bodies, instance = {} }) {
  const script = `
const BODIES = ${JSON.stringify(bodies)};
export default {
  async fetch(request) {
    const path = new URL(request.url).pathname;
    const entry = BODIES[path];
    if (!entry) return new Response('not found', { status: 404 });
    if (request.headers.get('if-none-match') === entry.etag) return new Response(null, { status: 304, headers: entry.notModified });
    return new Response(entry.body, { headers: entry.headers });
  },
};`;
  return serve({ name: 'trivial', modules: true, script, compatibilityDate: '2026-10-01' }, port, instance);
}
