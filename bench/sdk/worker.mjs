// Starts the Worker for the SDK benchmark and the SDK integration test: wrangler dev on
// loopback with fresh local state, like bench/lib.mjs, but serving a bundle built once up
// front. Other people edit src/ while these run; wrangler dev would rebuild and restart
// workerd on every such edit, resetting caches and CPU counters mid-measurement.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setAdminPassword } from '../../scripts/admin-password.mjs';
import { BENCH_ADMIN_TOKEN, ROOT } from '../lib.mjs';

export { BENCH_ADMIN_TOKEN };

const wranglerBin = path.join(ROOT, 'node_modules', '.bin', 'wrangler');

async function answers(base) {
  try {
    await fetch(`${base}/health`, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

/**
 * `vars`: extra variables for the Worker (`--var NAME:value`); `testScheduled`: let a test run
 * the cron trigger on demand (wrangler's `--test-scheduled`: `GET /__scheduled`).
 */
export async function startWorker({ port, token = BENCH_ADMIN_TOKEN, log = false, vars = {}, testScheduled = false } = {}) {
  // A server left on the port would answer the health check below and be taken for the fresh one.
  if (await answers(`http://127.0.0.1:${port}`)) throw new Error(`port ${port} is already in use; stop what is listening there first`);
  const persistTo = mkdtempSync(path.join(os.tmpdir(), 'unleash-sdk-state-'));
  const outdir = mkdtempSync(path.join(os.tmpdir(), 'unleash-sdk-bundle-'));
  const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: '1' };
  const stdio = log ? 'inherit' : 'ignore';
  execFileSync(wranglerBin, ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', persistTo], { cwd: ROOT, env, stdio });
  // As `npm start` does: the bootstrap admin can sign in with Unleash's default password.
  setAdminPassword({ persistTo, cwd: ROOT });
  execFileSync(wranglerBin, ['deploy', '--dry-run', '--outdir', outdir], { cwd: ROOT, env, stdio });
  // The project's configuration (bindings, ids) with the prebuilt bundle as its entry point.
  // The copy lives elsewhere: the UI's assets folder is made absolute, and the build step
  // (fetching the UI) has already run in the dry-run deploy above.
  const config = readFileSync(path.join(ROOT, 'wrangler.toml'), 'utf8')
    // wrangler adds `--test-scheduled`'s `/__scheduled` as middleware when it bundles, never under no_bundle.
    .replace(/^main = .*$/m, `main = ${JSON.stringify(path.join(outdir, 'index.js'))}${testScheduled ? '' : '\nno_bundle = true'}`)
    .replace(/^\[build\]\ncommand = .*$/m, '')
    .replace(/^directory = "\.\/(.*)"$/m, (_, dir) => `directory = ${JSON.stringify(path.join(ROOT, dir))}`);
  const configPath = path.join(outdir, 'wrangler.toml');
  writeFileSync(configPath, config);
  const child = spawn(
    wranglerBin,
    [
      'dev',
      '--config',
      configPath,
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--persist-to',
      persistTo,
      '--var',
      `INIT_ADMIN_API_TOKENS:${token}`,
      ...Object.entries(vars).flatMap(([name, value]) => ['--var', `${name}:${value}`]),
      ...(testScheduled ? ['--test-scheduled'] : []),
      '--log-level',
      'warn',
    ],
    { cwd: ROOT, env, stdio, detached: true },
  );
  const base = `http://127.0.0.1:${port}`;
  const cleanup = () => {
    rmSync(persistTo, { recursive: true, force: true });
    rmSync(outdir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      cleanup();
      throw new Error(`wrangler dev did not come up on port ${port}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    base,
    token,
    persistTo,
    pid: child.pid,
    async stop() {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      // Wait for the port to close, so the next start on it cannot meet this one.
      for (let waited = 0; waited < 10_000 && (await answers(base)); waited += 250) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      cleanup();
    },
  };
}
