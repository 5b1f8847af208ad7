// Soak benchmark: the Worker under `wrangler dev` on loopback for SOAK_SECONDS (default 600)
// of mixed traffic at the highest rate the box sustains — admin writes, searches, SDK polls
// with ETags, frontend evaluations, metrics, small and queued imports — then checks that
// every write answered 2xx is in D1, that every SDK payload served matched D1 at its
// revision, and that no request got a 5xx. Writes RESULTS.md next to this file.
//
// "Matched D1 at its revision" is checked two ways. During the run, every SDK body is
// hashed under its ETag (which names the revision): one ETag must never carry two bodies
// (that is what a warm isolate serving an old payload under the new revision would look
// like). Every CHECKPOINT_SECONDS the writers pause, the queued imports drain, and the SDK
// payload is compared with D1 itself, read through SQLite from the persisted state (not
// through the Worker): its revisionId must be D1's highest event id, and every flag's
// enabled state, strategies and description must be D1's. Every body served during the run
// under a checkpoint's ETag is thereby checked against D1 too.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { fmt, machine } from '../lib.mjs';
import { startWorker } from '../sdk/worker.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PORT = Number(process.env.SOAK_PORT ?? 8814);
const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const CHECKPOINT_SECONDS = Number(process.env.SOAK_CHECKPOINT_SECONDS ?? 60);
/** Loops of each kind running side by side. */
const LOOPS = {
  writer: Number(process.env.SOAK_WRITERS ?? 3),
  search: Number(process.env.SOAK_SEARCHERS ?? 1),
  sdk: Number(process.env.SOAK_SDK_POLLERS ?? 3),
  frontend: Number(process.env.SOAK_FRONTEND ?? 2),
  metrics: Number(process.env.SOAK_METRICS ?? 1),
};
/** Seconds between queued imports (2,100 flags: two chunks and the queue). */
const QUEUED_IMPORT_EVERY = Number(process.env.SOAK_QUEUED_IMPORT_SECONDS ?? 60);
const WRITE_RESULTS = process.env.SOAK_WRITE_RESULTS !== '0';

// The code under test is the bundle built now: name its commit (and whether the tree had edits).
const commit = `${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: HERE, encoding: 'utf8' }).trim()}${execFileSync('git', ['status', '--porcelain', '--', '../../src'], { cwd: HERE, encoding: 'utf8' }).trim() ? ' plus uncommitted edits' : ''}`;
const worker = await startWorker({ port: PORT });
const { base, token: adminToken } = worker;

// ---------------------------------------------------------------------------------------
// Counting every request

const stats = new Map(); // kind -> { count, errors5xx, other, latencies[] }
const fiveHundreds = [];
const unexpected = [];

function stat(kind) {
  let entry = stats.get(kind);
  if (!entry) {
    entry = { count: 0, latencies: [] };
    stats.set(kind, entry);
  }
  return entry;
}

async function request(kind, method, url, { token = adminToken, body, headers = {}, expect = [200] } = {}) {
  const started = performance.now();
  let response;
  let text;
  try {
    response = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    text = await response.text();
  } catch (error) {
    unexpected.push({ kind, method, url, status: 'network', error: String(error) });
    return { status: 0, text: '', headers: new Headers() };
  }
  const entry = stat(kind);
  entry.count++;
  entry.latencies.push(performance.now() - started);
  if (response.status >= 500) fiveHundreds.push({ kind, method, url, status: response.status, body: text.slice(0, 300) });
  else if (!expect.includes(response.status)) unexpected.push({ kind, method, url, status: response.status, body: text.slice(0, 300) });
  return { status: response.status, text, headers: response.headers };
}

const ok = (status) => status >= 200 && status < 300;

// ---------------------------------------------------------------------------------------
// Setup: tokens and a starting set of flags

async function apiToken(tokenName, type, projects) {
  const response = await request('setup', 'POST', '/api/admin/api-tokens', {
    body: { tokenName, type, environment: 'development', projects },
    expect: [201],
  });
  return JSON.parse(response.text).secret;
}
const clientToken = await apiToken('soak-client', 'client', ['*']);
const frontendToken = await apiToken('soak-frontend', 'frontend', ['default']);

