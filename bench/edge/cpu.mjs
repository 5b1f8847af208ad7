// Edge mode's SDK answers against the runtime floor (bench/edge/RESULTS.md), by bench/sdk's
// method and code (bench/lib.mjs, bench/sdk/miniflare.mjs, bench/sdk/dataset.mjs): the Worker
// as `wrangler deploy --dry-run --env edge` bundles it, served by Miniflare's own HTTP server,
// against a trivial Worker answering the same bytes; wrk on the same machine, CPU per request
// of each workerd process from /proc, the two taking turns slice by slice and round by round.
//
// The upstream is a real Unleash (default the 8.2.0 oracle on :4242) seeded with bench/sdk's
// data set through its admin API: the Edge polls it once per interval, so it does not weigh on
// the per-request figures, and its answers are the real ones. The recorded fixtures hold 6
// flags, too few to compare with bench/sdk's 350-flag rows. Use an Unleash of its own (a copy
// of the oracle with its own database, see docs/edge.md): the Edge serves every flag a token
// can see, and other people's flags in a shared Unleash change the frontend answers.
//
//   node bench/edge/cpu.mjs   (env: EDGE_BENCH_UPSTREAM, EDGE_BENCH_ADMIN_TOKEN, EDGE_BENCH_PORT
//   (9160; the floor +1), EDGE_BENCH_ROUNDS (5), EDGE_BENCH_SECONDS (4), EDGE_BENCH_SLICES (4),
//   EDGE_BENCH_CONNECTIONS (16), EDGE_BENCH_ONLY (scenario ids, comma-separated), EDGE_BENCH_SERVICE
//   (1: the main mode's Worker, seeded with the same data set through its own admin API on the
//   port +2, takes its turns too, so Edge and service compare under the same load; 0: not))
// Prints the table for RESULTS.md; everything it made upstream (`sdkbench.*` flags,
// `edgebench-*` tokens) is removed at the end.
import { spawnSync } from 'node:child_process';
import {
  all304,
  expectStatus,
  FLOOR_TARGETS,
  floorEntry,
  fmt,
  interleavedRounds,
  machine,
  median,
  perRound,
  summary,
  wrkRunner,
  idleCpuPerSecond,
} from '../lib.mjs';
import {
  adminClient,
  cleanUnleash,
  LARGE_COUNT,
  must,
  PROJECT,
  seed,
  unleashSessionClient,
  CLIENT_SPEC_HEADERS,
  DISTINCT_ROWS,
  SCENARIOS,
} from '../sdk/dataset.mjs';
import { startProjectWorker, startTrivialWorker } from '../sdk/miniflare.mjs';

if (spawnSync('wrk', ['--version']).error?.code === 'ENOENT') {
  console.error('This bench drives load with wrk, which is not installed: apt-get install wrk (Debian/Ubuntu) or brew install wrk.');
  process.exit(2);
}
const UPSTREAM = (process.env.EDGE_BENCH_UPSTREAM ?? 'http://127.0.0.1:4242').replace(/\/$/, '');
const ADMIN = process.env.EDGE_BENCH_ADMIN_TOKEN ?? '*:*.unleash-insecure-admin-api-token';
const PORT = Number(process.env.EDGE_BENCH_PORT ?? 9160);
const ROUNDS = Number(process.env.EDGE_BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.EDGE_BENCH_SECONDS ?? 4);
const SLICES = Number(process.env.EDGE_BENCH_SLICES ?? 4);
const SLICE_SECONDS = SECONDS / SLICES;
if (!Number.isInteger(SLICE_SECONDS) || SLICE_SECONDS < 1)
  throw new Error('EDGE_BENCH_SECONDS must be a whole multiple of EDGE_BENCH_SLICES');
const CONNECTIONS = Number(process.env.EDGE_BENCH_CONNECTIONS ?? 16);
const ONLY = process.env.EDGE_BENCH_ONLY ? new Set(process.env.EDGE_BENCH_ONLY.split(',')) : undefined;
const TOKEN_PREFIX = 'edgebench';
const WITH_SERVICE = (process.env.EDGE_BENCH_SERVICE ?? '1') !== '0';

const { wrk, slice } = wrkRunner({ connections: CONNECTIONS, sliceSeconds: SLICE_SECONDS, name: 'edgebench' });

