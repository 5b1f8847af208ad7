// Cost of checking a credential: an authenticated admin request against an unauthenticated
// trivial one, and a session cookie or a personal access token against an admin key on the
// same request, in the same run of `wrangler dev` on loopback. The fair pair is two unknown
// paths: both walk the whole route table and answer the same 404 error body without touching
// D1, and only /api/admin/<unknown> checks the key first. /health (first route, tiny body) and
// a D1-backed listing are shown for scale. Rounds alternate the cases so that drift in machine
// load hits all alike.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fmt, load, machine, ROOT, startWorker } from '../lib.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const PER_ROUND = Number(process.env.PER_ROUND ?? 2000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);

const worker = await startWorker({ port: Number(process.env.BENCH_PORT ?? 8790) });
try {
  const { base, token } = worker;
  const adminKey = await (async () => {
    // A key created through the API, so the path measured is isolate cache -> KV -> D1.
    const response = await fetch(`${base}/api/admin/api-tokens`, {
      method: 'POST',
      headers: { authorization: token, 'content-type': 'application/json' },
      body: JSON.stringify({ tokenName: 'bench', type: 'admin' }),
    });
    if (response.status !== 201) throw new Error(`token creation: ${response.status}`);
    return (await response.json()).secret;
  })();

  // An Admin user with a session and a personal access token, made through the API.
  const adminHeaders = { authorization: token, 'content-type': 'application/json' };
  const password = 'Bench-Password-1';
  const created = await fetch(`${base}/api/admin/user-admin`, {
    method: 'POST',
    headers: adminHeaders,
    body: JSON.stringify({ username: 'bench-person', password, rootRole: 1 }),
  });
  if (created.status !== 201) throw new Error(`user creation: ${created.status}`);
  const login = await fetch(`${base}/auth/simple/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bench-person', password }),
  });
  if (login.status !== 200) throw new Error(`login: ${login.status}`);
  const cookie = login.headers.get('set-cookie').split(';')[0];
  const patResponse = await fetch(`${base}/api/admin/user/tokens`, {
    method: 'POST',
    // Cookie-authenticated writes must come from the service's own origin, as the UI's do.
    headers: { cookie, origin: base, 'content-type': 'application/json' },
    body: JSON.stringify({ description: 'bench', expiresAt: '2099-01-01T00:00:00Z' }),
  });
  if (patResponse.status !== 201) throw new Error(`PAT creation: ${patResponse.status}`);
  const pat = (await patResponse.json()).secret;

  const probe = async (headers, label) => {
    const response = await fetch(`${base}/api/admin/bench-probe`, { headers });
    await response.arrayBuffer();
    if (response.status !== 404) throw new Error(`${label} probe ${response.status}`);
  };

  const cases = {
    'GET /health (no key)': async () => {
      const response = await fetch(`${base}/health`);
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`health ${response.status}`);
    },
    'GET /api/<unknown> (no key, 404)': async () => {
      const response = await fetch(`${base}/api/bench-probe`);
      await response.arrayBuffer();
      if (response.status !== 404) throw new Error(`probe ${response.status}`);
    },
    'GET /api/admin/<unknown> (key checked, 404)': async () => {
      const response = await fetch(`${base}/api/admin/bench-probe`, { headers: { authorization: adminKey } });
      await response.arrayBuffer();
      if (response.status !== 404) throw new Error(`admin probe ${response.status}`);
    },
    'GET /api/admin/<unknown> (session cookie, 404)': () => probe({ cookie }, 'session'),
    'GET /api/admin/<unknown> (personal access token, 404)': () => probe({ authorization: pat }, 'PAT'),
    'GET /api/admin/api-tokens (key checked + D1 read)': async () => {
      const response = await fetch(`${base}/api/admin/api-tokens`, { headers: { authorization: adminKey } });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`list ${response.status}`);
    },
  };

  const results = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, request] of Object.entries(cases)) {
      results[name].push(await load(request, { total: PER_ROUND, concurrency: CONCURRENCY, warmup: 100 }));
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const summary = Object.fromEntries(
    Object.entries(results).map(([name, runs]) => [
      name,
      { rps: median(runs.map((r) => r.rps)), p50: median(runs.map((r) => r.p50)), p99: median(runs.map((r) => r.p99)) },
    ]),
  );
  const trivial = summary['GET /api/<unknown> (no key, 404)'];
  const authed = summary['GET /api/admin/<unknown> (key checked, 404)'];
  const rpsCost = (1 - authed.rps / trivial.rps) * 100;
  const p50Cost = (authed.p50 / trivial.p50 - 1) * 100;
  const versusKey = (name) => {
    const s = summary[name];
    return { rpsCost: (1 - s.rps / authed.rps) * 100, p50Cost: (s.p50 / authed.p50 - 1) * 100 };
  };
  const sessionCost = versusKey('GET /api/admin/<unknown> (session cookie, 404)');
  const patCost = versusKey('GET /api/admin/<unknown> (personal access token, 404)');

  const info = machine();
  const lines = [
    `Run ${info.date} on ${info.cpu}, ${info.memoryGiB} GiB, ${info.node}, load average ${info.loadAvg}.`,
    `wrangler dev on 127.0.0.1, ${ROUNDS} alternating rounds x ${PER_ROUND} requests, ${CONCURRENCY} in flight; medians over rounds.`,
    '',
    '| request | rps | p50 ms | p99 ms |',
    '|---|---:|---:|---:|',
    ...Object.entries(summary).map(([name, s]) => `| ${name} | ${fmt(s.rps, 0)} | ${fmt(s.p50, 2)} | ${fmt(s.p99, 2)} |`),
    '',
    `Key checking costs ${fmt(rpsCost)}% of throughput and ${fmt(p50Cost)}% of p50 latency against the same unauthenticated 404 (target: under 10%).`,
    `A session costs ${fmt(sessionCost.rpsCost)}% of throughput and ${fmt(sessionCost.p50Cost)}% of p50 latency against the admin key on the same request (target: under 10%).`,
    `A personal access token costs ${fmt(patCost.rpsCost)}% of throughput and ${fmt(patCost.p50Cost)}% of p50 latency against the admin key (target: under 10%).`,
  ];
  console.log(lines.join('\n'));
  writeFileSync(
    path.join(ROOT, 'bench', 'auth', 'latest.json'),
    JSON.stringify({ machine: info, results, summary, rpsCost, p50Cost, sessionCost, patCost }, null, 2),
  );
} finally {
  await worker.stop();
}