function importBody(prefix, count, description) {
  const features = [];
  const featureStrategies = [];
  const featureEnvironments = [];
  for (let i = 0; i < count; i++) {
    const name = `${prefix}.${String(i).padStart(4, '0')}`;
    features.push({ name, description });
    if (i % 3 === 0)
      featureStrategies.push({
        name: 'flexibleRollout',
        featureName: name,
        parameters: { rollout: String(i % 101), stickiness: 'default', groupId: name },
      });
    featureEnvironments.push({ name: 'development', featureName: name, enabled: i % 2 === 0 });
  }
  return { project: 'default', environment: 'development', data: { features, featureStrategies, featureEnvironments, tagTypes: [] } };
}
const seeded = await request('setup', 'POST', '/api/admin/features-batch/import', {
  body: importBody('soak.seed', 300, 'seed'),
  expect: [200],
});
if (!ok(seeded.status)) throw new Error(`seed import failed: ${seeded.status} ${seeded.text}`);

// D1, read directly from the persisted state (SQLite in WAL mode: readers never block workerd).
function findSqlite(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const found = findSqlite(full);
      if (found) return found;
    } else if (entry.name.endsWith('.sqlite') && full.includes('D1DatabaseObject')) return full;
  }
  return undefined;
}
const d1 = new DatabaseSync(findSqlite(worker.persistTo), { readOnly: true });

// ---------------------------------------------------------------------------------------
// The ledger of acknowledged writes, checked against D1 at the end

const ledger = {
  created: new Set(), // feature names created through the admin API
  strategies: new Map(), // strategy id -> feature
  enabled: new Map(), // feature -> last acknowledged enabled state in development
  tags: new Set(), // `${feature}\u0000${value}`
  imported: new Map(), // feature -> description of the last acknowledged import that wrote it
  jobs: [], // queued import job ids
  writes: 0,
};

// Writers and importers pause for checkpoints; `active` counts their requests in flight.
let paused = false;
let active = 0;
const deadline = Date.now() + SECONDS * 1000;
const running = () => Date.now() < deadline;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function write(fn) {
  while (paused) await sleep(20);
  active++;
  try {
    return await fn();
  } finally {
    active--;
  }
}

async function writerLoop(id) {
  let n = 0;
  const mine = [];
  while (running()) {
    const name = `soak.w${id}.${n++}`;
    const project = '/api/admin/projects/default/features';
    const created = await write(() => request('write', 'POST', project, { body: { name, description: `writer ${id}` }, expect: [201] }));
    if (!ok(created.status)) continue;
    ledger.created.add(name);
    ledger.writes++;
    mine.push(name);
    const strategy = await write(() =>
      request('write', 'POST', `${project}/${name}/environments/development/strategies`, {
        body: { name: 'flexibleRollout', constraints: [], parameters: { rollout: String(n % 101), stickiness: 'default', groupId: name } },
      }),
    );
    if (ok(strategy.status)) {
      ledger.strategies.set(JSON.parse(strategy.text).id, name);
      ledger.writes++;
    }
    const on = await write(() => request('write', 'POST', `${project}/${name}/environments/development/on`, { expect: [200] }));
    if (ok(on.status)) {
      ledger.enabled.set(name, true);
      ledger.writes++;
    }
    const tag = await write(() =>
      request('write', 'POST', `/api/admin/features/${name}/tags`, { body: { type: 'simple', value: `w${id}` }, expect: [201] }),
    );
    if (ok(tag.status)) {
      ledger.tags.add(`${name}\u0000w${id}`);
      ledger.writes++;
    }
    // Now and then one of this writer's earlier flags is switched off again.
    if (n % 4 === 0 && mine.length > 1) {
      const earlier = mine[Math.floor(Math.random() * (mine.length - 1))];
      const off = await write(() => request('write', 'POST', `${project}/${earlier}/environments/development/off`, { expect: [200] }));
      if (ok(off.status)) {
        ledger.enabled.set(earlier, false);
        ledger.writes++;
      }
    }
  }
}

