// `npm run bench -- traffic`: what counting a request for the data-usage page costs on the
// request path (src/admin/traffic-usage/counter.ts `countRequest`), in V8 under Node (the
// engine workerd runs), against the same loop without the call. The counter is bundled with
// esbuild as wrangler bundles it. Prints the figures; RESULTS.md holds a run's.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { machine, ROOT } from '../lib.mjs';

const CALLS = Number(process.env.TRAFFIC_BENCH_CALLS ?? 2_000_000);
const ROUNDS = Number(process.env.TRAFFIC_BENCH_ROUNDS ?? 7);

const dir = mkdtempSync(path.join(os.tmpdir(), 'traffic-bench-'));
const out = path.join(dir, 'counter.mjs');
await build({
  entryPoints: [path.join(ROOT, 'src/admin/traffic-usage/counter.ts')],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  outfile: out,
  logLevel: 'error',
});
const { countRequest } = await import(pathToFileURL(out).href);
rmSync(dir, { recursive: true, force: true });

// The SDK bench's requests: client polls (200 and 304), frontend polls, and a path not counted.
const URLS = [
  'http://127.0.0.1:8806/api/client/features?namePrefix=sdkbench',
  'http://127.0.0.1:8806/api/frontend?appName=bench&environment=default&userId=123&sessionId=417392&properties[region]=eu',
  'http://127.0.0.1:8806/api/client/features',
  'http://127.0.0.1:8806/health',
];
const STATUSES = [200, 304, 200, 200];
// A window never due in the timed loop: no flush, which is one D1 statement per 30 s, not per request.
const env = { TRAFFIC_FLUSH_INTERVAL_MS: String(3_600_000) };
const ctx = { waitUntil() {} };
let sink = 0;

function baseline(n) {
  for (let i = 0; i < n; i++) sink += URLS[i & 3].length + STATUSES[i & 3];
}
function counted(n) {
  for (let i = 0; i < n; i++) {
    sink += URLS[i & 3].length + STATUSES[i & 3];
    countRequest(URLS[i & 3], STATUSES[i & 3], env, ctx);
  }
}
/** CPU time (user + system) per call: on a shared machine wall time mostly measures waiting for a core. */
function time(run) {
  const start = process.cpuUsage();
  run(CALLS);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / CALLS;
}

const m = machine();
baseline(CALLS);
counted(CALLS); // warm-up: both loops optimised before timing
const samples = [];
for (let round = 0; round < ROUNDS; round++) samples.push(time(counted) - time(baseline));
samples.sort((a, b) => a - b);
const median = samples[Math.floor(samples.length / 2)];
console.log(`date ${m.date}; ${m.cpu}, Node ${m.node}; load average ${m.loadAvg}`);
// Calibration: what the machine's load makes of trivial work (about 1 ns and 20-40 ns on a quiet core).
const nowCost = time((n) => {
  for (let i = 0; i < n; i++) sink += Date.now() & 1;
});
console.log(`baseline loop ${time(baseline).toFixed(1)} ns CPU per iteration; Date.now() ${nowCost.toFixed(1)} ns CPU per call`);
console.log(
  `countRequest: median ${median.toFixed(1)} ns CPU per request over ${ROUNDS} rounds of ${CALLS} (spread ${samples[0].toFixed(1)}–${samples.at(-1).toFixed(1)} ns)`,
);
if (sink === 0) console.log('');
