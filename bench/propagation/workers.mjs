// Two Worker processes on one persisted state, for the propagation benchmark and the
// cross-process push test: `wrangler dev` twice, each serving the bundle that
// `wrangler deploy --dry-run` builds from a checkout (this one, or another commit's).
// Process A is the project's Worker as configured; process B is the same code under another
// name whose change-feed binding points at A's Durable Object (`script_name`), found through a
// dev registry of their own (so that other checkouts' `wrangler dev` on this machine are not
// seen). Both read and write the same local D1 file.
//
// Each serves its bundle behind a thin wrapper that counts D1 round trips (statements run and
// batches) and answers the count at GET /api/__bench/d1-reads: the figure "D1 reads of an idle
// isolate" comes from there, not from the code under test.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BENCH_ADMIN_TOKEN, ROOT } from '../lib.mjs';

export { BENCH_ADMIN_TOKEN };

const WRAPPER = `export * from './index.js';
import worker from './index.js';

let d1Calls = 0;
const COUNTED = new Set(['all', 'first', 'raw', 'run']);

function countedStatement(statement) {
  return new Proxy(statement, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property === 'bind') return (...args) => countedStatement(value.apply(target, args));
      if (COUNTED.has(property)) return (...args) => { d1Calls++; return value.apply(target, args); };
      return value.bind(target);
    },
  });
}

function countedDatabase(database) {
  return new Proxy(database, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property === 'prepare') return (...args) => countedStatement(value.apply(target, args));
      if (property === 'withSession') return (...args) => countedDatabase(value.apply(target, args));
      if (property === 'batch') return (statements, ...rest) => { d1Calls++; return value.call(target, statements, ...rest); };
      if (property === 'exec') return (...args) => { d1Calls++; return value.apply(target, args); };
      return value.bind(target);
    },
  });
}

export default {
  ...worker,
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname === '/api/__bench/d1-reads') return new Response(String(d1Calls));
    return worker.fetch(request, { ...env, DB: countedDatabase(env.DB) }, ctx);
  },
};
`;

const quietEnv = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: '1' };

