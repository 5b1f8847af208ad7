/**
 * What the Edge oracle tests (test/oracles/edge*.oracle.test.ts) share: waiting for something,
 * and our Worker under `wrangler dev --env edge` in front of a given upstream.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function startEdge(
  port: number,
  upstream: string,
  options: { webhookSecret: string; persistTo?: string; vars?: Record<string, string> },
): Promise<{ base: string; stop: () => void }> {
  const persistTo = options.persistTo ?? mkdtempSync(path.join(os.tmpdir(), 'edge-oracle-state-'));
  const wrangler = path.join(ROOT, 'node_modules', '.bin', 'wrangler');
  const vars = {
    EDGE_UPSTREAM_URL: upstream,
    EDGE_SYNC_INTERVAL_SECONDS: '2',
    EDGE_METRICS_INTERVAL_SECONDS: '2',
    EDGE_WEBHOOK_SECRET: options.webhookSecret,
    ...options.vars,
  };
  const child: ChildProcess = spawn(
    wrangler,
    [
      'dev',
      '--env',
      'edge',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--persist-to',
      persistTo,
      ...Object.entries(vars).flatMap(([name, value]) => ['--var', `${name}:${value}`]),
      '--log-level',
      'warn',
    ],
    {
      cwd: ROOT,
      env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: '1' },
      stdio: 'ignore',
      detached: true,
    },
  );
  const base = `http://127.0.0.1:${port}`;
  await until('wrangler dev --env edge', async () => (await fetch(`${base}/internal-backstage/health`)).ok, 90_000);
  return {
    base,
    stop: () => {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
      // A state directory the caller gave outlives this process (a restart on the same state).
      if (!options.persistTo) rmSync(persistTo, { recursive: true, force: true });
    },
  };
}
