// bench/import: end-to-end import of generated features through the Worker under
// `wrangler dev` (port 8792): POST the payload, follow the job's Location until it is
// completed, report features per second. Target: >= 5,000 features/s at 10k and 100k.
//
//   npm run bench -- import            # sizes 1000, 10000, 100000 (`--against <commit>`: side.mjs)
//   SIZES=1000,10000 npm run bench -- import
//
// Each size is one request (the body is streamed, so 100k features = 116 MB is one POST);
// PART=<n> splits it into consecutive requests of n features, which queue behind each other.
// The time runs from the first POST to the last job's completion.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, machine, startWorker } from '../lib.mjs';
import { generate } from './generate.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SIZES = (process.env.SIZES ?? '1000,10000,100000').split(',').map(Number);
const PORT = Number(process.env.IMPORT_BENCH_PORT ?? 8792);
const PART = Number(process.env.PART ?? 100_000);

async function waitFor(base, token, location) {
  for (;;) {
    const job = await (await fetch(new URL(location, base), { headers: { authorization: token } })).json();
    if (job.status === 'completed') return job;
    if (job.status === 'failed') throw new Error(`job failed: ${JSON.stringify(job.errors)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function importOnce(base, token, n, run) {
  const parts = [];
  for (let offset = 0; offset < n; offset += PART) parts.push([offset, Math.min(PART, n - offset)]);
  let bytes = 0;
  let chunks = 0;
  let acceptedMs;
  const statuses = new Set();
  const locations = [];
  const bodies = parts.map(([offset, size]) => JSON.stringify(generate(size, run, offset)));
  const started = performance.now();
  for (const body of bodies) {
    bytes += body.length;
    const response = await fetch(`${base}/api/admin/features-batch/import`, {
      method: 'POST',
      headers: { authorization: token, 'content-type': 'application/json' },
      body,
    });
    statuses.add(response.status);
    if (response.status === 202) {
      locations.push(response.headers.get('location'));
      await response.arrayBuffer();
    } else if (response.status === 200) {
      chunks += 1;
      await response.arrayBuffer();
    } else {
      throw new Error(`import answered ${response.status}: ${(await response.text()).slice(0, 500)}`);
    }
  }
  acceptedMs = performance.now() - started;
  for (const location of locations) chunks += (await waitFor(base, token, location)).totalChunks;
  const totalMs = performance.now() - started;
  // Spot check: the last feature is there with its two strategies (through export).
  const last = `bench-${run}-${String(n - 1).padStart(6, '0')}`;
  const check = await (
    await fetch(`${base}/api/admin/features-batch/export`, {
      method: 'POST',
      headers: { authorization: token, 'content-type': 'application/json' },
      body: JSON.stringify({ features: [last], environment: 'development' }),
    })
  ).json();
  if (check.features.length !== 1 || check.featureStrategies.length !== 2) throw new Error(`spot check failed for ${last}`);
  return {
    n,
    bytes,
    requests: parts.length,
    status: [...statuses].join('/'),
    chunks,
    acceptedMs,
    totalMs,
    featuresPerSecond: n / (totalMs / 1000),
  };
}

const worker = await startWorker({ port: PORT, log: process.env.LOG === '1' });
const results = [];
try {
  let run = 0;
  for (const n of SIZES) {
    run += 1;
    const result = await importOnce(worker.base, worker.token, n, run);
    results.push(result);
    console.log(
      `${n} features: ${(result.bytes / 1e6).toFixed(1)} MB in ${result.requests} request(s), HTTP ${result.status}, ${result.chunks} chunk(s), ` +
        `accepted after ${fmt(result.acceptedMs / 1000, 2)} s, done after ${fmt(result.totalMs / 1000, 2)} s = ${fmt(result.featuresPerSecond, 0)} features/s`,
    );
  }
} finally {
  await worker.stop();
}
const info = machine();
const lines = [
  '| features | body | requests | answer | chunks | all answered after | completed after | features/s |',
  '|---:|---:|---:|---|---:|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| ${r.n.toLocaleString('en')} | ${(r.bytes / 1e6).toFixed(1)} MB | ${r.requests} | ${r.status} | ${r.chunks} | ${fmt(r.acceptedMs / 1000, 2)} s | ${fmt(r.totalMs / 1000, 2)} s | ${fmt(r.featuresPerSecond, 0)} |`,
  ),
];
console.log(`\n${lines.join('\n')}\n\n${JSON.stringify(info)}`);
writeFileSync(path.join(HERE, 'last-run.json'), JSON.stringify({ machine: info, results }, null, 2));
