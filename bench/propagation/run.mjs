// Propagation benchmark: how long after a flag write is answered its SSE event reaches a
// streaming client, in the writer's own process and in a second process, before and after the
// change feed, in one run; and how many D1 round trips an idle process with open streams makes
// per minute. Results go in bench/propagation/RESULTS.md by hand (with `uptime`).
//
//   npx node bench/propagation/run.mjs [--before <commit>] [--writes 20] [--idle-seconds 60]
//
// Ports 9730-9731 (inspectors 9740-9741), or PROPAGATION_PORT for the first of them.
import { performance } from 'node:perf_hooks';
import { rmSync } from 'node:fs';
import os from 'node:os';
import { checkoutOf, d1Calls, openStream, startPair } from './workers.mjs';

const args = process.argv.slice(2);
function option(name, fallback) {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : fallback;
}
const BEFORE = option('before', '59cc7db');
const WRITES = Number(option('writes', '20'));
const IDLE_SECONDS = Number(option('idle-seconds', '60'));
const PORT = Number(process.env.PROPAGATION_PORT ?? 9730);
const IDLE_STREAMS = 4;

function percentile(values, p) {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForUpdate(events, from, timeoutMs) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const found = events.slice(from).find((event) => event.event === 'unleash-updated');
    if (found) return found;
    if (performance.now() > deadline) return null;
    await sleep(2);
  }
}

async function measure(label, root) {
  const pair = await startPair({ root, ports: [PORT, PORT + 1], inspectorPorts: [PORT + 10, PORT + 11] });
  const admin = (method, path, body) =>
    fetch(`${pair.a}${path}`, {
      method,
      headers: { authorization: pair.token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  try {
    const created = await admin('POST', '/api/admin/api-tokens', { tokenName: 'propagation', type: 'backend', environment: 'development' });
    const key = (await created.json()).secret;
    await admin('POST', '/api/admin/projects/default/features', { name: 'bench.push' });
    const same = [];
    const other = [];
    const streams = [
      await openStream(pair.a, key, (event) => same.push(event)),
      await openStream(pair.b, key, (event) => other.push(event)),
    ];
    await sleep(2000);
    const sameMs = [];
    const otherMs = [];
    const missed = { same: 0, other: 0 };
    // Locally both processes share one SQLite file: a write can fail with SQLITE_BUSY (500).
    let failedWrites = 0;
    for (let write = 0; write < WRITES; write++) {
      const fromSame = same.length;
      const fromOther = other.length;
      const response = await admin(
        'POST',
        `/api/admin/projects/default/features/bench.push/environments/development/${write % 2 === 0 ? 'on' : 'off'}`,
      );
      await response.arrayBuffer();
      const answered = performance.now();
      if (response.status !== 200) {
        failedWrites++;
        await sleep(300 + Math.random() * 700);
        continue;
      }
      const [inSame, inOther] = await Promise.all([waitForUpdate(same, fromSame, 12_000), waitForUpdate(other, fromOther, 12_000)]);
      if (inSame) sameMs.push(inSame.at - answered);
      else missed.same++;
      if (inOther) otherMs.push(inOther.at - answered);
      else missed.other++;
      // Writes come at random moments relative to any tick.
      await sleep(300 + Math.random() * 700);
    }
    // Idle: no writes, streams open on B.
    for (let extra = 1; extra < IDLE_STREAMS; extra++) streams.push(await openStream(pair.b, key, () => undefined));
    await sleep(5000);
    const before = await d1Calls(pair.b);
    await sleep(IDLE_SECONDS * 1000);
    const after = await d1Calls(pair.b);
    for (const stream of streams) stream.close();
    const summary = (values) => ({
      n: values.length,
      p50: Math.round(percentile(values, 50)),
      p95: Math.round(percentile(values, 95)),
      max: Math.round(Math.max(...values)),
    });
    return {
      label,
      raw: { same: sameMs.map(Math.round), other: otherMs.map(Math.round) },
      sameProcess: summary(sameMs),
      otherProcess: summary(otherMs),
      missed,
      failedWrites,
      idleD1PerMinute: Math.round(((after - before) * 60) / IDLE_SECONDS),
    };
  } finally {
    await pair.stop();
  }
}

const beforeRoot = checkoutOf(BEFORE);
const results = [];
try {
  console.log(
    `load before: ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}`,
  );
  results.push(await measure(`before (${BEFORE})`, beforeRoot));
  console.log(JSON.stringify(results.at(-1)));
  results.push(await measure('after (this checkout)', undefined));
  console.log(JSON.stringify(results.at(-1)));
  console.log(
    `load after: ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}`,
  );
} finally {
  if (beforeRoot !== null) rmSync(beforeRoot, { recursive: true, force: true });
}
console.log(
  '\n| build | same process p50 / p95 / max (ms) | other process p50 / p95 / max (ms) | missed (12 s), same / other | writes failed | D1 round trips / min, idle, 4 streams |',
);
console.log('|---|---|---|---|---|---|');
for (const row of results) {
  console.log(
    `| ${row.label} | ${row.sameProcess.p50} / ${row.sameProcess.p95} / ${row.sameProcess.max} | ${row.otherProcess.p50} / ${row.otherProcess.p95} / ${row.otherProcess.max} | ${row.missed.same} / ${row.missed.other} | ${row.failedWrites} | ${row.idleD1PerMinute} |`,
  );
}
