// Propagation benchmark: how long after a flag write is answered its SSE event reaches a
// streaming client, in the writer's own process and in a second process, for several builds
// in one run; and how many D1 round trips an idle process with open streams makes per minute.
// Every build runs at once (its own pair of `wrangler dev`) and the writes are interleaved:
// round by round, one write to each build, in an order that rotates, so that load swings on
// this shared machine hit every build alike. Results go in bench/propagation/RESULTS.md by hand
// (with `uptime`).
//
//   npx node bench/propagation/run.mjs [--build label=commit[,VAR=value...]]... [--writes 20] [--idle-seconds 60]
//
// `commit` is a commit to build from `git archive`, or `.` for this checkout; the default builds
// are `before=main` and `after=.`. Ports: two per build from PROPAGATION_PORT (default 9730);
// inspectors on ports the system picks.
import { performance } from 'node:perf_hooks';
import { rmSync } from 'node:fs';
import os from 'node:os';
import { checkoutOf, d1Calls, openStream, startPair } from './workers.mjs';

const args = process.argv.slice(2);
function option(name, fallback) {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : fallback;
}
function options(name) {
  return args.flatMap((arg, index) => (arg === `--${name}` ? [args[index + 1]] : []));
}
const BUILDS = (options('build').length > 0 ? options('build') : ['before=main', 'after=.']).map((spec) => {
  const equals = spec.indexOf('=');
  const label = spec.slice(0, equals);
  const [commit, ...settings] = spec.slice(equals + 1).split(',');
  const vars = Object.fromEntries(
    settings.map((setting) => [setting.slice(0, setting.indexOf('=')), setting.slice(setting.indexOf('=') + 1)]),
  );
  return { label, commit, vars };
});
const WRITES = Number(option('writes', '20'));
const IDLE_SECONDS = Number(option('idle-seconds', '60'));
const PORT = Number(process.env.PROPAGATION_PORT ?? 9730);
const IDLE_STREAMS = 4;

function percentile(values, p) {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () =>
  os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

async function waitForUpdate(events, from, timeoutMs) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const found = events.slice(from).find((event) => event.event === 'unleash-updated');
    if (found) return found;
    if (performance.now() > deadline) return null;
    await sleep(2);
  }
}

/** Opens a stream, again after a 500 (locally, SQLITE_BUSY while the other process writes the shared file). */
async function openStreamRetrying(base, key, onEvent) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await openStream(base, key, onEvent);
    } catch (error) {
      if (attempt === 5) throw error;
      await sleep(200);
    }
  }
}

/** Starts a build's pair, with a backend key, the flag and one stream in each process; `started` gets what to clean up. */
async function setUp(build, index, started) {
  const root = build.commit === '.' ? undefined : checkoutOf(build.commit);
  if (root !== undefined) started.push({ root });
  const pair = await startPair({ root, ports: [PORT + 2 * index, PORT + 2 * index + 1], inspectorPorts: [0, 0], vars: build.vars });
  started.push({ pair });
  const admin = (method, path, body) =>
    fetch(`${pair.a}${path}`, {
      method,
      headers: { authorization: pair.token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const created = await admin('POST', '/api/admin/api-tokens', { tokenName: 'propagation', type: 'backend', environment: 'development' });
  const key = (await created.json()).secret;
  await admin('POST', '/api/admin/projects/default/features', { name: 'bench.push' });
  const same = [];
  const other = [];
  const streams = [
    await openStreamRetrying(pair.a, key, (event) => same.push(event)),
    await openStreamRetrying(pair.b, key, (event) => other.push(event)),
  ];
  started.push({ streams });
  return {
    ...build,
    root,
    pair,
    admin,
    key,
    same,
    other,
    streams,
    sameMs: [],
    otherMs: [],
    missed: { same: 0, other: 0 },
    failedWrites: 0,
  };
}

/** One write to the build's process A; the time from its answer to the event on each stream. */
async function writeOnce(run, write) {
  const fromSame = run.same.length;
  const fromOther = run.other.length;
  const response = await run.admin(
    'POST',
    `/api/admin/projects/default/features/bench.push/environments/development/${write % 2 === 0 ? 'on' : 'off'}`,
  );
  await response.arrayBuffer();
  const answered = performance.now();
  // Locally both processes share one SQLite file: a write can fail with SQLITE_BUSY (500).
  if (response.status !== 200) {
    run.failedWrites++;
    return;
  }
  const [inSame, inOther] = await Promise.all([waitForUpdate(run.same, fromSame, 12_000), waitForUpdate(run.other, fromOther, 12_000)]);
  if (inSame) run.sameMs.push(inSame.at - answered);
  else run.missed.same++;
  if (inOther) run.otherMs.push(inOther.at - answered);
  else run.missed.other++;
}

const summary = (values) =>
  values.length === 0
    ? { n: 0, p50: NaN, p95: NaN, max: NaN }
    : {
        n: values.length,
        p50: Math.round(percentile(values, 50)),
        p95: Math.round(percentile(values, 95)),
        max: Math.round(Math.max(...values)),
      };

const runs = [];
/** Everything started, in order, for the cleanup: checkouts, pairs and streams. */
const started = [];
try {
  console.log(`load before: ${load()}`);
  for (const [index, build] of BUILDS.entries()) runs.push(await setUp(build, index, started));
  await sleep(2000);
  console.log(`load at the first write: ${load()}`);
  for (let write = 0; write < WRITES; write++) {
    for (let turn = 0; turn < runs.length; turn++) {
      await writeOnce(runs[(write + turn) % runs.length], write);
      // Writes come at random moments relative to any tick.
      await sleep(300 + Math.random() * 700);
    }
  }
  console.log(`load after the writes: ${load()}`);
  // Idle: no writes, streams open on every B at the same time.
  for (const run of runs) {
    for (let extra = 1; extra < IDLE_STREAMS; extra++) run.streams.push(await openStreamRetrying(run.pair.b, run.key, () => undefined));
  }
  await sleep(5000);
  const idleBefore = await Promise.all(runs.map((run) => d1Calls(run.pair.b)));
  await sleep(IDLE_SECONDS * 1000);
  const idleAfter = await Promise.all(runs.map((run) => d1Calls(run.pair.b)));
  console.log(`load after idling: ${load()}`);
  for (const [index, run] of runs.entries()) {
    run.idleD1PerMinute = Math.round(((idleAfter[index] - idleBefore[index]) * 60) / IDLE_SECONDS);
    console.log(
      JSON.stringify({
        label: run.label,
        commit: run.commit,
        vars: run.vars,
        raw: { same: run.sameMs.map(Math.round), other: run.otherMs.map(Math.round) },
        missed: run.missed,
        failedWrites: run.failedWrites,
        idleD1PerMinute: run.idleD1PerMinute,
      }),
    );
  }
  console.log(
    '\n| build | same process p50 / p95 / max (ms) | other process p50 / p95 / max (ms) | missed (12 s), same / other | writes failed | D1 round trips / min, idle, 4 streams |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const run of runs) {
    const same = summary(run.sameMs);
    const other = summary(run.otherMs);
    console.log(
      `| ${run.label} | ${same.p50} / ${same.p95} / ${same.max} | ${other.p50} / ${other.p95} / ${other.max} | ${run.missed.same} / ${run.missed.other} | ${run.failedWrites} | ${run.idleD1PerMinute} |`,
    );
  }
} finally {
  for (const { streams } of started) for (const stream of streams ?? []) stream.close();
  for (const { pair } of started) await pair?.stop();
  for (const { root } of started) if (root !== undefined) rmSync(root, { recursive: true, force: true });
}
