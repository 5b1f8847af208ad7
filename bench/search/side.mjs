// `npm run bench -- search --against <commit>`: feature search on the same 10k flags in this
// checkout, in that commit (built beside it) and in a real Unleash (UNLEASH_URL: a private copy
// of the 6.10.1 oracle, see bench/side-by-side.mjs), timed in one run. In each round every
// scenario gives each system a turn of SEARCH_BENCH_REQUESTS sequential requests, who goes
// first moving on every turn, so the machine's load falls on all of them alike. Each figure is
// over all rounds; each ratio is taken round by round (p50 against p50 of the same round) and
// shown as the median with its spread. Target (issue 44): Unleash's p50 ÷ ours ≥ 20.
//
// Env: SEARCH_BENCH_FLAGS (10000), SEARCH_BENCH_ROUNDS (5), SEARCH_BENCH_REQUESTS (10),
// SEARCH_BENCH_PORT (8810; the other commit +1). Writes the top of bench/search/RESULTS.md.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, fmt, machine, median } from '../lib.mjs';
import { importBody, p50, p95, ratioText, rotated, startSystems, writeResultsPart } from '../side-by-side.mjs';
import { SIDE_PREFIX, importBodies } from './seed.mjs';

const FLAGS = Number(process.env.SEARCH_BENCH_FLAGS ?? 10_000);
const ROUNDS = Number(process.env.SEARCH_BENCH_ROUNDS ?? 5);
const REQUESTS = Number(process.env.SEARCH_BENCH_REQUESTS ?? 10);
const PORT = Number(process.env.SEARCH_BENCH_PORT ?? 8810);
const TARGET = 20;
/** Refused by query validation, after authentication, before any D1 read. */
const FLOOR_QUERY = 'limit=abc';

const SCENARIOS = [
  ['no filter', ''],
  ['query (name)', 'query=00123'],
  ['tag filter', 'tag=INCLUDE:simple:tag-7'],
  ['type', 'type=IS:release'],
  ['sortBy=name desc', 'sortBy=name&sortOrder=desc'],
  ['deep offset', `offset=${Math.floor(FLAGS * 0.9)}`],
  ['env sort', 'sortBy=environment:development&sortOrder=desc'],
  // The Unleash UI's flag list as it opens. No favourites are seeded: Unleash 6.10.1 refuses to
  // store one for an admin token (500, no user id), so the favourites walk finds none here. It
  // answers this search 500 too (its favourites join needs a user), so it is not timed on it.
  ['UI default', 'project=IS:default&sortBy=createdAt&sortOrder=desc&favoritesFirst=true&limit=25', { unleash: false }],
  ['type + tag + sort', 'type=IS:release&tag=INCLUDE:simple:tag-5&sortBy=name'],
];

/** The systems a scenario times: all, but Unleash only where it answers the admin token. */
const systemsOf = (scenario, names) => names.filter((name) => name !== 'unleash' || scenario[2]?.unleash !== false);