async function waitForJob(location) {
  for (;;) {
    const response = await request('import-job', 'GET', location);
    const job = JSON.parse(response.text);
    if (job.status !== 'queued' && job.status !== 'running') return job;
    await sleep(250);
  }
}

const imports = { small: 0, smallQueued: 0, queued: 0, failed: [] };

async function recordImport(response, body) {
  if (response.status === 202) {
    const job = JSON.parse(response.text);
    ledger.jobs.push(job.id);
    const done = await waitForJob(response.headers.get('location'));
    if (done.status !== 'completed') {
      imports.failed.push(done);
      return;
    }
  } else if (!ok(response.status)) return;
  for (const feature of body.data.features) ledger.imported.set(feature.name, feature.description);
  ledger.writes++;
}

async function importLoop() {
  let n = 0;
  let lastQueued = Date.now();
  while (running()) {
    n++;
    // Each small import rewrites ten flags of the seed with a new description.
    const small = importBody('soak.seed', 10, `small import ${n}`);
    const offset = (n * 10) % 300;
    for (const feature of small.data.features)
      feature.name = `soak.seed.${String(offset + Number(feature.name.slice(-4))).padStart(4, '0')}`;
    for (const list of [small.data.featureStrategies, small.data.featureEnvironments]) {
      for (const item of list) item.featureName = `soak.seed.${String(offset + Number(item.featureName.slice(-4))).padStart(4, '0')}`;
    }
    await write(async () => {
      const response = await request('import-small', 'POST', '/api/admin/features-batch/import', { body: small, expect: [200, 202] });
      if (response.status === 202) imports.smallQueued++;
      else if (ok(response.status)) imports.small++;
      await recordImport(response, small);
    });
    if (Date.now() - lastQueued >= QUEUED_IMPORT_EVERY * 1000) {
      lastQueued = Date.now();
      // The same 2,100 flags each time, with a new description: the payload does not grow with the run.
      const large = importBody('soak.bulk', 2_100, `bulk ${n}`);
      await write(async () => {
        const response = await request('import-queued', 'POST', '/api/admin/features-batch/import', { body: large, expect: [202] });
        if (response.status === 202) imports.queued++;
        await recordImport(response, large);
      });
    }
    await sleep(500);
  }
}

async function searchLoop() {
  const queries = ['soak', 'soak.w0', 'soak.bulk', 'seed.01', 'w1'];
  let n = 0;
  while (running())
    await request('search', 'GET', `/api/admin/search/features?query=${encodeURIComponent(queries[n++ % queries.length])}&limit=50`);
}

/** ETag -> hash of the body served under it; every 200 body is recorded. */
const bodiesByEtag = new Map();
const etagConflicts = [];
const sdk = { bodies: 0, notModified: 0, revisions: new Set() };

function recordSdkBody(etag, text) {
  const hash = createHash('sha256').update(text).digest('hex');
  const known = bodiesByEtag.get(etag);
  if (known === undefined) bodiesByEtag.set(etag, hash);
  else if (known !== hash) etagConflicts.push(etag);
  sdk.bodies++;
  sdk.revisions.add(JSON.parse(text).meta.revisionId);
}

async function sdkLoop() {
  let etag = null;
  while (running()) {
    const response = await request('sdk', 'GET', '/api/client/features', {
      token: clientToken,
      headers: etag ? { 'if-none-match': etag } : {},
      expect: [200, 304],
    });
    if (response.status === 304) sdk.notModified++;
    else if (response.status === 200) {
      etag = response.headers.get('etag');
      recordSdkBody(etag, response.text);
    }
  }
}

async function frontendLoop(id) {
  let n = 0;
  while (running()) {
    await request('frontend', 'GET', `/api/frontend?userId=${id}-${n++ % 1000}&properties%5Bregion%5D=eu`, {
      token: frontendToken,
      expect: [200, 304],
    });
  }
}

