// SDK-side benchmark: our Worker served by Miniflare's own HTTP server (no wrangler dev proxy),
// against the floor (a trivial Worker answering the same bytes, served the same way) and the
// real Unleash 6.10.1 on 127.0.0.1:4243, seeded with the same flags. Rounds alternate between
// the three so the load other work puts on the shared machine falls on all of them alike;
// each figure is the median of the rounds. CPU per request is read from /proc for the workerd
// process of each Miniflare server and for Unleash's node process. Writes RESULTS.md here.
//
// Env: SDK_BENCH_ROUNDS (5), SDK_BENCH_SECONDS (4, per system, scenario and round),
// SDK_BENCH_SLICES (4: those seconds are cut into this many wrk runs, the systems taking turns
// slice by slice, so that a burst of other work on the shared machine falls on all of them),
// SDK_BENCH_CONNECTIONS (16),
// SDK_BENCH_PORT (8806; the floor uses +1, the wrangler dev aside +2), UNLEASH_URL
// (http://127.0.0.1:4243), UNLEASH_ADMIN_TOKEN, SDK_BENCH_WRANGLER_DEV (1: run the aside),
// SDK_BENCH_ONLY (scenario ids, comma-separated, e.g. client-large,client-large-304: a quick
// look while working; the table is printed and RESULTS.md is left alone), SDK_BENCH_PROFILE
// (a scenario id: V8-profiles ours and the floor during that scenario's runs through their
// inspectors, on the port +20 and +21, and prints where each JavaScript thread spent the time;
// profiling slows them, so figures of such a run are not results), SDK_BENCH_FLOOR_HEADERS
// (`ours`: the floor answers with the headers ours sent for that path, CORS included, so both
// write the same bytes; `minimal`: only content-type and etag, as the floor did until
// 2026-11-26), SDK_BENCH_WRITE_RESULTS (1; 0 leaves RESULTS.md alone, e.g. on a loaded machine).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  all304,
  expectStatus,
  FLOOR_TARGETS,
  floorEntry as floorEntryOf,
  fmt,
  get,
  interleavedRounds,
  machine,
  median,
  percentile,
  perRound as perRoundOf,
  summary as summaryOf,
  wrkRunner,
  idleCpuPerSecond,
} from '../lib.mjs';
import {
  adminClient,
  cleanUnleash,
  ENVIRONMENT,
  LARGE_COUNT,
  must,
  NAME,
  PROJECT,
  seed,
  SMALL_ENVIRONMENT,
  unleashSessionClient,
  DISTINCT_ROWS,
  FRONTEND_QUERY,
  SCENARIOS,
} from './dataset.mjs';
import { listenerPid, processCpuMs, startProjectWorker, startTrivialWorker } from './miniflare.mjs';
import { connectProfiler, summariseProfiles } from './profile.mjs';
import { startWorker as startWranglerDev } from './worker.mjs';
import { againstArgument, checkoutAgainst } from '../against.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
if (spawnSync('wrk', ['--version']).error?.code === 'ENOENT') {
  console.error('The SDK bench drives load with wrk, which is not installed: apt-get install wrk (Debian/Ubuntu) or brew install wrk.');
  process.exit(2);
}
const PORT = Number(process.env.SDK_BENCH_PORT ?? 8806);
const ROUNDS = Number(process.env.SDK_BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.SDK_BENCH_SECONDS ?? 4);
const SLICES = Number(process.env.SDK_BENCH_SLICES ?? 4);
const SLICE_SECONDS = SECONDS / SLICES;
if (!Number.isInteger(SLICE_SECONDS) || SLICE_SECONDS < 1)
  throw new Error('SDK_BENCH_SECONDS must be a whole multiple of SDK_BENCH_SLICES');
