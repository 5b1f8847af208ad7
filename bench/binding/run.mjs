// `npm run bench -- binding`: CPU per flag decision and per getAll through the binding (Workers
// RPC to UnleashFlags) against a fetch of our frontend API from the same consumer Worker, in the
// same run. Both Workers run in one `wrangler dev` (examples/consumer first, ours beside it), so
// one workerd process holds both: its CPU (user + system, /proc) over a batch of n calls made
// inside the consumer, divided by n, is what a decision costs on both sides of the call.
// Modes take turns within each round, so a burst of other work on the shared machine falls on
// both. Writes bench/binding/RESULTS.md.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BINDING_PROPAGATION_MARKER, ROOT, machine } from '../lib.mjs';

const PORT = Number(process.env.BINDING_BENCH_PORT ?? 9630);
const BASE = `http://127.0.0.1:${PORT}`;
const ROUNDS = Number(process.env.BINDING_BENCH_ROUNDS ?? 5);
const N = { decision: Number(process.env.BINDING_BENCH_DECISIONS ?? 1000), all: Number(process.env.BINDING_BENCH_ALLS ?? 500) };
const FLAGS = 20;
const wrangler = path.join(ROOT, 'node_modules', '.bin', 'wrangler');
const consumerVars = path.join(ROOT, 'examples', 'consumer', '.dev.vars');
const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: '1' };
// `--var` reaches only the first Worker of a multi-config wrangler dev: ours reads its admin key
// from its .dev.vars (made from .dev.vars.example by `npm start` / `npm run dev`).
const devVars = path.join(ROOT, existsSync(path.join(ROOT, '.dev.vars')) ? '.dev.vars' : '.dev.vars.example');
const ADMIN_TOKEN = /^INIT_ADMIN_API_TOKENS\s*=\s*"?([^",\n]+)/m.exec(readFileSync(devVars, 'utf8'))?.[1]?.trim();
if (!ADMIN_TOKEN) throw new Error(`no INIT_ADMIN_API_TOKENS in ${devVars}`);
if (!existsSync(path.join(ROOT, '.dev.vars'))) copyFileSync(devVars, path.join(ROOT, '.dev.vars'));
const persistTo = mkdtempSync(path.join(os.tmpdir(), 'unleash-binding-bench-'));