async function metricsLoop() {
  while (running()) {
    const now = new Date();
    const toggles = {};
    for (let i = 0; i < 20; i++) toggles[`soak.seed.${String(i).padStart(4, '0')}`] = { yes: i, no: 20 - i, variants: {} };
    await request('metrics', 'POST', '/api/client/metrics', {
      token: clientToken,
      body: {
        appName: 'soak',
        instanceId: 'soak-1',
        environment: 'development',
        bucket: { start: new Date(now.getTime() - 10_000).toISOString(), stop: now.toISOString(), toggles },
      },
      expect: [202, 200],
    });
  }
}

// ---------------------------------------------------------------------------------------
// Checkpoints: SDK payload vs D1 while nothing writes

const checkpoints = [];

function d1Flags() {
  const flags = new Map();
  for (const row of d1
    .prepare(
      `SELECT f.name, f.description, coalesce(fe.enabled, 0) AS enabled FROM features f
      LEFT JOIN feature_environments fe ON fe.feature_name = f.name AND fe.environment = 'development' WHERE f.archived_at IS NULL`,
    )
    .all()) {
    flags.set(row.name, { enabled: row.enabled === 1, description: row.description, strategies: [] });
  }
  for (const row of d1
    .prepare(
      `SELECT feature_name, strategy_name, parameters FROM feature_strategies WHERE environment = 'development' ORDER BY feature_name, sort_order, created_at, id`,
    )
    .all()) {
    flags.get(row.feature_name)?.strategies.push(`${row.strategy_name}:${JSON.parse(row.parameters).rollout ?? ''}`);
  }
  return flags;
}

async function checkpoint() {
  paused = true;
  const started = performance.now();
  while (active > 0) await sleep(20);
  // Queued imports drain (none is left behind by a paused importer: it waits for its jobs).
  while (d1.prepare("SELECT count(*) AS n FROM import_jobs WHERE status IN ('queued', 'running')").get().n > 0) await sleep(100);
  const revision = d1.prepare('SELECT coalesce(max(id), 0) AS r FROM events').get().r;
  const expected = d1Flags();
  // The Worker looks for a new revision at most once a second (SDK_REVISION_CHECK_MS): ask
  // until the payload is at D1's revision, for at most ten seconds.
  let response;
  let payload;
  const askUntil = Date.now() + 10_000;
  do {
    response = await request('sdk-checkpoint', 'GET', '/api/client/features', { token: clientToken });
    payload = JSON.parse(response.text);
    recordSdkBody(response.headers.get('etag'), response.text);
    if (payload.meta.revisionId !== revision) await sleep(200);
  } while (payload.meta.revisionId !== revision && Date.now() < askUntil);
  paused = false;
  const mismatches = [];
  if (payload.meta.revisionId !== revision) mismatches.push(`revisionId ${payload.meta.revisionId}, D1 ${revision} after 10 s`);
  const served = new Map(payload.features.map((feature) => [feature.name, feature]));
  for (const [name, flag] of expected) {
    const feature = served.get(name);
    if (!feature) {
      mismatches.push(`${name} missing`);
      continue;
    }
    const strategies = feature.strategies.map((strategy) => `${strategy.name}:${strategy.parameters.rollout ?? ''}`);
    if (
      feature.enabled !== flag.enabled ||
      feature.description !== flag.description ||
      strategies.join('|') !== flag.strategies.join('|')
    ) {
      mismatches.push(
        `${name}: served ${JSON.stringify([feature.enabled, feature.description, strategies])}, D1 ${JSON.stringify([flag.enabled, flag.description, flag.strategies])}`,
      );
    }
  }
  for (const name of served.keys()) if (!expected.has(name)) mismatches.push(`${name} served but not in D1`);
  checkpoints.push({
    at: Math.round((Date.now() - (deadline - SECONDS * 1000)) / 1000),
    revision,
    flags: expected.size,
    pauseMs: performance.now() - started,
    mismatches: mismatches.slice(0, 20),
    mismatchCount: mismatches.length,
  });
}

async function checkpointLoop() {
  while (running()) {
    await sleep(Math.min(CHECKPOINT_SECONDS * 1000, Math.max(0, deadline - Date.now())));
    if (!running()) break;
    await checkpoint();
  }
}