const CONNECTIONS = Number(process.env.SDK_BENCH_CONNECTIONS ?? 16);
const PROFILE = process.env.SDK_BENCH_PROFILE;
const INSPECTOR_PORT = PORT + 20;
const ONLY = process.env.SDK_BENCH_ONLY ? new Set(process.env.SDK_BENCH_ONLY.split(',')) : undefined;
const UNLEASH = process.env.UNLEASH_URL ?? 'http://127.0.0.1:4243';
const UNLEASH_ADMIN = process.env.UNLEASH_ADMIN_TOKEN ?? '*:*.unleash6-admin-token';
const UNLEASH_USER = process.env.UNLEASH_USER ?? 'admin';
const UNLEASH_PASSWORD = process.env.UNLEASH_PASSWORD ?? 'unleash4all';
const WRANGLER_DEV_ASIDE = (process.env.SDK_BENCH_WRANGLER_DEV ?? '1') !== '0';
const FLOOR_HEADERS = process.env.SDK_BENCH_FLOOR_HEADERS ?? 'ours';
if (FLOOR_HEADERS !== 'ours' && FLOOR_HEADERS !== 'minimal') throw new Error('SDK_BENCH_FLOOR_HEADERS must be ours or minimal');
const WRITE_RESULTS = (process.env.SDK_BENCH_WRITE_RESULTS ?? '1') !== '0';
const EDGE_KEYS = 100;
const EDGE_SAMPLES = 100;

// ---------------------------------------------------------------------------------------
// Load: wrk, one thread, CONNECTIONS connections (bench/lib.mjs).

const { wrk, slice, measure } = wrkRunner({ connections: CONNECTIONS, sliceSeconds: SLICE_SECONDS, name: 'sdkbench' });
const floorEntry = (oursRequest, answer) => floorEntryOf(oursRequest, answer, FLOOR_HEADERS);

// ---------------------------------------------------------------------------------------