execFileSync(wrangler, ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', persistTo], { cwd: ROOT, env, stdio: 'ignore' });

let server;

async function start() {
  server = spawn(
    wrangler,
    ['dev', '-c', 'examples/consumer/wrangler.toml', '-c', 'wrangler.toml', '--ip', '127.0.0.1', '--port', String(PORT)].concat([
      '--persist-to',
      persistTo,
      '--log-level',
      'warn',
    ]),
    { cwd: ROOT, env, stdio: 'ignore', detached: true },
  );
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      if ((await fetch(`${BASE}/health`)).ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error('wrangler dev did not come up within 90 s');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function stop() {
  if (server) process.kill(-server.pid, 'SIGTERM');
  server = undefined;
}

/** The workerd processes under our wrangler dev (its process group). */
function workerdPids() {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === server.pid && stat.includes('(workerd)')) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

const TICK_MS = 1000 / 100;

/** CPU of those processes, or null when one has gone (wrangler restarted it): the sample is dropped. */
function cpuMs(pids) {
  let ticks = 0;
  for (const pid of pids) {
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return null;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * TICK_MS;
}

async function admin(method, pathname, body) {
  const response = await fetch(`${BASE}${pathname}`, {
    method,
    headers: { authorization: ADMIN_TOKEN, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${pathname}: ${response.status} ${await response.text()}`);
  return response.status === 200 || response.status === 201 ? response.json().catch(() => null) : null;
}

// 1. Flags and a frontend key, through the service (reached through the consumer's forwarding).
await start();
let key;
try {
  for (let i = 0; i < FLAGS; i++) {
    const name = i === 0 ? 'bench.flag' : `bench.flag.${i}`;
    await admin('POST', '/api/admin/projects/default/features', { name });
    await admin('POST', `/api/admin/projects/default/features/${name}/environments/development/strategies`, {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: name },
      constraints: i % 2 ? [{ contextName: 'region', operator: 'NOT_IN', values: ['eu'] }] : [],
    });
    await admin('POST', `/api/admin/projects/default/features/${name}/environments/development/on`);
  }
  key = (await admin('POST', '/api/admin/api-tokens', { tokenName: 'binding-bench', type: 'frontend', environment: 'development' })).secret;
} finally {
  stop();
}
// 2. The consumer reads its key from its .dev.vars (kept aside and put back after).
let previousVars = null;
try {
  previousVars = readFileSync(consumerVars, 'utf8');
} catch {
  // none
}
writeFileSync(consumerVars, `UNLEASH_KEY=${key}\n`);
await new Promise((resolve) => setTimeout(resolve, 1000));

const scenarios = [
  ['decision', 'binding'],
  ['decision', 'fetch'],
  ['all', 'binding'],
  ['all', 'fetch'],
];
const samples = new Map(scenarios.map(([op, mode]) => [`${op}/${mode}`, []]));
const loads = [
  os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' '),
];
try {
  await start();

  const batch = async (op, mode, n, run) => {
    const response = await fetch(`${BASE}/example/bench?mode=${mode}&op=${op}&n=${n}&run=${run}`);
    if (!response.ok) throw new Error(`bench ${op}/${mode}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  // Warm-up: both paths compiled, snapshots and plans made.
  for (const [op, mode] of scenarios) await batch(op, mode, 100, 'warm');
  for (let round = 0; round < ROUNDS; round++) {
    loads.push(
      os
        .loadavg()
        .map((value) => value.toFixed(2))
        .join(' '),
    );
    const order = round % 2 ? [...scenarios].reverse() : scenarios;
    for (const [op, mode] of order) {
      for (let attempt = 0; ; attempt++) {
        const pids = workerdPids();
        if (pids.length === 0) throw new Error('no workerd process found under wrangler dev');
        const before = cpuMs(pids);
        const answer = await batch(op, mode, N[op], `${round}.${attempt}`);
        const after = cpuMs(pids);
        if (answer.on === 0) throw new Error(`bench ${op}/${mode}: nothing was on (answers not checked?)`);
        if (before !== null && after !== null) {
          samples.get(`${op}/${mode}`).push((after - before) / N[op]);
          break;
        }
        if (attempt >= 2) throw new Error(`bench ${op}/${mode}: workerd kept restarting`);
      }
    }
  }
} finally {
  stop();
  if (previousVars === null) rmSync(consumerVars, { force: true });
  else writeFileSync(consumerVars, previousVars);
  rmSync(persistTo, { recursive: true, force: true });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const row = (op, label) => {
  const binding = samples.get(`${op}/binding`);
  const viaFetch = samples.get(`${op}/fetch`);
  const ratios = binding.map((value, i) => value / viaFetch[i]);
  return `| ${label} | ${median(binding).toFixed(3)} | ${median(viaFetch).toFixed(3)} | ${(median(ratios) * 100).toFixed(0)} % | ${ratios
    .map((ratio) => `${(ratio * 100).toFixed(0)} %`)
    .join(' / ')} |`;
};
const host = machine();
const report = `# Binding benchmark

Run: \`npm run bench -- binding\`. One \`wrangler dev\` runs the example consumer Worker
(examples/consumer) and ours beside it (\`-c examples/consumer/wrangler.toml -c wrangler.toml\`).
Inside the consumer, \`/example/bench\` makes n calls one after another, each for another user
(userId, sessionId and remoteAddress change every call, so no answer cache serves a repeat):
through the binding (\`unleashFlags(env.FLAGS, key).isEnabled(flag, context)\` or \`.getAll(context)\`,
one Workers RPC call each, \`env.FLAGS.isEnabled(key, flag, context)\`) or through a fetch of our frontend API over the \`UNLEASH\` service
binding (\`POST /api/frontend\` with the same context, the body parsed, the flag looked up).

- Date: ${new Date().toISOString()}
- Machine: ${host.cpu}, ${host.memoryGiB} GiB RAM, Node ${host.node}. The 2 cores are shared with other agents working at the same time; load average before the run and at the start of each round: ${loads.join(' / ')}.
- CPU: user + system time of the workerd process (both Workers, and the runtime between them), from /proc (10 ms ticks), over a batch of ${N.decision} decisions or ${N.all} getAlls, divided by the calls; ${ROUNDS} rounds after one warm-up batch of each; the modes take turns in every round (order reversed every other round). The table gives the median of the rounds; the ratio is the median of the round-by-round ratios.
- Data: ${FLAGS} flags in project \`default\`, environment \`development\`, each a 50 % flexible rollout (half of them with a \`region\` constraint); a frontend key of that environment.

| Call | binding CPU ms/call | fetch of /api/frontend CPU ms/call | binding ÷ fetch | per round |
|---|---|---|---|---|
${row('decision', 'one decision (`isEnabled`)')}
${row('all', 'all flags (`getAll`)')}
`;
const resultsPath = path.join(ROOT, 'bench', 'binding', 'RESULTS.md');
const previous = readFileSync(resultsPath, 'utf8');
const propagation = previous.includes(BINDING_PROPAGATION_MARKER)
  ? `\n${previous.slice(previous.indexOf(BINDING_PROPAGATION_MARKER))}`
  : '';
writeFileSync(resultsPath, report + propagation);
console.log(report);