// ---------------------------------------------------------------------------------------
// The run

const startedAt = new Date();
const loadBefore = machine().loadAvg;
const t0 = performance.now();
await Promise.all([
  ...Array.from({ length: LOOPS.writer }, (_, i) => writerLoop(i)),
  ...Array.from({ length: LOOPS.search }, () => searchLoop()),
  ...Array.from({ length: LOOPS.sdk }, () => sdkLoop()),
  ...Array.from({ length: LOOPS.frontend }, (_, i) => frontendLoop(i)),
  ...Array.from({ length: LOOPS.metrics }, () => metricsLoop()),
  importLoop(),
  checkpointLoop(),
]);
const elapsed = (performance.now() - t0) / 1000;
const loadAfter = machine().loadAvg;
// A final checkpoint once everything has settled.
await checkpoint();

// ---------------------------------------------------------------------------------------
// Every acknowledged write is in D1

const missing = [];
const has = (query, ...params) => d1.prepare(query).get(...params) !== undefined;
for (const name of ledger.created)
  if (!has('SELECT 1 FROM features WHERE name = ? AND archived_at IS NULL', name)) missing.push(`feature ${name}`);
for (const [id, name] of ledger.strategies)
  if (!has('SELECT 1 FROM feature_strategies WHERE id = ? AND feature_name = ?', id, name)) missing.push(`strategy ${id} of ${name}`);
for (const [name, enabled] of ledger.enabled) {
  const row = d1.prepare("SELECT enabled FROM feature_environments WHERE feature_name = ? AND environment = 'development'").get(name);
  if (!row || (row.enabled === 1) !== enabled) missing.push(`${name} enabled=${enabled}`);
}
for (const key of ledger.tags) {
  const [name, value] = key.split('\u0000');
  if (!has("SELECT 1 FROM feature_tag WHERE feature_name = ? AND tag_type = 'simple' AND tag_value = ?", name, value))
    missing.push(`tag ${value} of ${name}`);
}
for (const [name, description] of ledger.imported) {
  const row = d1.prepare('SELECT description FROM features WHERE name = ?').get(name);
  if (!row || row.description !== description) missing.push(`imported ${name} (${description})`);
}
const jobStatuses =
  ledger.jobs.length === 0
    ? []
    : d1
        .prepare(`SELECT status, count(*) AS n FROM import_jobs WHERE id IN (SELECT value FROM json_each(?)) GROUP BY status`)
        .all(JSON.stringify(ledger.jobs));
const eventCount = d1.prepare('SELECT count(*) AS n FROM events').get().n;
d1.close();
await worker.stop();

// ---------------------------------------------------------------------------------------
// Report

const totalRequests = [...stats.values()].reduce((sum, entry) => sum + entry.count, 0);
const checkpointMismatches = checkpoints.reduce((sum, entry) => sum + entry.mismatchCount, 0);
const passed =
  fiveHundreds.length === 0 &&
  missing.length === 0 &&
  etagConflicts.length === 0 &&
  checkpointMismatches === 0 &&
  imports.failed.length === 0 &&
  unexpected.length === 0;
const rows = [...stats.entries()]
  .filter(([kind]) => kind !== 'setup')
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([kind, entry]) => {
    const sorted = [...entry.latencies].sort((a, b) => a - b);
    const p = (q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((q / 100) * sorted.length) - 1))];
    return `| ${kind} | ${entry.count} | ${fmt(entry.count / elapsed)} | ${fmt(p(50))} | ${fmt(p(95))} | ${fmt(p(99))} |`;
  });