const m = machine();
console.log(`load average before: ${m.loadAvg}`);
const ours = await startProjectWorker({ port: PORT, instance: PROFILE ? { inspectorPort: INSPECTOR_PORT } : {} });
// `--against <commit>`: that commit built beside this checkout and measured in the same rounds.
const AGAINST = againstArgument();
const previousBuild = AGAINST ? checkoutAgainst(AGAINST) : undefined;
let previous;
const profilers = PROFILE ? { ours: await connectProfiler(INSPECTOR_PORT, 'unleash-worker') } : {};
const profiles = { ours: [], floor: [] };
const oursAdmin = adminClient(ours.base, ours.token);
const unleashAdmin = adminClient(UNLEASH, UNLEASH_ADMIN);
let floor;
try {
  const oursKeys = await seed(oursAdmin, NAME);
  if (previousBuild) previous = await startProjectWorker({ port: PORT + 3, root: previousBuild.root });
  const previousKeys = previous ? await seed(adminClient(previous.base, previous.token), NAME) : undefined;
  // Made before any ETag is taken. Tokens are audit events SDKs cannot see, so they no longer
  // move our data revision (they did until 2026-11-24, and a 304 run was then sent a stale
  // If-None-Match); kept first so that no run depends on it.
  const edgeKeys = [];
  for (let i = 0; i < EDGE_KEYS; i++) {
    const response = await must(
      await oursAdmin('POST', '/api/admin/api-tokens', {
        tokenName: `edge-${i}`,
        type: i % 2 ? 'frontend' : 'client',
        environment: ENVIRONMENT,
        projects: [PROJECT],
      }),
      201,
    );
    edgeKeys.push((await response.json()).secret);
  }
  // The shared Unleash may be down (it is not ours to start): then the run goes on without it.
  const unleashUp = await fetch(`${UNLEASH}/health`, { signal: AbortSignal.timeout(5000) }).then(
    (r) => r.ok,
    () => false,
  );
  if (!unleashUp) console.log(`Unleash is not answering on ${UNLEASH}: measuring without it`);
  if (unleashUp) await cleanUnleash(unleashAdmin);
  // The constraints use a `region` context field, which Unleash wants to exist; removed
  // again at the end if this run made it.
  const madeRegion = unleashUp && (await unleashAdmin('GET', '/api/admin/context/region')).status === 404;
  if (madeRegion) await must(await unleashAdmin('POST', '/api/admin/context', { name: 'region' }), 201, 200);
  const unleashKeys = unleashUp
    ? await seed(unleashAdmin, NAME, await unleashSessionClient(UNLEASH, UNLEASH_USER, UNLEASH_PASSWORD))
    : undefined;
  const unleashSystem = unleashUp ? { name: 'Unleash 6.10.1', pid: listenerPid(new URL(UNLEASH).port), base: UNLEASH } : undefined;
  if (unleashSystem) unleashSystem.cpuMs = () => processCpuMs(unleashSystem.pid);

  const scenarios = SCENARIOS;
  const distinctRows = DISTINCT_ROWS;
  const bodies = {};
  const requests = { ours: {}, floor: {}, unleash: {}, ...(previous ? { previous: {} } : {}) };
  const sizes = {};
  for (const scenario of scenarios) {
    const oursRequest = { url: `${ours.base}${scenario.path}`, headers: { authorization: oursKeys[scenario.key], ...scenario.headers } };
    const unleashRequest = {
      url: `${UNLEASH}${scenario.path}`,
      headers: { authorization: unleashKeys?.[scenario.key], ...scenario.headers },
    };
    const o = await expectStatus(oursRequest, 200);
    // Unleash's frontend API serves from an SDK cache that catches up with the import a few
    // seconds later: wait until it answers what we answer, or its answer stays the same for 5 s.
    let u = unleashUp ? await expectStatus(unleashRequest, 200) : { bytes: NaN };
    for (let tries = 0, same = 0; unleashUp && tries < 60 && same < 5 && !(scenario.key === 'frontend' && u.body === o.body); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const again = await expectStatus(unleashRequest, 200);
      same = again.etag === u.etag && again.body === u.body ? same + 1 : 0;
      u = again;
    }
    if (!o.etag) throw new Error(`${scenario.id}: ours sent no ETag`);
    sizes[scenario.id] = { ours: o.bytes, unleash: u.bytes, unleashEtag: Boolean(u.etag) };
    bodies[`/${scenario.id}`] = await floorEntry(oursRequest, o);
    requests.ours[scenario.id] = oursRequest;
    requests.ours[`${scenario.id}-304`] = { ...oursRequest, headers: { ...oursRequest.headers, 'if-none-match': o.etag } };
    if (previous) {
      const request = {
        url: `${previous.base}${scenario.path}`,
        headers: { authorization: previousKeys[scenario.key], ...scenario.headers },
      };
      const answer = await expectStatus(request, 200);
      requests.previous[scenario.id] = request;
      requests.previous[`${scenario.id}-304`] = { ...request, headers: { ...request.headers, 'if-none-match': answer.etag } };
    }
    if (unleashUp) requests.unleash[scenario.id] = unleashRequest;
    if (unleashUp && u.etag)
      requests.unleash[`${scenario.id}-304`] = { ...unleashRequest, headers: { ...unleashRequest.headers, 'if-none-match': u.etag } };
    console.log(`${scenario.id}: ours ${o.bytes} B, Unleash ${u.bytes} B (ETag ${u.etag ?? 'none'})`);
  }
  // The floor's 5-flag body: ours for one user (the same size as any other user's, give or take).
  {
    const smallRequest = {
      url: `${ours.base}${distinctRows[1].path.replace('{n}', '1')}`,
      headers: { authorization: oursKeys.frontendSmall },
    };
    const small = await expectStatus(smallRequest, 200);
    bodies['/frontend-small'] = await floorEntry(smallRequest, small);
    sizes['frontend-small'] = { ours: small.bytes };
  }
  floor = await startTrivialWorker({ port: PORT + 1, bodies, instance: PROFILE ? { inspectorPort: INSPECTOR_PORT + 1 } : {} });
  if (PROFILE) profilers.floor = await connectProfiler(INSPECTOR_PORT + 1, 'trivial');
  for (const scenario of scenarios) {
    const request = { url: `${floor.base}/${scenario.id}`, headers: { authorization: oursKeys[scenario.key], ...scenario.headers } };
    requests.floor[scenario.id] = request;
    requests.floor[`${scenario.id}-304`] = { ...request, headers: { ...request.headers, 'if-none-match': bodies[`/${scenario.id}`].etag } };
  }
  // Unleash's frontend cache may still move after the wait above: take its ETag again until
  // a conditional request gets its 304.
  for (const [id, request] of Object.entries(requests.unleash)) {
    if (!id.endsWith('-304')) continue;
    for (let tries = 0; tries < 60; tries++) {
      if ((await get(request)).status === 304) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      request.headers['if-none-match'] = (await expectStatus(requests.unleash[id.slice(0, -4)], 200)).etag;
    }
  }
  for (const row of distinctRows) {
    requests.ours[row.id] = { url: `${ours.base}${row.path}`, headers: { authorization: oursKeys[row.key] }, distinct: true };
    if (previous)
      requests.previous[row.id] = { url: `${previous.base}${row.path}`, headers: { authorization: previousKeys[row.key] }, distinct: true };
    if (unleashUp)
      requests.unleash[row.id] = { url: `${UNLEASH}${row.path}`, headers: { authorization: unleashKeys?.[row.key] }, distinct: true };
    requests.floor[row.id] = {
      url: `${floor.base}/${row.floor}?userId={n}&sessionId={n}`,
      headers: { authorization: oursKeys[row.key] },
      distinct: true,
    };
  }
  // Every request answers as expected before timing starts (wrk counts only non-2xx/3xx).
  for (const [system, table] of Object.entries(requests)) {
    for (const [id, request] of Object.entries(table))
      await expectStatus(request, id.endsWith('-304') ? 304 : 200).catch((error) => {
        throw new Error(`${system} ${id}: ${error.message}`);
      });
  }

  // /edge/validate with EDGE_KEYS keys on a warm isolate: sequential calls, p95 latency per
  // round (after that round's load runs), reported as the median of the rounds' p95.
  // node:http on one kept-alive connection: a lighter client than fetch on these shared cores.
  const edgeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const edgeBody = JSON.stringify({ tokens: edgeKeys });
  const post = () =>
    new Promise((resolve, reject) => {
      const request = http.request(
        `${ours.base}/edge/validate`,
        {
          method: 'POST',
          agent: edgeAgent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(edgeBody) },
        },
        (response) => {
          const chunks = [];
          response.on('data', (chunk) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(edgeBody);
    });
  const validate = async (retry = true) => {
    const t0 = performance.now();
    // A kept-alive connection that workerd closed while wrk ran fails on first write: retry.
    const response = await post().catch((error) => {
      if (retry) return undefined;
      throw error;
    });
    if (response === undefined) return validate(false);
    const elapsed = performance.now() - t0;
    const body = JSON.parse(response.body);
    if (response.status !== 200 || body.tokens.length !== EDGE_KEYS)
      throw new Error(`/edge/validate: ${response.status}, ${body.tokens?.length} valid`);
    return elapsed;
  };
  for (let i = 0; i < 20; i++) await validate();
  const edgeRounds = [];
  const edgeRound = async () => {
    const cpuBefore = ours.cpuMs();
    const times = [];
    for (let i = 0; i < EDGE_SAMPLES; i++) times.push(await validate());
    times.sort((a, b) => a - b);
    const result = {
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      p99: percentile(times, 99),
      cpu: (ours.cpuMs() - cpuBefore) / EDGE_SAMPLES,
    };
    edgeRounds.push(result);
    console.log(
      `/edge/validate ${EDGE_KEYS} keys: p50 ${fmt(result.p50, 2)} ms, p95 ${fmt(result.p95, 2)} ms, ${fmt(result.cpu, 2)} ms CPU`,
    );
  };

  const systems = {
    ours: { name: 'ours', ...ours },
    floor: { name: 'floor', ...floor },
    ...(unleashSystem ? { unleash: unleashSystem } : {}),
    ...(previous ? { previous: { name: `previous (${previousBuild.label})`, ...previous } } : {}),
  };
  const ids = [...scenarios.flatMap((s) => [s.id, `${s.id}-304`]), ...distinctRows.map((row) => row.id)].filter(
    (id) => !ONLY || ONLY.has(id),
  );
  // Warm-up: one short pass over everything, not recorded.
  for (const id of ids)
    for (const system of Object.keys(systems))
      if (requests[system][id]) wrk(requests[system][id].url, requests[system][id].headers, requests[system][id].distinct);
  const idle = await idleCpuPerSecond(systems);
  const { samples, loadAverages } = await interleavedRounds({
    systems,
    requests,
    ids,
    rounds: ROUNDS,
    slices: SLICES,
    async runSlice(system, id, request) {
      const profiler = id === PROFILE ? profilers[system] : undefined;
      if (profiler) await profiler.start();
      const result = slice(systems[system], request, SLICE_SECONDS);
      if (profiler) profiles[system].push({ profile: await profiler.stop(), requests: result.requests });
      return result;
    },
    async check(system, id, result) {
      // A 304 run that got 200s (an ETag gone stale) would time the wrong answer.
      if (id.endsWith('-304') && !all304(result)) {
        // Unleash is shared: another agent's flag write there moves its ETag; say so, go on.
        if (system === 'unleash') console.log(`warning: unleash ${id}: ${fmt(result.bytesPerRequest, 0)} bytes per response, not all 304s`);
        else throw new Error(`${system} ${id}: ${fmt(result.bytesPerRequest, 0)} bytes per response; not 304s`);
      }
      if (profilers[system]) {
        const heap = await profilers[system].heapUsage();
        console.log(
          `  heap after ${system} ${id}: V8 ${fmt(heap.usedSize / 1e6, 1)} MB used of ${fmt(heap.totalSize / 1e6, 1)} MB, embedder ${fmt(heap.embedderHeapUsedSize / 1e6, 1)} MB`,
        );
      }
    },
    afterRound: edgeRound,
  });
  const edge = {
    p50: median(edgeRounds.map((r) => r.p50)),
    p95: median(edgeRounds.map((r) => r.p95)),
    p99: median(edgeRounds.map((r) => r.p99)),
    cpu: median(edgeRounds.map((r) => r.cpu)),
    p95s: edgeRounds.map((r) => fmt(r.p95, 1)).join(' / '),
  };
  edgeAgent.destroy();
  const summary = (system, id) => summaryOf(samples, system, id);

  console.log(`/edge/validate ${EDGE_KEYS} keys: p50 ${fmt(edge.p50, 2)} ms, p95 ${fmt(edge.p95, 2)} ms, ${fmt(edge.cpu, 2)} ms CPU`);

  if (unleashUp) await cleanUnleash(unleashAdmin);
  if (madeRegion) await must(await unleashAdmin('DELETE', '/api/admin/context/region'), 200);
  await floor.stop();
  floor = undefined;
  await previous?.stop();
  previous = undefined;
  await ours.stop();

  // Aside: the same requests through wrangler dev, whose local proxy dominates the figure.
  let aside = [];
  if (WRANGLER_DEV_ASIDE) {
    const dev = await startWranglerDev({ port: PORT + 2 });
    try {
      const devAdmin = adminClient(dev.base, dev.token);
      const devKeys = await seed(devAdmin, NAME);
      const devPid = listenerPid(PORT + 2);
      const devSystem = { cpuMs: () => processCpuMs(devPid) };
      for (const scenario of scenarios.filter((s) => s.id !== 'client-large')) {
        const request = { url: `${dev.base}${scenario.path}`, headers: { authorization: devKeys[scenario.key], ...scenario.headers } };
        await expectStatus(request, 200);
        wrk(request.url, request.headers);
        aside.push({ label: scenario.label, ...measure(devSystem, request, SECONDS) });
      }
    } finally {
      await dev.stop();
    }
  }

  // -------------------------------------------------------------------------------------
  const targets = FLOOR_TARGETS;
  const labelOf = (id) => {
    const row = distinctRows.find((r) => r.id === id);
    if (row) return `${row.label} (200)`;
    const scenario = scenarios.find((s) => id.startsWith(s.id));
    return `${scenario.label}${id.endsWith('-304') ? ', If-None-Match (304)' : ' (200)'}`;
  };
  const perRound = (id, a, b, value) => perRoundOf(samples, id, a, b, value);
  const rows = ids.map((id) => {
    const o = summary('ours', id);
    const f = summary('floor', id);
    const u = summary('unleash', id);
    const ofFloor = median(perRound(id, 'ours', 'floor', (r) => r.rps));
    const floorCpuShare = median(perRound(id, 'floor', 'ours', (r) => r.cpuMsPerRequest));
    const vsUnleash = u ? median(perRound(id, 'ours', 'unleash', (r) => r.rpsPerCpuSecond)) : NaN;
    const target = targets[id];
    const met = (target === undefined || ofFloor >= target) && (!u || vsUnleash > 1) && unleashUp;
    return `| ${labelOf(id)} | ${fmt(o.rps, 0)} | ${fmt(o.cpu, 3)} | ${fmt(o.perCpu, 0)} | ${fmt(o.p99, 2)} | ${fmt(f.rps, 0)} | ${fmt(f.cpu, 3)} | ${fmt(floorCpuShare * 100, 0)} % | ${fmt(ofFloor * 100, 0)} %${target === undefined ? ' (no target)' : ` (≥ ${target * 100} %)`} | ${u ? fmt(u.rps, 0) : unleashUp ? 'no 304' : 'down'} | ${u ? fmt(u.cpu, 3) : '—'} | ${u ? fmt(u.perCpu, 0) : '—'} | ${u ? `${fmt(vsUnleash, 2)}x` : '—'} | ${met ? 'yes' : '**no**'} |`;
  });
  const roundRows = ids.map(
    (id) =>
      `${labelOf(id)}: ${perRound(id, 'ours', 'floor', (r) => r.rps)
        .map((ratio) => `${fmt(ratio * 100, 0)} %`)
        .join(' / ')}`,
  );
  // This build against the other one, round by round (their slices took turns under the same load).
  const spread = (values) => `${fmt(Math.min(...values), 2)}–${fmt(Math.max(...values), 2)}`;
  const againstRows = previousBuild
    ? ids.map((id) => {
        const o = summary('ours', id);
        const p = summary('previous', id);
        const perCpu = perRound(id, 'ours', 'previous', (r) => r.rpsPerCpuSecond);
        const rps = perRound(id, 'ours', 'previous', (r) => r.rps);
        const oursFloor = median(perRound(id, 'ours', 'floor', (r) => r.rps));
        const previousFloor = median(perRound(id, 'previous', 'floor', (r) => r.rps));
        return `| ${labelOf(id)} | ${fmt(o.perCpu, 0)} | ${fmt(p.perCpu, 0)} | **${fmt(median(perCpu), 2)}x** (${spread(perCpu)}) | ${fmt(o.rps, 0)} | ${fmt(p.rps, 0)} | ${fmt(median(rps), 2)}x (${spread(rps)}) | ${fmt(oursFloor * 100, 0)} % / ${fmt(previousFloor * 100, 0)} % |`;
      })
    : [];
  const againstText = previousBuild
    ? `
## This build against ${previousBuild.label} (\`--against ${AGAINST}\`), same run

${previousBuild.label} (\`${previousBuild.commit}\`) was checked out with \`git worktree add\` in a temporary directory (node_modules hard-linked from this checkout: the same runtime dependencies and wrangler), built and served the same way on the port +3, seeded with the same data, and took its turn in every slice of every round with the other systems. Ratios are this build ÷ ${previousBuild.label}, the median of the round-by-round ratios, with their spread (lowest–highest round); above 1 this build is faster.

| Scenario | this rps per CPU s | ${previousBuild.label} rps per CPU s | this ÷ ${previousBuild.label} (rps per CPU s) | this rps | ${previousBuild.label} rps | this ÷ ${previousBuild.label} (rps) | % of floor, this / ${previousBuild.label} |
|---|---|---|---|---|---|---|---|
${againstRows.join('\n')}
`
    : '';
  const asideRows = aside.map((r) => `| ${r.label} (200) | ${fmt(r.rps, 0)} | ${fmt(r.cpuMsPerRequest, 3)} | ${fmt(r.p99, 2)} |`);
  const text = `# SDK-side benchmark

Run: \`npm run bench -- sdk\`. Our Worker (the bundle \`wrangler deploy --dry-run\` makes, the bindings of \`wrangler.toml\`, a local D1 with the migrations applied by \`wrangler d1 migrations apply --local\`) is served by **Miniflare's own HTTP server** (workerd listening on the port), without wrangler dev's proxy. The **floor** is a trivial Worker served the same way that answers the same paths with the same bytes and ETags (a 304 on a matching If-None-Match)${FLOOR_HEADERS === 'ours' ? ' and the same headers ours sent (CORS included)' : ', with only content-type and etag for headers (SDK_BENCH_FLOOR_HEADERS=minimal)'}, so "% of floor" is what our code costs on top of the runtime. **Unleash 6.10.1** is the shared instance on ${UNLEASH}, seeded through its admin API with the same import body.

- Date: ${m.date}
- Machine: ${m.cpu}, ${m.memoryGiB} GiB RAM, Node ${m.node}. The 2 cores are shared with other agents working at the same time: load average before the run ${m.loadAvg}; at the start of each round ${loadAverages.join(' / ')}.
- Load: \`wrk -t1 -c${CONNECTIONS}\` on the same machine, ${SECONDS} s per system, scenario and round, cut into ${SLICES} runs of ${SLICE_SECONDS} s (\`-d${SLICE_SECONDS}s\`) in which the three systems take turns (who goes first moves on every slice and every round), so that a burst of other work on the shared machine falls on all three rather than on whichever ran then; ${ROUNDS} rounds, after one unrecorded warm-up pass. A system's figures for a round are its totals over its slices (requests, CPU, time; p99 of the median slice); the table gives the **median of the ${ROUNDS} rounds**, and each ratio ("% of floor", "floor CPU ÷ ours CPU", "ours ÷ Unleash") is the median of that ratio taken round by round.
- CPU: user + system time of the workerd process (ours, floor) or of Unleash's node process, from /proc, divided by the requests wrk completed. With no requests these processes used ${Object.entries(
    idle,
  )
    .map(([name, ms]) => `${name} ${fmt(ms, 1)}`)
    .join(
      ', ',
    )} ms CPU per second (measured over 5 s before the rounds), so the per-request figures are the requests' own. "rps per CPU s" is requests per CPU second of the server process: what one core would serve if the server had it alone. This is the fair comparison on a shared machine.
- Data: ${LARGE_COUNT} flags (200 strategies; some constraints and strategy variants) plus 5 small flags, in project \`${PROJECT}\`, environment \`${ENVIRONMENT}\`, imported through \`POST /api/admin/features-batch/import\` on both servers; the 5 small flags are imported into environment \`${SMALL_ENVIRONMENT}\` too, where the ${LARGE_COUNT} are disabled, and the 5-flag frontend row uses a frontend key of that environment. Client requests send \`Unleash-Client-Spec: 5.2.0\` and \`namePrefix\` to pick the set (so flags other agents put in the shared Unleash are not served). Frontend: \`GET /api/frontend?${FRONTEND_QUERY.replace('%5B', '[').replace('%5D', ']')}\`.
- Payload sizes (ours / Unleash): client ~2 kB ${sizes['client-small'].ours} / ${fmt(sizes['client-small'].unleash, 0)} B, client ~100 kB ${sizes['client-large'].ours} / ${fmt(sizes['client-large'].unleash, 0)} B, frontend ${sizes.frontend.ours} / ${fmt(sizes.frontend.unleash, 0)} B, frontend 5 flags ~${sizes['frontend-small'].ours} B.

| Scenario | ours rps | ours CPU ms/req | ours rps per CPU s | ours p99 ms | floor rps | floor CPU ms/req | floor CPU ÷ ours CPU | ours rps % of floor (target) | Unleash rps | Unleash CPU ms/req | Unleash rps per CPU s | ours ÷ Unleash (rps per CPU s) | targets met |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

"ours rps % of floor" in each round: ${roundRows.join('; ')}.

\`POST /edge/validate\` with ${EDGE_KEYS} valid keys (client and frontend), warm isolate, ${EDGE_SAMPLES} sequential calls after each round's load runs; medians of the ${ROUNDS} rounds: p50 ${fmt(edge.p50, 2)} ms, **p95 ${fmt(edge.p95, 2)} ms** (target < 10 ms; p95 of each round: ${edge.p95s} ms), p99 ${fmt(edge.p99, 2)} ms; ${fmt(edge.cpu, 2)} ms workerd CPU per call.

${
  aside.length > 0
    ? `Aside, not comparable: the same Worker under \`wrangler dev\` (one ${SECONDS} s run each, after a warm-up run). wrangler dev's local proxy sits in front of workerd; CPU here is workerd's alone, and the rps is capped by the proxy, which is why these figures were dropped as the measure of our code.

| Scenario under wrangler dev | rps | workerd CPU ms/req | p99 ms |
|---|---|---|---|
${asideRows.join('\n')}
`
    : ''
}
${againstText}
Reading it:
- "ours rps % of floor" is the target's measure; "floor CPU ÷ ours CPU" says the same from CPU time, which the machine's other work disturbs less than rps (a run that loses the cores to someone else loses rps, not CPU per request). Where the two disagree by much, the rps figure is the noisy one.
- The client API answers a 200 from a body built once per data revision and query and kept in the isolate, a 304 from the revision and query alone; the work left per request is routing (exact paths go straight to their handler, \`src/direct-routes.ts\`), the key check (the key's hash is remembered per isolate for 10 s) and the answer.
- The frontend rows with one repeated context measure what a browser SDK polling with its own context gets: the answer for (data revision, token scope, context) is kept in the isolate when its evaluation read neither the clock nor a random number, so the repeat skips evaluating 350 flags. The "another userId (and sessionId) on every request" rows never hit that cache: every request evaluates every flag for a context never seen (flags compiled once per data revision and token scope into ready matchers), joins the chosen per-flag answer pieces into the body and hashes it once for the ETag (Express's weak ETag, the one Unleash sends for the same body), unless that answer vector's body is already kept (the 5-flag row mostly is); a key the isolate trusts is answered before routing at a fresh revision (\`src/sdk/frontend-api/early.ts\`); see docs/sdk.md. Their floor answers a frontend body of the same size (350 flags: the repeated context's; 5 flags: one user's).
${unleashUp ? '' : `- **Unleash was not answering on ${UNLEASH} during this run** (the shared instance is not ours to restart): its columns are empty and no row counts as met.\n`}- Unleash does not send an ETag on an endpoint when its row says "no 304"; it is then compared on its 200 only.
- Every 304 row is checked to have been 304s (under 1 kB read per response). Runs before 2026-11-24 did not check, and took the ETags before creating the /edge/validate keys: each key created is an audit event, which moves our data revision and so our ETag, so our "304" rows were in fact 200s (hence the 100 kB 304 row far below the 200 row). Since then, our revision, like Unleash's, counts only events SDKs can see, so creating those keys no longer moves it.
- Unleash is one Node process; its rps is limited by that process and by sharing the cores with wrk, workerd and other agents. Its CPU per request is its own, comparable to workerd's.
- The floor and ours both pay Miniflare's entry worker and workerd's HTTP handling. Cloudflare's CPU-time metric is meant to count the Worker's own execution, so ours minus the floor is likely the closer estimate of what a request costs there; measure on a deployed Worker before relying on it.
- \`/edge/validate\` latency is wall time from a Node client on the same machine; with the load average above, most of a slow call is waiting for a core, not work: compare its p50 and its CPU per call.
`;
  if (!ONLY && !PROFILE && WRITE_RESULTS) writeFileSync(path.join(HERE, 'RESULTS.md'), text);
  console.log(text);
  for (const [system, profiler] of Object.entries(profilers)) {
    console.log(
      `Where ${system} spent its JavaScript thread's time in ${PROFILE} (${profiles[system].length} runs, self time, µs per request):`,
    );
    if (profiles[system].length > 0) console.log(summariseProfiles(profiles[system]));
    // Whole profiles, for Chrome DevTools (Performance → load profile) or a closer look.
    profiles[system].forEach(({ profile }, index) => {
      const file = path.join(os.tmpdir(), `sdk-bench-${PROFILE}-${system}-${index + 1}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      console.log(`  saved ${file}`);
    });
    profiler.close();
  }
} finally {
  await floor?.stop().catch(() => {});
  await previous?.stop().catch(() => {});
  await ours.stop().catch(() => {});
  previousBuild?.remove();
}
