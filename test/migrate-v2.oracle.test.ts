/**
 * `npm run test:oracles`: Unleash 8.1+ v2 tokens carried over by `--from-db`. The source is a
 * real 8.2.0 started with its v2 tokens on (`UNLEASH_EXPERIMENTAL_SECURE_TOKEN=true`), given by
 * UNLEASH8_V2_URL and its PostgreSQL by UNLEASH8_V2_DB (skipped without them: the shared
 * oracles issue legacy tokens). Its API lists a v2 token without secret or hash; the command
 * reads selector and verifier in a read-only transaction, and the very same key then works here.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../bench/sdk/worker.mjs';
import { main } from '../scripts/migrate/main.mjs';
import { testWorkerPort } from './support/node-env';

const env = (globalThis as unknown as { process: { env: Record<string, string | undefined> } }).process.env;
const URL8 = env.UNLEASH8_V2_URL;
const DB8 = env.UNLEASH8_V2_DB;
const ADMIN = '*:*.unleash-insecure-admin-api-token';
const TARGET = '*:*.migv2-target-admin';
const PREFIX = `migv2-${Date.now().toString(36)}-`;
const PORT = testWorkerPort(8796) + 40;

async function admin(method: string, pathname: string, body?: unknown) {
  const response = await fetch(`${URL8}${pathname}`, {
    method,
    headers: { authorization: ADMIN, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${pathname}: ${response.status} ${await response.text()}`);
  const text = await response.text();
  return text ? JSON.parse(text) : undefined;
}

describe.skipIf(!URL8 || !DB8)('migrating v2 tokens from a secure-token Unleash 8.2.0 (--from-db)', () => {
  let worker: Awaited<ReturnType<typeof startWorker>>;
  const secrets = { client: '', frontend: '' };
  const flag = `${PREFIX}flag`;

  beforeAll(async () => {
    await admin('POST', '/api/admin/projects/default/features', { name: flag });
    await admin('POST', `/api/admin/projects/default/features/${flag}/environments/development/on`);
    for (const type of ['client', 'frontend'] as const) {
      const created = (await admin('POST', '/api/admin/api-tokens', {
        tokenName: `${PREFIX}${type}`,
        type,
        environment: 'development',
        projects: ['*'],
      })) as { secret: string };
      secrets[type] = created.secret;
    }
    worker = await startWorker({ port: PORT, token: TARGET });
  });
  afterAll(async () => {
    await worker?.stop();
  });

  const args = () => ['--from', URL8!, '--from-token', ADMIN, '--to', worker.base, '--to-token', TARGET, '--prefix', PREFIX];

  it('the source issued v2 keys, and lists them without their secret', async () => {
    expect(secrets.client).toMatch(/^\*:development\.v2_[A-Za-z0-9_-]{22}_[A-Za-z0-9_-]+$/);
    const listed = (await admin('GET', '/api/admin/api-tokens')) as { tokens: { tokenName: string; secret: string }[] };
    const ours = listed.tokens.filter((token) => token.tokenName.startsWith(PREFIX));
    expect(ours).toHaveLength(2);
    for (const token of ours) expect(Object.values(secrets)).not.toContain(token.secret);
  });

  it('without --from-db the v2 tokens are reported as not copied; with it the same keys work here', async () => {
    const work = mkdtempSync(path.join(os.tmpdir(), 'migv2-'));
    const state = ['--state-file', path.join(work, 'state.json'), '--links-file', path.join(work, 'links.tsv')];
    const before = path.join(work, 'before.json');
    await main([...args(), ...state, '--report', before], () => undefined);
    const unread = await fetch(`${worker.base}/api/client/features`, { headers: { authorization: secrets.client } });
    expect(unread.status).toBe(401);

    const lines: string[] = [];
    const report = path.join(work, 'report.json');
    const copied = await main([...args(), ...state, '--from-db', DB8!, '--report', report], (line: string) => lines.push(line));
    expect(copied, lines.join('\n')).toBe(0);
    expect(lines.join('\n')).not.toContain(secrets.client.split('_').at(-1));

    const features = await fetch(`${worker.base}/api/client/features`, { headers: { authorization: secrets.client } });
    expect(features.status).toBe(200);
    const body = (await features.json()) as { features: { name: string; enabled: boolean }[] };
    expect(body.features.find((feature) => feature.name === flag)?.enabled).toBe(true);

    // --verify compares both tokens when given their secrets (--keys), and fails without them.
    const keys = path.join(work, 'keys.txt');
    writeFileSync(keys, `${secrets.client}\n${secrets.frontend}\n`, { mode: 0o600 });
    const verified: string[] = [];
    expect(await main([...args(), '--verify', '--keys', keys], (line: string) => verified.push(line))).toBe(0);
    expect(verified.join('\n')).toContain('compared 2 of 2 SDK tokens of the source');
    const unverified: string[] = [];
    expect(await main([...args(), '--verify'], (line: string) => unverified.push(line))).toBe(1);
    expect(unverified.join('\n')).toContain('compared 0 of 2 SDK tokens of the source');
  });
});