const info = machine();
const summary = {
  passed,
  seconds: elapsed,
  requests: totalRequests,
  rps: totalRequests / elapsed,
  acknowledgedWrites: ledger.writes,
  imports,
  jobStatuses,
  sdk: {
    bodies: sdk.bodies,
    notModified: sdk.notModified,
    distinctRevisions: sdk.revisions.size,
    etags: bodiesByEtag.size,
    etagConflicts: etagConflicts.length,
  },
  checkpoints: checkpoints.length,
  checkpointMismatches,
  missing: missing.length,
  fiveHundreds: fiveHundreds.length,
  unexpected: unexpected.length,
  events: eventCount,
};
console.log(JSON.stringify(summary, null, 2));
if (fiveHundreds.length > 0) console.log('5xx:', JSON.stringify(fiveHundreds.slice(0, 10), null, 2));
if (unexpected.length > 0) console.log('unexpected:', JSON.stringify(unexpected.slice(0, 10), null, 2));
if (missing.length > 0) console.log('missing:', missing.slice(0, 20));
for (const entry of checkpoints) if (entry.mismatchCount > 0) console.log('checkpoint mismatch:', JSON.stringify(entry));

const report = `# Soak benchmark

\`npm run bench -- soak\` (\`bench/soak/run.mjs\`): the Worker under \`wrangler dev\` on loopback
(a bundle built once, fresh local D1/KV/Queues), ${fmt(elapsed / 60, 1)} minutes of mixed traffic from
one Node process with every loop sending its next request as soon as the last one answered
(the highest rate this box sustains), then the checks below. Duration: \`SOAK_SECONDS\`
(default 600).

- Date: ${info.date} (run started ${startedAt.toISOString()}), code at commit ${commit}
- Machine: ${info.cpu}, ${info.memoryGiB} GiB, Node ${info.node}; 2 shared cores, and other agents
  were running builds and tests on them at the same time (load average ${loadBefore} at the
  start, ${loadAfter} at the end), so the rates are a floor for this box, not its capacity.
- Loops: ${LOOPS.writer} admin writers (create flag, add strategy, enable, tag, now and then disable an earlier
  one), ${LOOPS.search} searcher, ${LOOPS.sdk} SDK pollers (If-None-Match), ${LOOPS.frontend} frontend evaluators, ${LOOPS.metrics} metrics
  poster, 1 importer (10 flags every ~0.5 s, and 2,100 flags through the queue every ${QUEUED_IMPORT_EVERY} s),
  and a checkpoint every ${CHECKPOINT_SECONDS} s (writers pause, queued imports drain, the SDK payload is
  compared with D1).

## Result: ${passed ? 'PASSED' : 'FAILED'}

| check | result |
| --- | --- |
| requests answered 5xx | ${fiveHundreds.length} of ${totalRequests} |
| requests answered another unexpected status | ${unexpected.length} |
| acknowledged writes (2xx) missing from D1 | ${missing.length} of ${ledger.writes} (${ledger.created.size} flags created, ${ledger.strategies.size} strategies, ${ledger.enabled.size} flags with their last toggle, ${ledger.tags.size} tags, ${ledger.imported.size} imported flags with the last description written) |
| SDK ETags served with two different bodies | ${etagConflicts.length} of ${bodiesByEtag.size} ETags (${sdk.bodies} bodies, ${sdk.notModified} 304s, ${sdk.revisions.size} revisions seen) |
| checkpoints where the SDK payload differed from D1 at its revision | ${checkpoints.filter((entry) => entry.mismatchCount > 0).length} of ${checkpoints.length} |
| queued import jobs | ${jobStatuses.map((row) => `${row.n} ${row.status}`).join(', ') || 'none'} (${imports.queued} large, ${imports.smallQueued} small ones queued behind a large one; ${imports.small} small ones applied at once) |

## Rates

${fmt(totalRequests / elapsed)} requests/s over ${fmt(elapsed, 0)} s (${totalRequests} requests; latencies in ms).

| traffic | requests | per second | p50 | p95 | p99 |
| --- | ---: | ---: | ---: | ---: | ---: |
${rows.join('\n')}

Checkpoints (seconds into the run, D1 revision, flags compared, pause in ms):
${checkpoints.map((entry) => `${entry.at} s / r${entry.revision} / ${entry.flags} / ${fmt(entry.pauseMs, 0)}`).join('; ')}.
`;
if (WRITE_RESULTS) writeFileSync(path.join(HERE, 'RESULTS.md'), report);
console.log(passed ? 'soak: PASSED' : 'soak: FAILED');
if (!passed) process.exitCode = 1;
