// Cost of a person's groups to permission checking: the same admin requests from a Viewer with
// no groups and from a Viewer in 50 groups that each hold the Member role on 200 projects
// (their grants are the union: own roles + groups' roles, loaded in one query per isolate cache
// period). Both send a personal access token; rounds alternate the two so that drift in machine
// load hits both alike. Target (issue 43): no measurable change to admin request latency, p95.
// `--against <commit>`: that commit is built beside this checkout, seeded alike, and measured
// in the same rounds (each case runs on both builds back to back, in alternating order).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { againstArgument, checkoutAgainst } from '../against.mjs';
import { fmt, load, machine, median, ROOT, startWorker } from '../lib.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PER_ROUND = Number(process.env.PER_ROUND ?? 600);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const GROUPS = 50;
const PROJECTS = 200;

const PORT = Number(process.env.BENCH_PORT ?? 9470);
const AGAINST = againstArgument();

/** Seeds a running Worker with the two people, the groups and the projects; answers its cases. */
async function prepare({ base, token }) {
  const admin = { authorization: token, 'content-type': 'application/json' };
  const post = async (url, body, method = 'POST') => {
    const response = await fetch(`${base}${url}`, { method, headers: admin, body: JSON.stringify(body) });
    if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`);
    return response.status === 200 || response.status === 201 ? response.json().catch(() => null) : null;
  };
  async function person(username) {
    const password = 'Bench-Password-1';
    await post('/api/admin/user-admin', { username, password, rootRole: 3 });
    const login = await fetch(`${base}/auth/simple/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
    const cookie = login.headers.get('set-cookie').split(';')[0];
    const pat = await fetch(`${base}/api/admin/user/tokens`, {
      method: 'POST',
      headers: { cookie, origin: base, 'content-type': 'application/json' },
      body: JSON.stringify({ description: 'bench', expiresAt: '2099-01-01T00:00:00Z' }),
    });
    const body = await pat.json();
    return {
      id: (await (await fetch(`${base}/api/admin/user`, { headers: { authorization: body.secret } })).json()).user.id,
      secret: body.secret,
    };
  }
  const plain = await person('bench-plain');
  const grouped = await person('bench-grouped');
  const groupIds = [];
  for (let g = 0; g < GROUPS; g++)
    groupIds.push((await post('/api/admin/groups', { name: `bench-group-${g}`, users: [{ user: { id: grouped.id } }] })).id);
  for (let p = 0; p < PROJECTS; p++) {
    await post('/api/admin/projects', { id: `bench-p${p}`, name: `bench p${p}` });
    await post(`/api/admin/projects/bench-p${p}/access`, { roles: [5], groups: groupIds });
  }
  const me = await (await fetch(`${base}/api/admin/user`, { headers: { authorization: grouped.secret } })).json();

  const request = (secret, url, status) => async () => {
    const response = await fetch(`${base}${url}`, { headers: { authorization: secret } });
    await response.arrayBuffer();
    if (response.status !== status) throw new Error(`${url}: ${response.status}`);
  };
  return {
    grants: me.permissions.length,
    cases: {
      'GET /api/admin/<unknown> (404), no groups': request(plain.secret, '/api/admin/bench-probe', 404),
      'GET /api/admin/<unknown> (404), 50 groups x 200 projects': request(grouped.secret, '/api/admin/bench-probe', 404),
      'GET /api/admin/projects/bench-p199/features, no groups': request(plain.secret, '/api/admin/projects/bench-p199/features', 200),
      'GET /api/admin/projects/bench-p199/features, 50 groups x 200 projects': request(
        grouped.secret,
        '/api/admin/projects/bench-p199/features',
        200,
      ),
      'GET /api/admin/user (permission list), no groups': request(plain.secret, '/api/admin/user', 200),
      'GET /api/admin/user (permission list), 50 groups x 200 projects': request(grouped.secret, '/api/admin/user', 200),
    },
  };
}

const previousBuild = AGAINST ? checkoutAgainst(AGAINST) : undefined;
const builds = [{ label: 'this build', worker: await startWorker({ port: PORT }) }];
try {
  if (previousBuild) builds.push({ label: previousBuild.label, worker: await startWorker({ port: PORT + 1, root: previousBuild.root }) });
  for (const build of builds) Object.assign(build, await prepare(build.worker));
  const names = Object.keys(builds[0].cases);
  const samples = builds.map(() => Object.fromEntries(names.map((name) => [name, []])));
  const loads = [];
  for (let round = 0; round < ROUNDS; round++) {
    loads.push(machine().loadAvg);
    for (const name of names) {
      // Each case on every build back to back; who goes first alternates by round.
      const order = builds.map((_, index) => index);
      if (round % 2 === 1) order.reverse();
      for (const index of order)
        samples[index][name].push(await load(builds[index].cases[name], { total: PER_ROUND, concurrency: CONCURRENCY }));
    }
  }
  const info = machine();
  const row = (index, name) => {
    const s = samples[index][name];
    return { rps: median(s.map((x) => x.rps)), p50: median(s.map((x) => x.p50)), p95: median(s.map((x) => x.p95)) };
  };
  const lines = [
    `## ${info.date.slice(0, 16).replace('T', ' ')} UTC, ${info.cpu}, ${info.memoryGiB} GiB, Node ${info.node}, load average ${loads.join(' / ')}`,
    '',
    `wrangler dev on 127.0.0.1, ${ROUNDS} rounds x ${PER_ROUND} requests per case and build, ${CONCURRENCY} in flight, medians over rounds; the grouped person holds ${builds[0].grants} grants.`,
    '',
    `| request | build | rps | p50 ms | p95 ms |`,
    '|---|---|---:|---:|---:|',
    ...names.flatMap((name) =>
      builds.map((build, index) => {
        const s = row(index, name);
        return `| ${name} | ${build.label} | ${fmt(s.rps, 0)} | ${fmt(s.p50, 2)} | ${fmt(s.p95, 2)} |`;
      }),
    ),
    '',
  ];
  builds.forEach((build, index) => {
    for (let i = 0; i < names.length; i += 2) {
      const a = row(index, names[i]);
      const b = row(index, names[i + 1]);
      lines.push(
        `- ${build.label}, ${names[i].split(',')[0]}: p95 ${fmt(((b.p95 - a.p95) / a.p95) * 100)} %, p50 ${fmt(((b.p50 - a.p50) / a.p50) * 100)} % with the groups.`,
      );
    }
  });
  const text = lines.join('\n');
  console.log(text);
  writeFileSync(path.join(ROOT, 'bench/permissions/last-run.json'), JSON.stringify({ text }, null, 2));
} finally {
  for (const build of builds) await build.worker.stop();
  previousBuild?.remove();
}