const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const loadBefore = uptime();
const { systems, build, stop } = await startSystems(PORT);
const names = Object.keys(systems);
const samples = {};
const turns = {};
const totals = {};
const seeding = {};
try {
  // The same import requests on every system; a server that already has them (a private
  // Unleash seeded by an earlier run) keeps them.
  const bodies = importBodies(FLAGS);
  for (const name of names) {
    const system = systems[name];
    const has = await (await system.admin('GET', `/api/admin/search/features?query=${SIDE_PREFIX}&limit=1`)).json();
    if (has.total === FLAGS) {
      console.log(`${system.name}: already has the ${FLAGS} flags`);
      continue;
    }
    if (has.total > 0) throw new Error(`${system.name} has ${has.total} ${SIDE_PREFIX} flags, not ${FLAGS}: clean it first`);
    let ms = 0;
    for (const body of bodies) ms += await importBody(system, body);
    seeding[name] = ms / 1000;
    console.log(`${system.name}: imported ${FLAGS} flags in ${fmt(ms / 1000, 1)} s`);
  }
  const urlOf = (name, query) => `${systems[name].base}/api/admin/search/features${query ? `?${query}` : ''}`;
  const get = async (name, query) => {
    const response = await systems[name].admin('GET', urlOf(name, query).slice(systems[name].base.length));
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${systems[name].name} ${query}: ${response.status} ${text.slice(0, 300)}`);
    return text;
  };
  for (const scenario of SCENARIOS) {
    const [label, query] = scenario;
    for (const name of systemsOf(scenario, names)) {
      const body = JSON.parse(await get(name, query));
      (totals[label] ??= {})[name] = `${body.total}/${body.features.length}`;
      for (let i = 0; i < 3; i++) await get(name, query);
    }
    console.log(`${label}: total/page ${JSON.stringify(totals[label])}`);
  }
  const loads = [];
  // The floor, per round: the same request path (Miniflare's HTTP server, rate limit, admin-key
  // authentication, routing, query validation) answered 400 before any D1 read. No search can
  // be cheaper, so Unleash's p50 over this one bounds the ratio any build could reach here.
  // And the same path with one trivial D1 statement (`GET /api/admin/tag-types`: one SELECT of
  // a table of a few rows), which every search needs at least once.
  const floor = [];
  const floorD1 = [];
  const floorTurn = async (path, status) => {
    const times = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      const response = await systems.ours.admin('GET', path);
      await response.arrayBuffer();
      if (response.status !== status) throw new Error(`floor probe ${path}: ${response.status}, not ${status}`);
      times.push(performance.now() - t0);
    }
    return p50(times);
  };
  for (let round = 0; round < ROUNDS; round++) {
    loads.push(machine().loadAvg);
    floor.push(await floorTurn(`/api/admin/search/features?${FLOOR_QUERY}`, 400));
    floorD1.push(await floorTurn('/api/admin/tag-types', 200));
    for (const scenario of SCENARIOS)
      for (const name of systemsOf(scenario, names)) {
        const [label] = scenario;
        ((samples[label] ??= {})[name] ??= []).push([]);
        ((turns[label] ??= {})[name] ??= []).push({ requests: 0, ms: 0 });
      }
    for (const [index, scenario] of SCENARIOS.entries()) {
      const [label, query] = scenario;
      for (const name of rotated(systemsOf(scenario, names), round + index)) {
        const times = samples[label][name][round];
        const started = performance.now();
        for (let i = 0; i < REQUESTS; i++) {
          const t0 = performance.now();
          await get(name, query);
          times.push(performance.now() - t0);
        }
        turns[label][name][round] = { requests: REQUESTS, ms: performance.now() - started };
      }
      console.log(
        `round ${round + 1} ${label}: ${systemsOf(scenario, names)
          .map((name) => `${name} p50 ${fmt(p50(samples[label][name][round]), 1)} ms`)
          .join(', ')}`,
      );
    }
  }

  // ---------------------------------------------------------------------------------------
  const all = (label, name) => samples[label][name].flat();
  const throughput = (label, name) => {
    const list = turns[label][name];
    return list.reduce((sum, t) => sum + t.requests, 0) / (list.reduce((sum, t) => sum + t.ms, 0) / 1000);
  };
  // Round by round: `slower` p50 ÷ `faster` p50 (above 1: the first named is faster).
  const speedup = (label, faster, slower) => samples[label][faster].map((times, round) => p50(samples[label][slower][round]) / p50(times));
  const has = (name) => names.includes(name);
  const previousLabel = build?.label;
  const header = [
    'scenario',
    'query string',
    'total/page (this, ' + [previousLabel, has('unleash') && 'Unleash'].filter(Boolean).join(', ') + ')',
    'this p50 / p95 ms',
    'this req/s',
    ...(has('previous') ? [`${previousLabel} p50 / p95 ms`, `${previousLabel} req/s`, `this ÷ ${previousLabel} (p50 speedup)`] : []),
    ...(has('unleash')
      ? [
          'Unleash p50 / p95 ms',
          'Unleash req/s',
          'Unleash p50 ÷ this p50',
          `≥ ${TARGET}×`,
          'Unleash p50 ÷ floor p50 (no D1)',
          'Unleash p50 ÷ floor p50 (one D1 statement: the most reachable)',
        ]
      : []),
  ];
  const rows = SCENARIOS.map((scenario) => {
    const [label, query] = scenario;
    const cells = [
      label,
      `\`${query || '(none)'}\``,
      names.map((name) => totals[label][name] ?? 'n/a').join(', '),
      `${fmt(p50(all(label, 'ours')), 1)} / ${fmt(p95(all(label, 'ours')), 1)}`,
      fmt(throughput(label, 'ours'), 0),
    ];
    if (has('previous'))
      cells.push(
        `${fmt(p50(all(label, 'previous')), 1)} / ${fmt(p95(all(label, 'previous')), 1)}`,
        fmt(throughput(label, 'previous'), 0),
        ratioText(speedup(label, 'ours', 'previous')),
      );
    if (has('unleash') && !systemsOf(scenario, names).includes('unleash')) {
      cells.push('n/a: Unleash 6.10.1 answers 500 (favourites need a user; this is an admin token)', '', '', '', '', '');
    } else if (has('unleash')) {
      const ratios = speedup(label, 'ours', 'unleash');
      cells.push(
        `${fmt(p50(all(label, 'unleash')), 1)} / ${fmt(p95(all(label, 'unleash')), 1)}`,
        fmt(throughput(label, 'unleash'), 1),
        ratioText(ratios),
        median(ratios) >= TARGET ? 'yes' : '**no**',
        ratioText(samples[label].unleash.map((times, round) => p50(times) / floor[round])),
        ratioText(samples[label].unleash.map((times, round) => p50(times) / floorD1[round])),
      );
    }
    return `| ${cells.join(' | ')} |`;
  });
  const info = machine();
  const text = `# Feature search: this build, ${[previousLabel, has('unleash') && 'Unleash 6.10.1'].filter(Boolean).join(' and ') || 'alone'} in one run

\`npm run bench -- search --against ${previousLabel ?? '<commit>'}\` with \`UNLEASH_URL\` set (bench/search/side.mjs). **Target (issue 44): search p50 at least ${TARGET}× faster than Unleash's.**

- Date: ${info.date}. Machine: ${info.cpu}, ${info.memoryGiB} GiB RAM, Node ${info.node}; the 2 cores shared with other agents' work. \`uptime\` before: \`${loadBefore}\`; after: \`${uptime()}\`; load average at the start of each round: ${loads.join(' / ')}.
- Systems: this checkout and ${build ? `${build.label} (\`${build.commit}\`, built beside it with \`git worktree add\`)` : 'no other build'}, each served by Miniflare's own HTTP server (no wrangler dev proxy) with fresh local D1 (migrations applied), as bench/sdk serves them; ${has('unleash') ? `Unleash 6.10.1 at ${systems.unleash.base} (a private copy of the oracle on its own database; Node 20, PostgreSQL 15 on this machine)` : 'Unleash not timed (UNLEASH_URL unset)'}.
- Data: the same ${FLAGS} flags on every system, imported through \`POST /api/admin/features-batch/import\` in requests of 400 (bench/search/seed.mjs \`importBodies\`): 5 types, a description, one flexibleRollout strategy in development (enabled there for 1 in 3), one of 20 \`simple\` tags.${
    Object.keys(seeding).length > 0
      ? ` Seeding took ${Object.entries(seeding)
          .map(([name, s]) => `${systems[name].name} ${fmt(s, 1)} s`)
          .join(', ')}.`
      : ''
  }
- Timing: ${ROUNDS} rounds after 3 untimed requests per system and scenario; in each round each scenario gives each system a turn of ${REQUESTS} sequential \`GET /api/admin/search/features\` (admin token, one kept-alive connection, full body read), who goes first moving on every turn. p50/p95 over all ${ROUNDS * REQUESTS} requests; req/s is requests over the time of its turns (one at a time). Ratios are taken round by round (p50 against the other's p50 of the same round): the median, with the lowest–highest round in brackets.
- Floor: at the start of each round, ${REQUESTS} \`GET /api/admin/search/features?${FLOOR_QUERY}\` to this build (the whole request path, answered 400 by validation before any D1 read): p50 per round ${floor.map((value) => fmt(value, 1)).join(' / ')} ms; then 10 \`GET /api/admin/tag-types\` (the same path and one trivial D1 statement, which every search needs at least once): ${floorD1.map((value) => fmt(value, 1)).join(' / ')} ms. The last two columns divide Unleash's p50 by them, round by round: what a search costing nothing beyond the request (and that one statement) would reach.
- "total/page": the \`total\` each answered and the flags on its page; where Unleash's differ, it matches differently (noted below).

| ${header.join(' | ')} |
|${header.map(() => '---').join('|')}|
${rows.join('\n')}
`;
  writeResultsPart(path.join(ROOT, 'bench', 'search', 'RESULTS.md'), 'above', text);
  console.log(text);
} finally {
  await stop();
}