const m = machine();
console.log(`load average before: ${m.loadAvg}`);
const upstreamAdmin = adminClient(UPSTREAM, ADMIN);
await cleanUnleash(upstreamAdmin, TOKEN_PREFIX);
// The data set's constraints use a `region` context field, which Unleash wants to exist.
const madeRegion = (await upstreamAdmin('GET', '/api/admin/context/region')).status === 404;
if (madeRegion) await must(await upstreamAdmin('POST', '/api/admin/context', { name: 'region' }), 201, 200);
const keys = await seed(upstreamAdmin, TOKEN_PREFIX, await unleashSessionClient(UPSTREAM));
// A backend key of the 5-flag frontend key's environment: the Edge answers a frontend key from
// a backend scope of its environment, and EDGE_CLIENT_TOKENS gives it one before any SDK calls.
const clientSmall = (
  await (
    await must(
      await upstreamAdmin('POST', '/api/admin/api-tokens', {
        tokenName: `${TOKEN_PREFIX}-client-small`,
        type: 'client',
        environment: 'development',
        projects: [PROJECT],
      }),
      201,
    )
  ).json()
).secret;

let ours;
let floor;
let service;
try {
  ours = await startProjectWorker({
    port: PORT,
    environment: 'edge',
    vars: { EDGE_UPSTREAM_URL: UPSTREAM, EDGE_CLIENT_TOKENS: `${keys.client},${clientSmall}` },
  });
  const scenarios = SCENARIOS;
  const distinctRows = DISTINCT_ROWS;
  // The Edge has the upstream's flags once its first poll of each scope came back.
  const large = { url: `${ours.base}${scenarios[1].path}`, headers: { authorization: keys.client, ...CLIENT_SPEC_HEADERS } };
  for (let tries = 0; ; tries++) {
    const answer = await expectStatus(large, 200).catch(() => undefined);
    if (answer && JSON.parse(answer.body).features.length === LARGE_COUNT) break;
    if (tries > 120) throw new Error(`the Edge did not serve the ${LARGE_COUNT} flags from ${UPSTREAM}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const bodies = {};
  const requests = { ours: {}, floor: {} };
  const sizes = {};
  for (const scenario of scenarios) {
    const request = { url: `${ours.base}${scenario.path}`, headers: { authorization: keys[scenario.key], ...scenario.headers } };
    const answer = await expectStatus(request, 200);
    if (!answer.etag) throw new Error(`${scenario.id}: the Edge sent no ETag`);
    sizes[scenario.id] = answer.bytes;
    bodies[`/${scenario.id}`] = await floorEntry(request, answer);
    requests.ours[scenario.id] = request;
    requests.ours[`${scenario.id}-304`] = { ...request, headers: { ...request.headers, 'if-none-match': answer.etag } };
  }
  {
    const request = { url: `${ours.base}${distinctRows[1].path.replace('{n}', '1')}`, headers: { authorization: keys.frontendSmall } };
    const answer = await expectStatus(request, 200);
    bodies['/frontend-small'] = await floorEntry(request, answer);
    sizes['frontend-small'] = answer.bytes;
  }
  floor = await startTrivialWorker({ port: PORT + 1, bodies });
  if (WITH_SERVICE) {
    service = await startProjectWorker({ port: PORT + 2 });
    const serviceKeys = await seed(adminClient(service.base, service.token), 'sdkbench');
    requests.service = {};
    for (const scenario of scenarios) {
      const request = {
        url: `${service.base}${scenario.path}`,
        headers: { authorization: serviceKeys[scenario.key], ...scenario.headers },
      };
      const answer = await expectStatus(request, 200);
      requests.service[scenario.id] = request;
      requests.service[`${scenario.id}-304`] = { ...request, headers: { ...request.headers, 'if-none-match': answer.etag } };
    }
    for (const row of distinctRows)
      requests.service[row.id] = { url: `${service.base}${row.path}`, headers: { authorization: serviceKeys[row.key] }, distinct: true };
  }
  for (const scenario of scenarios) {
    const request = { url: `${floor.base}/${scenario.id}`, headers: { authorization: keys[scenario.key], ...scenario.headers } };
    requests.floor[scenario.id] = request;
    requests.floor[`${scenario.id}-304`] = { ...request, headers: { ...request.headers, 'if-none-match': bodies[`/${scenario.id}`].etag } };
  }
  for (const row of distinctRows) {
    requests.ours[row.id] = { url: `${ours.base}${row.path}`, headers: { authorization: keys[row.key] }, distinct: true };
    requests.floor[row.id] = {
      url: `${floor.base}/${row.floor}?userId={n}&sessionId={n}`,
      headers: { authorization: keys[row.key] },
      distinct: true,
    };
  }
  for (const [system, table] of Object.entries(requests))
    for (const [id, request] of Object.entries(table))
      await expectStatus(request, id.endsWith('-304') ? 304 : 200).catch((error) => {
        throw new Error(`${system} ${id}: ${error.message}`);
      });

  const systems = {
    ours: { name: 'ours', ...ours },
    floor: { name: 'floor', ...floor },
    ...(service ? { service: { name: 'service', ...service } } : {}),
  };
  const ids = [...scenarios.flatMap((s) => [s.id, `${s.id}-304`]), ...distinctRows.map((row) => row.id)].filter(
    (id) => !ONLY || ONLY.has(id),
  );
  for (const id of ids)
    for (const system of Object.keys(systems)) wrk(requests[system][id].url, requests[system][id].headers, requests[system][id].distinct);
  const idle = await idleCpuPerSecond(systems);
  const { samples, loadAverages } = await interleavedRounds({
    systems,
    requests,
    ids,
    rounds: ROUNDS,
    slices: SLICES,
    runSlice: async (system, id, request) => slice(systems[system], request),
    check(system, id, result) {
      if (id.endsWith('-304') && !all304(result))
        throw new Error(`${system} ${id}: ${fmt(result.bytesPerRequest, 0)} bytes per response; not 304s`);
    },
  });

  const labelOf = (id) => {
    const row = distinctRows.find((r) => r.id === id);
    if (row) return `${row.label} (200)`;
    const scenario = scenarios.find((s) => id.startsWith(s.id));
    return `${scenario.label}${id.endsWith('-304') ? ', If-None-Match (304)' : ' (200)'}`;
  };
  const rows = ids.map((id) => {
    const o = summary(samples, 'ours', id);
    const f = summary(samples, 'floor', id);
    const ofFloor = median(perRound(samples, id, 'ours', 'floor', (r) => r.rps));
    const floorCpuShare = median(perRound(samples, id, 'floor', 'ours', (r) => r.cpuMsPerRequest));
    const target = FLOOR_TARGETS[id];
    const met = target === undefined || ofFloor >= target;
    const sv = summary(samples, 'service', id);
    const serviceShare = median(perRound(samples, id, 'service', 'ours', (r) => r.cpuMsPerRequest));
    const serviceCells = service ? ` ${sv ? fmt(sv.cpu, 3) : '—'} | ${fmt(serviceShare * 100, 0)} % |` : '';
    return `| ${labelOf(id)} | ${fmt(o.rps, 0)} | ${fmt(o.cpu, 3)} | ${fmt(o.perCpu, 0)} | ${fmt(o.p99, 2)} | ${fmt(f.rps, 0)} | ${fmt(f.cpu, 3)} | ${fmt(floorCpuShare * 100, 0)} % | ${fmt(ofFloor * 100, 0)} %${target === undefined ? '' : ` (≥ ${target * 100} %)`} | ${met ? 'yes' : '**no**'} |${serviceCells}`;
  });
  const roundRows = ids.map(
    (id) =>
      `${labelOf(id)}: ${perRound(samples, id, 'ours', 'floor', (r) => r.rps)
        .map((ratio) => `${fmt(ratio * 100, 0)} %`)
        .join(' / ')}`,
  );
  const upstreamVersion = (await (await upstreamAdmin('GET', '/api/admin/ui-config')).json()).version;
  console.log(`
- Date: ${m.date}; upstream Unleash ${upstreamVersion} on ${UPSTREAM}.
- Machine: ${m.cpu}, ${m.memoryGiB} GiB RAM, Node ${m.node}; load average before ${m.loadAvg}; at the start of each round ${loadAverages.join(' / ')}.
- \`wrk -t1 -c${CONNECTIONS}\`, ${SECONDS} s per system, scenario and round in ${SLICES} slices; ${ROUNDS} rounds; idle CPU ms per second: ${Object.entries(
    idle,
  )
    .map(([name, ms]) => `${name} ${fmt(ms, 1)}`)
    .join(', ')}.
- Sizes: client ~2 kB ${sizes['client-small']} B, client ~100 kB ${sizes['client-large']} B, frontend ${sizes.frontend} B, frontend 5 flags ${sizes['frontend-small']} B.

| Scenario | Edge rps | Edge CPU ms/req | Edge rps per CPU s | Edge p99 ms | floor rps | floor CPU ms/req | floor CPU ÷ Edge CPU | Edge rps % of floor (target) | target met |${service ? ' service CPU ms/req | service CPU ÷ Edge CPU |' : ''}
|---|---|---|---|---|---|---|---|---|---|${service ? '---|---|' : ''}
${rows.join('\n')}

"Edge rps % of floor" in each round: ${roundRows.join('; ')}.
`);
} finally {
  await floor?.stop().catch(() => {});
  await ours?.stop().catch(() => {});
  await service?.stop().catch(() => {});
  await cleanUnleash(upstreamAdmin, TOKEN_PREFIX).catch((error) => console.error('cleaning upstream failed', error));
  if (madeRegion) await upstreamAdmin('DELETE', '/api/admin/context/region').catch(() => {});
}
