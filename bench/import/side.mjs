// `npm run bench -- import --against <commit>`: the same import in this checkout, in that commit
// (built beside it) and in a real Unleash (UNLEASH_URL: a private copy of the 6.10.1 oracle,
// see bench/side-by-side.mjs), timed in one run. Each round every system imports the same fresh
// payload (generate.mjs: IMPORT_BENCH_FLAGS flags with two constrained strategies, variants and
// two tags each) as consecutive requests of IMPORT_BENCH_CHUNK flags (Unleash takes at most
// 500 kB a body), who goes first moving on every round; then a spot check through export.
//
// Env: IMPORT_BENCH_FLAGS (1000), IMPORT_BENCH_CHUNK (200), IMPORT_BENCH_ROUNDS (3),
// IMPORT_BENCH_PORT (8812; the other commit +1). Writes the top of bench/import/RESULTS.md.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, fmt, machine, median } from '../lib.mjs';
import { must } from '../sdk/dataset.mjs';
import { importBody, p50, p95, ratioText, rotated, startSystems, writeResultsPart } from '../side-by-side.mjs';
import { generate } from './generate.mjs';

const FLAGS = Number(process.env.IMPORT_BENCH_FLAGS ?? 1000);
const CHUNK = Number(process.env.IMPORT_BENCH_CHUNK ?? 200);
const ROUNDS = Number(process.env.IMPORT_BENCH_ROUNDS ?? 3);
const PORT = Number(process.env.IMPORT_BENCH_PORT ?? 8812);

const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const loadBefore = uptime();
const { systems, build, stop } = await startSystems(PORT);
const names = Object.keys(systems);
const results = Object.fromEntries(names.map((name) => [name, []]));
const loads = [];
let bytes = 0;
try {
  // Warm-up, not timed: one request's worth on each system (isolates, statements, Unleash's caches).
  for (const name of names) await importBody(systems[name], generate(CHUNK, `${process.pid}w`, 0));
  for (let round = 0; round < ROUNDS; round++) {
    loads.push(machine().loadAvg);
    // A run name per process and round, so a private Unleash kept between runs never sees a name twice.
    const run = `${process.pid}r${round}`;
    const bodies = [];
    for (let offset = 0; offset < FLAGS; offset += CHUNK) bodies.push(generate(Math.min(CHUNK, FLAGS - offset), run, offset));
    bytes = bodies.reduce((sum, body) => sum + JSON.stringify(body).length, 0);
    for (const name of rotated(names, round)) {
      const system = systems[name];
      const requests = [];
      for (const body of bodies) requests.push(await importBody(system, body));
      const totalMs = requests.reduce((sum, ms) => sum + ms, 0);
      const last = `bench-${run}-${String(FLAGS - 1).padStart(6, '0')}`;
      const check = await (
        await must(await system.importer('POST', '/api/admin/features-batch/export', { features: [last], environment: 'development' }), 200)
      ).json();
      if (check.features.length !== 1 || check.featureStrategies.length !== 2)
        throw new Error(`${system.name}: spot check failed for ${last}`);
      results[name].push({ requests, totalMs, perSecond: FLAGS / (totalMs / 1000) });
      console.log(
        `round ${round + 1} ${system.name}: ${FLAGS} flags in ${fmt(totalMs / 1000, 2)} s = ${fmt(FLAGS / (totalMs / 1000), 0)} flags/s`,
      );
    }
  }

  // ---------------------------------------------------------------------------------------
  const has = (name) => names.includes(name);
  const ratio = (a, b) => results[a].map((r, round) => r.perSecond / results[b][round].perSecond);
  const row = (name) => {
    const list = results[name];
    const all = list.flatMap((r) => r.requests);
    return `| ${systems[name].name} | ${fmt(median(list.map((r) => r.perSecond)), 0)} | ${list.map((r) => fmt(r.perSecond, 0)).join(' / ')} | ${fmt(p50(all), 0)} / ${fmt(p95(all), 0)} | ${has('previous') && name !== 'previous' ? ratioText(ratio(name, 'previous')) : '—'} | ${has('unleash') && name !== 'unleash' ? ratioText(ratio(name, 'unleash')) : '—'} |`;
  };
  const info = machine();
  const other = build?.label ?? 'the other build';
  const text = `# Import: this build, ${[build?.label, has('unleash') && 'Unleash 6.10.1'].filter(Boolean).join(' and ') || 'alone'} in one run

\`npm run bench -- import --against ${build?.label ?? '<commit>'}\` with \`UNLEASH_URL\` set (bench/import/side.mjs).

- Date: ${info.date}. Machine: ${info.cpu}, ${info.memoryGiB} GiB RAM, Node ${info.node}; the 2 cores shared with other agents' work. \`uptime\` before: \`${loadBefore}\`; after: \`${uptime()}\`; load average at the start of each round: ${loads.join(' / ')}.
- Systems: this checkout and ${build ? `${build.label} (\`${build.commit}\`, built beside it with \`git worktree add\`)` : 'no other build'}, each served by Miniflare's own HTTP server with fresh local D1, as bench/sdk serves them; ${has('unleash') ? `Unleash 6.10.1 at ${systems.unleash.base} (a private copy of the oracle on its own database), importing as the signed-in admin (it refuses admin tokens on import)` : 'Unleash not timed (UNLEASH_URL unset)'}.
- Each round, each system in turn (who goes first moves on every round) imports the same ${FLAGS} new flags (generate.mjs: two constrained strategies, one with variants, environment variants, two tags each; ${fmt(bytes / 1e6, 2)} MB of JSON) as ${Math.ceil(FLAGS / CHUNK)} consecutive requests of ${CHUNK} flags into project \`default\`, environment development, every one answered before the next is sent (a 202 is followed to its job's completion); then the last flag is read back through export with its two strategies. ${ROUNDS} rounds, after one untimed request of ${CHUNK} flags on each system; flags/s per round, the median over the rounds; ratios taken round by round, the median with the lowest–highest round in brackets (above 1: the row's system is faster).

| system | flags/s (median) | flags/s per round | request p50 / p95 ms | ÷ ${other} | ÷ Unleash |
|---|---|---|---|---|---|
${names.map(row).join('\n')}
`;
  writeResultsPart(path.join(ROOT, 'bench', 'import', 'RESULTS.md'), 'above', text);
  console.log(text);
} finally {
  await stop();
}
