// Shared benchmark plumbing: start the Worker under `wrangler dev` on loopback with fresh
// local state, time requests, and describe the machine. Used by bench/<area>/run.mjs.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BENCH_ADMIN_TOKEN = '*:*.bench-admin-token';
/** Where bench/binding/RESULTS.md's propagation section (bench/binding/propagation.mjs) starts: bench/binding/run.mjs keeps it. */
export const BINDING_PROPAGATION_MARKER = '<!-- propagation: written by bench/binding/propagation.mjs -->';

/**
 * Starts `wrangler dev` with a fresh persisted state (migrations applied) and waits for
 * /health. `seedSql(persistTo)`, when given, returns the path of a SQL file executed into the
 * local D1 before the server starts; its duration is returned as `seedSeconds`.
 * `root` is the checkout to serve (another commit's, for `--against`). Returns `{ base, token, seedSeconds, stop }`.
 */
export async function startWorker({ port = 8790, token = BENCH_ADMIN_TOKEN, log = false, seedSql, root = ROOT } = {}) {
  const wranglerBin = path.join(root, 'node_modules', '.bin', 'wrangler');
  const persistTo = mkdtempSync(path.join(os.tmpdir(), 'unleash-bench-'));
  const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: '1' };
  const quiet = { cwd: root, env, stdio: log ? 'inherit' : 'ignore' };
  execFileSync(wranglerBin, ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', persistTo], quiet);
  let seedSeconds = 0;
  if (seedSql) {
    const file = seedSql(persistTo);
    const started = performance.now();
    execFileSync(wranglerBin, ['d1', 'execute', 'DB', '--local', '--persist-to', persistTo, '--file', file, '--yes'], quiet);
    seedSeconds = (performance.now() - started) / 1000;
  }
  const child = spawn(
    wranglerBin,
    [
      'dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--persist-to',
      persistTo,
      '--var',
      `INIT_ADMIN_API_TOKENS:${token}`,
      '--log-level',
      'warn',
    ],
    { cwd: root, env, stdio: log ? 'inherit' : 'ignore', detached: true },
  );
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const response = await fetch(`${base}/health`);
      if (response.ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      process.kill(-child.pid, 'SIGTERM');
      throw new Error('wrangler dev did not come up within 60 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    base,
    token,
    persistTo,
    seedSeconds,
    async stop() {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      rmSync(persistTo, { recursive: true, force: true });
    },
  };
}

export function percentile(sortedMs, p) {
  if (sortedMs.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sortedMs.length) - 1;
  return sortedMs[Math.min(sortedMs.length - 1, Math.max(0, rank))];
}

/**
 * Runs `request()` `total` times with `concurrency` in flight; returns rps and latency
 * percentiles in ms. `request` must resolve once the response body has been read.
 */
export async function load(request, { total = 2000, concurrency = 8, warmup = 50 } = {}) {
  for (let i = 0; i < warmup; i++) await request();
  const samples = [];
  let next = 0;
  const started = performance.now();
  async function worker() {
    while (next < total) {
      next++;
      const t0 = performance.now();
      await request();
      samples.push(performance.now() - t0);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedS = (performance.now() - started) / 1000;
  samples.sort((a, b) => a - b);
  return {
    requests: samples.length,
    rps: samples.length / elapsedS,
    p50: percentile(samples, 50),
    p95: percentile(samples, 95),
    p99: percentile(samples, 99),
  };
}

export function machine() {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    cpu: `${cpus.length} x ${cpus[0]?.model ?? 'unknown'}`,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadAvg: os
      .loadavg()
      .map((value) => value.toFixed(2))
      .join(' '),
  };
}

export const fmt = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

// ---------------------------------------------------------------------------------------
// Ours against the runtime floor, as bench/sdk measures it (bench/sdk/run.mjs, bench/edge/cpu.mjs):
// wrk on the same machine, CPU per request read from /proc for each server process, systems
// taking turns slice by slice and round by round so that the shared machine's other work falls
// on all of them alike, figures as medians of the rounds and ratios taken round by round.

/**
 * "ours rps % of floor" targets of the main mode's SDK answers (bench/sdk/RESULTS.md), keyed
 * by scenario id; Edge mode answers with the same code and is held to the same.
 */
export const FLOOR_TARGETS = {
  'client-small': 0.9,
  'client-small-304': 0.9,
  'client-large': 0.9,
  'client-large-304': 0.9,
  frontend: 0.7,
  'frontend-304': 0.7,
  'frontend-distinct': 0.65,
  'frontend-small-distinct': 0.85,
};

export const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * wrk with one thread and `connections` connections. A request marked `distinct` puts a
 * counter wherever its path says `{n}` (another userId on every request); each run starts its
 * numbers where the previous one's could not have reached, so no run repeats an id.
 * Returns `{ wrk, slice, measure }`; `slice` runs wrk against a system (`{ cpuMs() }`) and
 * adds the CPU its server process used meanwhile.
 */
export function wrkRunner({ connections, sliceSeconds, name = 'bench' }) {
  const script = path.join(os.tmpdir(), `${name}-distinct-${process.pid}.lua`);
  writeFileSync(
    script,
    "local n = 0\ninit = function(args)\n  n = tonumber(args[1])\nend\nrequest = function()\n  n = n + 1\n  local p = wrk.path:gsub('{n}', tostring(n))\n  return wrk.format(nil, p)\nend\n",
  );
  let distinctRuns = 0;
  function wrk(url, headers, distinct = false, seconds = sliceSeconds) {
    const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', ...(distinct ? ['-s', script] : [])];
    for (const [header, value] of Object.entries(headers)) args.push('-H', `${header}: ${value}`);
    const out = execFileSync('wrk', [...args, url, ...(distinct ? ['--', String(++distinctRuns * 10_000_000)] : [])], { encoding: 'utf8' });
    const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
    const ms = (label) => {
      const match = new RegExp(`^\\s+${label}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(out);
      if (!match) return NaN;
      const value = Number(match[1]);
      return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
    };
    const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? /Socket errors: (.*)/.exec(out)?.[1];
    if (errors) throw new Error(`wrk ${url}: ${errors}\n${out}`);
    const read = /requests in [\d.]+\w+, ([\d.]+)([KMG]?B) read/.exec(out);
    const bytesRead = read ? Number(read[1]) * { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }[read[2]] : NaN;
    return { requests, rps, p50: ms(50), p99: ms(99), bytesRead };
  }
  function slice(system, request, seconds = sliceSeconds) {
    const before = system.cpuMs();
    const result = wrk(request.url, request.headers, request.distinct, seconds);
    return { ...result, cpuMs: system.cpuMs() - before };
  }
  return { wrk, slice, measure: (system, request, seconds) => combine([slice(system, request, seconds)]) };
}

/** A system's figures from its slices of one round: totals over the slices, latency of the median slice. */
function combine(slices) {
  const requests = slices.reduce((sum, s) => sum + s.requests, 0);
  const seconds = slices.reduce((sum, s) => sum + s.requests / s.rps, 0);
  const cpuMs = slices.reduce((sum, s) => sum + s.cpuMs, 0);
  const bytesRead = slices.reduce((sum, s) => sum + s.bytesRead, 0);
  return {
    requests,
    rps: requests / seconds,
    p50: median(slices.map((s) => s.p50)),
    p99: median(slices.map((s) => s.p99)),
    bytesPerRequest: bytesRead / requests,
    cpuMsPerRequest: cpuMs / requests,
    rpsPerCpuSecond: requests / (cpuMs / 1000),
  };
}

/**
 * One GET with exactly the given headers. Not fetch(): a fetch with If-None-Match adds
 * `Cache-Control: no-cache`, and Unleash (Express) then never answers 304; wrk adds nothing.
 */
export function get(request) {
  return new Promise((resolve, reject) => {
    http
      .get(request.url, { headers: request.headers, agent: false }, (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks) }));
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

// Headers the runtime writes itself (the floor gets them the same way), not the Worker's.
const RUNTIME_HEADERS = new Set(['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);

export async function expectStatus(request, status) {
  const response = await get(request);
  if (response.status !== status) throw new Error(`${request.url}: expected ${status}, got ${response.status}`);
  return {
    etag: response.headers.etag ?? null,
    bytes: response.body.byteLength,
    body: response.body.toString('utf8'),
    contentType: response.headers['content-type'],
    headers: Object.fromEntries(Object.entries(response.headers).filter(([name]) => !RUNTIME_HEADERS.has(name))),
  };
}

/**
 * What the floor answers on a path: ours' body, and (`floorHeaders` 'ours') the headers ours
 * sent with it and with its 304, so both write the same bytes; 'minimal': content-type and etag.
 */
export async function floorEntry(oursRequest, answer, floorHeaders = 'ours') {
  const notModified = await expectStatus({ ...oursRequest, headers: { ...oursRequest.headers, 'if-none-match': answer.etag } }, 304);
  return {
    body: answer.body,
    etag: answer.etag,
    headers: floorHeaders === 'ours' ? answer.headers : { 'content-type': answer.contentType, etag: answer.etag },
    notModified: floorHeaders === 'ours' ? notModified.headers : { etag: answer.etag },
  };
}

/**
 * The rounds: in each, every scenario id runs `slices` slices per system, the systems taking
 * turns slice by slice; who goes first moves on every slice and every round. `runSlice(system,
 * id, request)` times one slice (a profiler may wrap it); `check(system, id, result)` may refuse
 * a round's result (a 304 row that got 200s); `afterRound(round)` runs between rounds.
 * Returns `{ samples: { 'system/id': [result per round] }, loadAverages }`.
 */
/**
 * What each server process burns with no requests, in CPU ms per second over 5 s: CPU per
 * request is only the requests' own if this is small. `systems` maps a name to `{ cpuMs() }`.
 */
export async function idleCpuPerSecond(systems, seconds = 5) {
  const before = Object.fromEntries(Object.entries(systems).map(([name, system]) => [name, system.cpuMs()]));
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const idle = Object.fromEntries(Object.entries(systems).map(([name, system]) => [name, (system.cpuMs() - before[name]) / seconds]));
  console.log(`idle CPU ms per second: ${JSON.stringify(idle)}`);
  return idle;
}

export async function interleavedRounds({
  systems,
  requests,
  ids,
  rounds,
  slices,
  runSlice,
  check = () => {},
  afterRound = async () => {},
}) {
  const samples = {};
  const loadAverages = [];
  for (let round = 0; round < rounds; round++) {
    loadAverages.push(machine().loadAvg);
    const order = Object.keys(systems);
    for (let r = 0; r < round; r++) order.push(order.shift());
    for (const id of ids) {
      const taken = Object.fromEntries(order.map((system) => [system, []]));
      for (let k = 0; k < slices; k++) {
        const turn = [...order];
        for (let r = 0; r < k; r++) turn.push(turn.shift());
        for (const system of turn) {
          const request = requests[system][id];
          if (!request) continue;
          taken[system].push(await runSlice(system, id, request));
        }
      }
      for (const system of order) {
        if (taken[system].length === 0) continue;
        const result = combine(taken[system]);
        await check(system, id, result);
        (samples[`${system}/${id}`] ??= []).push(result);
        console.log(
          `round ${round + 1} ${system} ${id}: ${fmt(result.rps, 0)} rps, ${fmt(result.cpuMsPerRequest, 3)} ms CPU/req, p99 ${fmt(result.p99, 2)} ms`,
        );
      }
    }
    await afterRound(round);
  }
  return { samples, loadAverages };
}

/** A 304 row's run that read 1 kB or more per response got 200s (an ETag gone stale). */
export const all304 = (result) => result.bytesPerRequest < 1024;

/** Medians over the rounds of one system's figures for one scenario. */
export function summary(samples, system, id) {
  const list = samples[`${system}/${id}`];
  if (!list) return undefined;
  return {
    rps: median(list.map((r) => r.rps)),
    cpu: median(list.map((r) => r.cpuMsPerRequest)),
    perCpu: median(list.map((r) => r.rpsPerCpuSecond)),
    p50: median(list.map((r) => r.p50)),
    p99: median(list.map((r) => r.p99)),
  };
}

/**
 * A ratio of two systems' figures taken round by round (their runs of a round took turns slice
 * by slice, under the same load); the median of these is what a table shows.
 */
export function perRound(samples, id, a, b, value) {
  const first = samples[`${a}/${id}`];
  const second = samples[`${b}/${id}`];
  return first && second ? first.map((result, round) => value(result) / value(second[round])) : [];
}