async function answers(base) {
  try {
    await fetch(`${base}/health`, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

/** A copy of commit `commit`'s tree to build from, sharing this checkout's node_modules and UI build. */
export function checkoutOf(commit) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'unleash-propagation-src-'));
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive ${commit} | tar -x -C "${dir}"`]);
  execFileSync('ln', ['-s', path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules')]);
  execFileSync('ln', ['-s', path.join(ROOT, 'ui-build'), path.join(dir, 'ui-build')]);
  return dir;
}

/** Process B's configuration: another name, and the change feed of A (when the code has one). */
function secondConfig(config) {
  return config
    .replace(/^name = "(.*)"$/m, 'name = "$1-b"')
    .replace(/^class_name = "ChangeFeed"$/m, 'class_name = "ChangeFeed"\nscript_name = "unleash-worker"')
    .replace(/^\[\[migrations\]\]\ntag = .*\nnew_sqlite_classes = .*$/m, '');
}

/**
 * The probe Worker's configuration (bench/binding/probe.mjs): run first in B's process, it binds
 * B's `UnleashFlags` entrypoint and B's HTTP side, as another Worker of the account would.
 */
function probeConfig(serviceName) {
  return `name = "unleash-binding-probe"
main = ${JSON.stringify(path.join(ROOT, 'bench', 'binding', 'probe.mjs'))}
compatibility_date = "2026-10-01"

[[services]]
binding = "FLAGS"
service = "${serviceName}"
entrypoint = "UnleashFlags"

[[services]]
binding = "UNLEASH"
service = "${serviceName}"
`;
}

/** `--var` reaches only the first Worker of a multi-config wrangler dev: B's own go into its [vars]. */
function withVars(config, vars) {
  const lines = Object.entries(vars).map(([name, value]) => `${name} = ${JSON.stringify(value)}`);
  return config.replace(/^\[vars\]$/m, ['[vars]', ...lines].join('\n'));
}

function spawnDev({ root, configPath, port, inspectorPort, persistTo, registry, token, vars, log }) {
  return spawn(
    path.join(root, 'node_modules', '.bin', 'wrangler'),
    [
      'dev',
      ...[configPath].flat().flatMap((config) => ['--config', config]),
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--inspector-port',
      String(inspectorPort),
      '--persist-to',
      persistTo,
      '--var',
      `INIT_ADMIN_API_TOKENS:${token}`,
      ...Object.entries(vars).flatMap(([name, value]) => ['--var', `${name}:${value}`]),
      '--log-level',
      log ? 'info' : 'warn',
    ],
    { cwd: root, env: { ...quietEnv, WRANGLER_REGISTRY_PATH: registry }, stdio: log ? 'inherit' : 'ignore', detached: true },
  );
}

/**
 * Starts A on `ports[0]` and B on `ports[1]` (inspectors on `inspectorPorts`) from the checkout
 * at `root`. `vars`: extra variables for both. `probe`: B's port serves the probe Worker
 * (bench/binding/probe.mjs) in B's process, which hands every other request to B.
 */
export async function startPair({ root = ROOT, ports, inspectorPorts, token = BENCH_ADMIN_TOKEN, vars = {}, log = false, probe = false }) {
  for (const port of ports) {
    if (await answers(`http://127.0.0.1:${port}`)) throw new Error(`port ${port} is already in use; stop what is listening there first`);
  }
  const persistTo = mkdtempSync(path.join(os.tmpdir(), 'unleash-propagation-state-'));
  const outdir = mkdtempSync(path.join(os.tmpdir(), 'unleash-propagation-bundle-'));
  const registry = mkdtempSync(path.join(os.tmpdir(), 'unleash-propagation-registry-'));
  const wrangler = path.join(root, 'node_modules', '.bin', 'wrangler');
  const stdio = log ? 'inherit' : 'ignore';
  execFileSync(wrangler, ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', persistTo], { cwd: root, env: quietEnv, stdio });
  execFileSync(wrangler, ['deploy', '--dry-run', '--outdir', outdir], { cwd: root, env: quietEnv, stdio });
  writeFileSync(path.join(outdir, 'bench-wrapper.mjs'), WRAPPER);
  const config = readFileSync(path.join(root, 'wrangler.toml'), 'utf8')
    .replace(/^main = .*$/m, `main = ${JSON.stringify(path.join(outdir, 'bench-wrapper.mjs'))}`)
    .replace(/^\[build\]\ncommand = .*$/m, '')
    .replace(/^directory = "\.\/(.*)"$/m, (_, dir) => `directory = ${JSON.stringify(path.join(root, dir))}`);
  const configA = path.join(outdir, 'wrangler.toml');
  const configB = path.join(outdir, 'wrangler-b.toml');
  writeFileSync(configA, config);
  const second = secondConfig(config);
  writeFileSync(configB, probe ? withVars(second, { INIT_ADMIN_API_TOKENS: token, ...vars }) : second);
  const configsB = [configB];
  if (probe) {
    const configProbe = path.join(outdir, 'wrangler-probe.toml');
    writeFileSync(configProbe, probeConfig(/^name = "(.*)"$/m.exec(second)[1]));
    configsB.unshift(configProbe);
  }
  const children = [];
  const stopAll = async () => {
    for (const child of children) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    for (const port of ports) {
      for (let waited = 0; waited < 10_000 && (await answers(`http://127.0.0.1:${port}`)); waited += 250) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    for (const dir of [persistTo, outdir, registry]) rmSync(dir, { recursive: true, force: true });
  };
  const started = [];
  try {
    for (const [index, configPath] of [configA, configsB].entries()) {
      const child = spawnDev({
        root,
        configPath,
        port: ports[index],
        inspectorPort: inspectorPorts[index],
        persistTo,
        registry,
        token,
        vars,
        log,
      });
      children.push(child);
      const base = `http://127.0.0.1:${ports[index]}`;
      const deadline = Date.now() + 120_000;
      for (;;) {
        try {
          if ((await fetch(`${base}/health`)).ok) break;
        } catch {
          // not up yet
        }
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`wrangler dev did not come up on port ${ports[index]}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      started.push(base);
    }
  } catch (error) {
    await stopAll();
    throw error;
  }
  return { a: started[0], b: started[1], token, stop: stopAll };
}

/** D1 round trips the process at `base` made so far (the wrapper's count). */
export async function d1Calls(base) {
  return Number(await (await fetch(`${base}/api/__bench/d1-reads`)).text());
}

/**
 * Opens `/api/client/streaming` on `base` and calls `onEvent({ event, id, data, at })` for each
 * event (`at`: performance.now() when its last byte arrived). Answers { connected, close }.
 */
export async function openStream(base, key, onEvent) {
  const controller = new AbortController();
  const response = await fetch(`${base}/api/client/streaming`, { headers: { authorization: key }, signal: controller.signal });
  if (response.status !== 200) throw new Error(`streaming answered ${response.status}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let resolveConnected;
  const connected = new Promise((resolve) => (resolveConnected = resolve));
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        const at = performance.now();
        buffer += decoder.decode(value, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = { at };
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) event.comment = line.slice(1).trim();
            else {
              const colon = line.indexOf(':');
              event[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
            }
          }
          if (event.event === 'unleash-connected') resolveConnected(event);
          onEvent(event);
        }
      }
    } catch {
      // aborted
    }
  })();
  return { connected: await connected, close: () => controller.abort() };
}
