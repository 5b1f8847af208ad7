/**
 * `npm run migrate` from an Enterprise source carries its change-request settings: the
 * environments' predefined `requiredApprovals` and each project's per-environment settings,
 * and `--verify` compares them. The source is the recorded Unleash 6.10.1 replay made to
 * answer as Enterprise does (ui-config's `enterprise`, `requiredApprovals` on an environment,
 * `GET …/change-requests/config` per project); the target a fresh Worker under `wrangler dev`.
 * An OSS source is never asked for them (test/migrate-replay.node.test.ts: nothing unrecorded).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../bench/sdk/worker.mjs';
import { main } from '../scripts/migrate/main.mjs';
import { startReplay, type Replay } from './support/migrate-replay.mjs';
import { testWorkerPort } from './support/node-env';

const PORT = testWorkerPort(8796) + 30;
const SOURCE_TOKEN = '*:*.unleash6-admin-token';
const TARGET_TOKEN = '*:*.crgaps-target-admin';

interface Exchange {
  method: string;
  path: string;
  status: number;
  authorization?: string;
  body?: unknown;
  text: string;
  contentType?: string;
}

/** The 6.10.1 recording, answering as an Enterprise source with change-request settings. */
function enterpriseRecording(): string {
  const file = path.join(import.meta.dirname, 'fixtures', 'migrate', 'unleash-6.10.1.json');
  const recording = JSON.parse(readFileSync(file, 'utf8')) as { exchanges: Exchange[] };
  const extra: Exchange[] = [];
  for (const exchange of recording.exchanges) {
    if (exchange.method !== 'GET' || exchange.status !== 200) continue;
    if (exchange.path === '/api/admin/ui-config') {
      const config = JSON.parse(exchange.text);
      config.versionInfo = { ...config.versionInfo, current: { ...config.versionInfo?.current, enterprise: '6.10.1' } };
      exchange.text = JSON.stringify(config);
    }
    if (exchange.path === '/api/admin/environments') {
      const answer = JSON.parse(exchange.text);
      for (const environment of answer.environments) if (environment.name === 'production') environment.requiredApprovals = 2;
      exchange.text = JSON.stringify(answer);
    }
    if (exchange.path === '/api/admin/projects' && exchange.authorization === SOURCE_TOKEN) {
      for (const project of JSON.parse(exchange.text).projects as { id: string }[]) {
        const on = project.id === 'default';
        extra.push({
          method: 'GET',
          path: `/api/admin/projects/${encodeURIComponent(project.id)}/change-requests/config`,
          status: 200,
          authorization: SOURCE_TOKEN,
          contentType: 'application/json',
          text: JSON.stringify([
            { environment: 'production', type: 'production', changeRequestEnabled: on, requiredApprovals: on ? 3 : 1 },
          ]),
        });
      }
    }
  }
  recording.exchanges.push(...extra);
  const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'crgaps-mig-')), 'enterprise.json');
  writeFileSync(out, JSON.stringify(recording));
  return out;
}

describe('migrating the change-request settings of an Enterprise source', () => {
  let replay: Replay;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let work: string;

  // An admin answer, read field by field.
  const ours = async (pathname: string): Promise<any> => {
    const response = await fetch(`${worker.base}${pathname}`, { headers: { authorization: TARGET_TOKEN } });
    return response.json();
  };

  async function run(extra: string[]) {
    replay.rewind();
    const lines: string[] = [];
    const args = ['--from', replay.base, '--from-token', SOURCE_TOKEN, '--to', worker.base, '--to-token', TARGET_TOKEN];
    const files = ['--state-file', path.join(work, 'state.json'), '--links-file', path.join(work, 'links.tsv')];
    const reportFile = path.join(work, `report-${Date.now()}.json`);
    const code = await main([...args, ...files, '--prefix', 'mig-', '--overwrite', ...extra, '--report', reportFile], (line) =>
      lines.push(line),
    );
    return { code, lines, report: JSON.parse(readFileSync(reportFile, 'utf8')) };
  }

  beforeAll(async () => {
    replay = await startReplay(enterpriseRecording());
    work = mkdtempSync(path.join(os.tmpdir(), 'crgaps-mig-work-'));
    worker = await startWorker({ port: PORT, token: TARGET_TOKEN });
  }, 300_000);

  afterAll(async () => {
    await worker?.stop();
    await replay?.stop();
  });

  it('carries predefined approvals and project settings, verifies them, and writes nothing the second time', async () => {
    const first = await run([]);
    expect(first.report.failures).toEqual([]);
    const production = (await ours('/api/admin/environments')).environments.find((e: { name: string }) => e.name === 'production');
    expect(production.requiredApprovals).toBe(2);
    const config = await ours('/api/admin/projects/default/change-requests/config');
    expect(config.find((row: { environment: string }) => row.environment === 'production')).toMatchObject({
      changeRequestEnabled: true,
      requiredApprovals: 3,
    });
    expect(first.report.kinds['change-request settings']).toMatchObject({ created: 1 });
    const verified = await run(['--verify']);
    expect(verified.lines.filter((line) => /requiredApprovals|change requests of/.test(line))).toEqual([]);
    expect(verified.lines.some((line) => line.startsWith('verify:'))).toBe(true);

    const second = await run([]);
    expect(second.report.kinds['change-request settings']).toMatchObject({ created: 0, updated: 0, conflict: 0 });
    expect(second.report.kinds.environments).toMatchObject({ updated: 0 });
  }, 600_000);

  it('--verify names a setting that differs here', async () => {
    const response = await fetch(`${worker.base}/api/admin/projects/default/environments/production/change-requests/config`, {
      method: 'PUT',
      headers: { authorization: TARGET_TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ changeRequestsEnabled: true, requiredApprovals: 5 }),
    });
    expect(response.status).toBeLessThan(300);
    const lines: string[] = [];
    replay.rewind();
    await main(
      [
        '--from',
        replay.base,
        '--from-token',
        SOURCE_TOKEN,
        '--to',
        worker.base,
        '--to-token',
        TARGET_TOKEN,
        '--dry-run',
        '--verify',
        '--prefix',
        'mig-',
        '--state-file',
        path.join(work, 'state.json'),
        '--links-file',
        path.join(work, 'links.tsv'),
      ],
      (line) => lines.push(line),
    );
    expect(lines).toContain(
      'change requests of default/production: {"changeRequestsEnabled":true,"requiredApprovals":3} (source) vs {"changeRequestsEnabled":true,"requiredApprovals":5} (ours)',
    );
  }, 600_000);
});
