// Shared benchmark plumbing: start the Worker under `wrangler dev` on loopback with fresh
// local state, time requests, and describe the machine. Used by bench/<area>/run.mjs.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BENCH_ADMIN_TOKEN = '*:*.bench-admin-token';

const wranglerBin = path.join(ROOT, 'node_modules', '.bin', 'wrangler');

/**
 * Starts `wrangler dev` with a fresh persisted state (migrations applied) and waits for
 * /health. `seedSql(persistTo)`, when given, returns the path of a SQL file executed into the
 * local D1 before the server starts; its duration is returned as `seedSeconds`.
 * Returns `{ base, token, seedSeconds, stop }`.
 */
export async function startWorker({ port = 8790, token = BENCH_ADMIN_TOKEN, log = false, seedSql } = {}) {
  const persistTo = mkdtempSync(path.join(os.tmpdir(), 'unleash-bench-'));
  const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: '1' };
  const quiet = { cwd: ROOT, env, stdio: log ? 'inherit' : 'ignore' };
  execFileSync(wranglerBin, ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', persistTo], quiet);
  let seedSeconds = 0;
  if (seedSql) {
    const file = seedSql(persistTo);
    const started = performance.now();
    execFileSync(wranglerBin, ['d1', 'execute', 'DB', '--local', '--persist-to', persistTo, '--file', file, '--yes'], quiet);
    seedSeconds = (performance.now() - started) / 1000;
  }
  const child = spawn(
    wranglerBin,
    [
      'dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--persist-to',
      persistTo,
      '--var',
      `INIT_ADMIN_API_TOKENS:${token}`,
      '--log-level',
      'warn',
    ],
    { cwd: ROOT, env, stdio: log ? 'inherit' : 'ignore', detached: true },
  );
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const response = await fetch(`${base}/health`);
      if (response.ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      process.kill(-child.pid, 'SIGTERM');
      throw new Error('wrangler dev did not come up within 60 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    base,
    token,
    persistTo,
    seedSeconds,
    async stop() {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      rmSync(persistTo, { recursive: true, force: true });
    },
  };
}

export function percentile(sortedMs, p) {
  if (sortedMs.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sortedMs.length) - 1;
  return sortedMs[Math.min(sortedMs.length - 1, Math.max(0, rank))];
}

/**
 * Runs `request()` `total` times with `concurrency` in flight; returns rps and latency
 * percentiles in ms. `request` must resolve once the response body has been read.
 */
export async function load(request, { total = 2000, concurrency = 8, warmup = 50 } = {}) {
  for (let i = 0; i < warmup; i++) await request();
  const samples = [];
  let next = 0;
  const started = performance.now();
  async function worker() {
    while (next < total) {
      next++;
      const t0 = performance.now();
      await request();
      samples.push(performance.now() - t0);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedS = (performance.now() - started) / 1000;
  samples.sort((a, b) => a - b);
  return {
    requests: samples.length,
    rps: samples.length / elapsedS,
    p50: percentile(samples, 50),
    p95: percentile(samples, 95),
    p99: percentile(samples, 99),
  };
}

export function machine() {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    cpu: `${cpus.length} x ${cpus[0]?.model ?? 'unknown'}`,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadAvg: os
      .loadavg()
      .map((value) => value.toFixed(2))
      .join(' '),
  };
}

export const fmt = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
