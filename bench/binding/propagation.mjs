// Cross-isolate propagation to the binding: how long after a flag write is answered in one
// Worker process another process's binding answers the new state, against its HTTP
// (`GET /api/frontend`) in that same process, for this checkout and another commit in one run.
//
//   npx node bench/binding/propagation.mjs [--against <commit, default 4091c6e>] [--writes 20]
//
// Each build runs as a pair of `wrangler dev` on one persisted state (bench/propagation/workers.mjs):
// A takes the writes, B runs the service with a probe Worker beside it (bench/binding/probe.mjs)
// calling it as another Worker of the account would. Both builds run at once, default settings
// (SDK_REVISION_CHECK_MS 1 s), and the writes are interleaved between them, in an order that
// rotates, so that load swings on this shared machine hit both alike. Throughout, two loops poll
// B one request after another, as steady traffic would (the revision tick is lazy: polling only
// after a write would always find a fresh read due): one through the binding, one through HTTP;
// for each write, the time from its answer to the first answer of the new state on each path
// (5 s at most: then "missed"; negative: seen before the write's answer was read). Both loops
// run in B's one isolate (the binding listening helps HTTP in that isolate too).
// Ports: four from BINDING_PROPAGATION_PORT (9320). Writes the section of bench/binding/RESULTS.md after the marker below.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { BINDING_PROPAGATION_MARKER as MARKER, machine, ROOT } from '../lib.mjs';
import { checkoutOf, startPair } from '../propagation/workers.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback);
const AGAINST = option('against', '4091c6e');
const WRITES = Number(option('writes', '20'));
const PORT = Number(process.env.BINDING_PROPAGATION_PORT ?? 9320);
const TIMEOUT_MS = 5000;
const FLAG = 'bench.binding.propagation';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const loadNow = () =>
  os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

function percentile(values, p) {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function setUp(build, index, started) {
  const root = build.commit === '.' ? undefined : checkoutOf(build.commit);
  if (root !== undefined) started.push({ root });
  const pair = await startPair({ root, ports: [PORT + 2 * index, PORT + 2 * index + 1], inspectorPorts: [0, 0], probe: true });
  started.push({ pair });
  const admin = async (method, pathname, body) => {
    const response = await fetch(`${pair.a}${pathname}`, {
      method,
      headers: { authorization: pair.token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${build.label}: ${method} ${pathname} answered ${response.status}`);
    return response.json().catch(() => null);
  };
  const { secret } = await admin('POST', '/api/admin/api-tokens', {
    tokenName: 'bench-binding',
    type: 'frontend',
    environment: 'development',
  });
  await admin('POST', '/api/admin/projects/default/features', { name: FLAG });
  await admin('POST', `/api/admin/projects/default/features/${FLAG}/environments/development/strategies`, { name: 'default' });
  const probe = async (way) => {
    const response = await fetch(`${pair.b}/probe/${way}?flag=${FLAG}`, { headers: { authorization: secret } });
    if (!response.ok) throw new Error(`${build.label}: probe ${way} answered ${response.status}`);
    return (await response.json()).enabled;
  };
  // Both paths warm (snapshot read, key known) before the first write.
  await probe('binding');
  await probe('http');
  return { ...build, admin, probe, on: false, times: { binding: [], http: [] }, missed: { binding: 0, http: 0 }, failed: 0 };
}

/**
 * Polls one path of B one request after another for the whole run, as steady traffic would
 * (the revision tick is lazy: an isolate that was idle reads the revision on its next call, so
 * polling only after a write would always look fresh), and notes when the answer flips.
 */
function watch(build, way) {
  const state = { value: false, flips: [], stopped: false };
  state.done = (async () => {
    while (!state.stopped) {
      let answer;
      try {
        answer = await build.probe(way);
      } catch {
        answer = undefined; // a 500 (SQLITE_BUSY on the shared local file): poll again
      }
      if (answer !== undefined && answer !== state.value) {
        state.value = answer;
        state.flips.push({ value: answer, at: performance.now() });
      }
      await sleep(5);
    }
  })();
  return state;
}

/** When the watched path first answered `enabled` after `sentAt`: ms after the write's answer, or null past the timeout. */
async function seenAfter(state, enabled, sentAt, answeredAt) {
  for (;;) {
    const flip = state.flips.find((entry) => entry.value === enabled && entry.at >= sentAt);
    if (flip) return flip.at - answeredAt;
    if (performance.now() - answeredAt > TIMEOUT_MS) return null;
    await sleep(2);
  }
}

const builds = [
  { label: 'before', commit: AGAINST },
  { label: 'after', commit: '.' },
];
const started = [];
const loads = [`start ${loadNow()}`];
let running = [];
try {
  // One pair after the other: four wrangler dev starting at once on a loaded machine time out.
  for (const [index, build] of builds.entries()) running.push(await setUp(build, index, started));
  for (const build of running) build.watchers = { binding: watch(build, 'binding'), http: watch(build, 'http') };
  await sleep(2000);
  loads.push(`first write ${loadNow()}`);
  for (let write = 0; write < WRITES; write++) {
    const order = running.map((_, i) => running[(i + write) % running.length]);
    for (const build of order) {
      const enabled = !build.on;
      const sentAt = performance.now();
      try {
        await build.admin('POST', `/api/admin/projects/default/features/${FLAG}/environments/development/${enabled ? 'on' : 'off'}`);
      } catch {
        build.failed++;
        continue;
      }
      const answeredAt = performance.now();
      build.on = enabled;
      const [binding, http] = await Promise.all(
        ['binding', 'http'].map((way) => seenAfter(build.watchers[way], enabled, sentAt, answeredAt)),
      );
      for (const [way, value] of [
        ['binding', binding],
        ['http', http],
      ]) {
        if (value === null) build.missed[way]++;
        else build.times[way].push(Math.round(value));
      }
      await sleep(300 + Math.random() * 1000);
    }
  }
  loads.push(`end ${loadNow()}`);
} finally {
  for (const build of running) {
    for (const state of Object.values(build.watchers ?? {})) state.stopped = true;
    await Promise.all(Object.values(build.watchers ?? {}).map((state) => state.done));
  }
  for (const entry of started.reverse()) {
    if (entry.pair) await entry.pair.stop();
    if (entry.root) rmSync(entry.root, { recursive: true, force: true });
  }
}

const cell = (values) => (values.length === 0 ? 'n/a' : `${percentile(values, 50)} / ${percentile(values, 95)} / ${Math.max(...values)}`);
const host = machine();
const rows = running.map(
  (build) =>
    `| ${build.label} (${build.commit === '.' ? 'this checkout' : build.commit}) | ${cell(build.times.binding)} | ${cell(build.times.http)} | ${build.missed.binding} / ${build.missed.http} | ${build.failed} |`,
);
const raw = running.map(
  (build) => `- ${build.label}: binding \`${JSON.stringify(build.times.binding)}\`, HTTP \`${JSON.stringify(build.times.http)}\``,
);
const section = `${MARKER}

## Cross-isolate propagation: binding against HTTP

\`npx node bench/binding/propagation.mjs --against ${AGAINST} --writes ${WRITES}\`. Per build, two \`wrangler dev\`
processes on one persisted state: A takes the writes (a flag toggled on and off through its
admin API), B runs the service with a probe Worker beside it that calls it as another Worker
would (bench/binding/probe.mjs: the \`unleashFlags\` helper over the \`UnleashFlags\` binding, or a
fetch of \`GET /api/frontend\`; not POST, which counts as a write and makes the isolate re-read
the revision on its next SDK request, so polling with it would bring every change at once). After each write's answer, one loop polls B's binding and
another B's HTTP, one request after another for the whole run (steady traffic: the tick is lazy);
ms from each write's answer to the first answer of the new state on each path, p50 / p95 / max.
Both builds run at once and the writes alternate between them. Default settings
(\`SDK_REVISION_CHECK_MS\` 1 s). The probe polls both paths in the same isolate of B, so what the
binding's calls do for that isolate (listening to the change feed) serves its HTTP as well.

- Date: ${new Date().toISOString()}
- Machine: ${host.cpu}, ${host.memoryGiB} GiB RAM, Node ${host.node}; 2 cores shared with 7 other helpers' work. Load average (1/5/15 min): ${loads.join('; ')}.

| build | binding p50 / p95 / max (ms) | HTTP \`/api/frontend\` p50 / p95 / max (ms) | missed (${TIMEOUT_MS / 1000} s) binding / HTTP | writes failed |
|---|---|---|---|---|
${rows.join('\n')}

Raw:

${raw.join('\n')}
`;
const resultsPath = path.join(ROOT, 'bench', 'binding', 'RESULTS.md');
const current = readFileSync(resultsPath, 'utf8');
const head = current.includes(MARKER) ? current.slice(0, current.indexOf(MARKER)) : `${current.trimEnd()}\n\n`;
writeFileSync(resultsPath, head + section);
console.log(section);
