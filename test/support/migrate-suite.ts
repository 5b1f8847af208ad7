/**
 * The migration's behaviour, written once and run against a real Unleash (live oracles,
 * `npm run test:oracles`) or against answers recorded from one (CI). A fresh Worker under
 * `wrangler dev` is the target each time.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Unleash } from 'unleash-client';
import { UnleashClient } from 'unleash-proxy-client';
import { startWorker } from '../../bench/sdk/worker.mjs';
import { main } from '../../scripts/migrate/main.mjs';
import { normalClientFeatures } from '../../scripts/migrate/verify.mjs';

export const TARGET_TOKEN = '*:*.mig-target-admin';
const PREFIX = 'mig-';
const ROOT = path.resolve(import.meta.dirname, '..', '..');

interface SourceToken {
  secret: string;
  tokenName: string;
  type: string;
  environment: string;
}

export interface MigrationSource {
  /** The source's URL (an oracle or a replay of one). */
  url: () => string;
  adminToken: string;
  /** Runs before the suite: seeding, starting a replay. */
  setUp?: () => Promise<void>;
  tearDown?: () => Promise<void>;
  /** Before a further run of the same migration (a replay serves its answers again from the start). */
  rewind?: () => void;
  /** Whether the frontend SDK can be pointed at the source (a replay holds only the contexts --verify sent). */
  live: boolean;
}

interface Report {
  kinds: Record<string, Record<string, number>>;
  notCopyable: { kind: string; name: string }[];
  conflicts: unknown[];
  failures: unknown[];
  writes: number;
}

export function migrationSuite(name: string, source: MigrationSource, port: number) {
  describe(`migrating from ${name}`, () => {
    let worker: Awaited<ReturnType<typeof startWorker>>;
    let work: string;
    let tokens: SourceToken[];

    const args = () => [
      '--from',
      source.url(),
      '--from-token',
      source.adminToken,
      '--to',
      worker.base,
      '--to-token',
      TARGET_TOKEN,
      '--prefix',
      PREFIX,
    ];
    const files = () => ['--state-file', path.join(work, 'state.json'), '--links-file', path.join(work, 'links.tsv')];
    async function run(extra: string[], reportName: string): Promise<{ code: number; report: Report; lines: string[] }> {
      source.rewind?.();
      const lines: string[] = [];
      const reportFile = path.join(work, `${reportName}.json`);
      const code = await main([...args(), ...files(), ...extra, '--report', reportFile], (line) => lines.push(line));
      return { code, report: JSON.parse(readFileSync(reportFile, 'utf8')) as Report, lines };
    }

    beforeAll(async () => {
      await source.setUp?.();
      work = mkdtempSync(path.join(os.tmpdir(), 'mig-test-'));
      worker = await startWorker({ port, token: TARGET_TOKEN });
      source.rewind?.();
      const listed = await fetch(`${source.url()}/api/admin/api-tokens`, { headers: { authorization: source.adminToken } });
      tokens = ((await listed.json()) as { tokens: SourceToken[] }).tokens.filter((token) => token.tokenName.startsWith(PREFIX));
    }, 300_000);

    afterAll(async () => {
      await worker?.stop();
      await source.tearDown?.();
    });

    it('a dry run reports what it would create and writes nothing', async () => {
      const { code, report, lines } = await run(['--dry-run', '--overwrite'], 'dry');
      expect(report.failures).toEqual([]);
      expect(code).toBe(0);
      expect(report.writes).toBe(0);
      expect(report.kinds.flags!.created).toBeGreaterThanOrEqual(195);
      expect(lines.some((line) => line.startsWith('would write:'))).toBe(true);
      const flags = await fetch(`${worker.base}/api/admin/search/features?query=${PREFIX}`, { headers: { authorization: TARGET_TOKEN } });
      expect(((await flags.json()) as { total: number }).total).toBe(0);
    }, 300_000);

    it('a non-admin token on either side is refused with a clear message, and nothing is written', async () => {
      const client = tokens.find((token) => token.type === 'client')!;
      source.rewind?.();
      const lines: string[] = [];
      const code = await main(
        ['--from', source.url(), '--from-token', client.secret, '--to', worker.base, '--to-token', TARGET_TOKEN, ...files()],
        (line) => lines.push(line),
      );
      expect(code).toBe(1);
      expect(lines.join('\n')).toMatch(/source: the token was refused .*admin API token/);

      const ours = await fetch(`${worker.base}/api/admin/api-tokens`, {
        method: 'POST',
        headers: { authorization: TARGET_TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({ tokenName: 'mig-test-client', type: 'client', environment: 'development' }),
      });
      const ourClient = ((await ours.json()) as { secret: string }).secret;
      source.rewind?.();
      const refused: string[] = [];
      const targetCode = await main(
        ['--from', source.url(), '--from-token', source.adminToken, '--to', worker.base, '--to-token', ourClient, ...files()],
        (line) => refused.push(line),
      );
      expect(targetCode).toBe(1);
      expect(refused.join('\n')).toMatch(/target: the token .*admin/);
      const flags = await fetch(`${worker.base}/api/admin/search/features?query=${PREFIX}`, { headers: { authorization: TARGET_TOKEN } });
      expect(((await flags.json()) as { total: number }).total).toBe(0);
    }, 300_000);

    it('a run killed halfway and started again ends with everything copied', async () => {
      // Killed as soon as it reports the first kinds done: the rest is left for the second run.
      const child = spawn(process.execPath, [path.join(ROOT, 'scripts/migrate/main.mjs'), ...args(), ...files(), '--overwrite'], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      if (!source.live) {
        // A replay is served by this process: the child must reach it like any other source.
        expect(source.url()).toMatch(/^http:\/\/127\.0\.0\.1:/);
      }
      await new Promise<void>((resolve) => {
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (/segments\s/.test(output)) {
            child.kill('SIGKILL');
            resolve();
          }
        });
        child.on('exit', () => resolve());
      });
      const { code, report } = await run(['--overwrite'], 'resumed');
      expect(report.failures).toEqual([]);
      expect(report.conflicts).toEqual([]);
      expect(code).toBe(0);
      expect((report.kinds.flags!.created ?? 0) + (report.kinds.flags!.updated ?? 0) + (report.kinds.flags!.unchanged ?? 0)).toBe(
        report.kinds.flags!.read,
      );
      expect(report.kinds['api tokens']!.created).toBe(tokens.length);
      expect(report.notCopyable.map((item) => item.kind)).toEqual(expect.arrayContaining(['personal access tokens', 'passwords']));
      const links = statSync(path.join(work, 'links.tsv'));
      expect(links.mode & 0o777).toBe(0o600);
    }, 600_000);

    it('--verify finds no difference for any copied client or frontend token', async () => {
      source.rewind?.();
      const lines: string[] = [];
      const code = await main([...args(), '--verify'], (line) => lines.push(line));
      expect(lines.at(-1)).toMatch(/verify: 4 token\(s\), \d+ comparison\(s\), 0 difference\(s\)/);
      expect(code).toBe(0);
    }, 300_000);

    it('a second run writes nothing', async () => {
      const { code, report } = await run(['--overwrite'], 'second');
      expect(code).toBe(0);
      expect(report.writes).toBe(0);
      for (const counts of Object.values(report.kinds)) {
        expect(counts.created ?? 0).toBe(0);
        expect(counts.updated ?? 0).toBe(0);
      }
    }, 300_000);

    it("the official Node SDK, given the source's own client token, gets the same flags from us", async () => {
      for (const token of tokens.filter((t) => t.type === 'client')) {
        source.rewind?.();
        const theirs = await fetch(`${source.url()}/api/client/features`, { headers: { authorization: token.secret } });
        const expected = normalClientFeatures(await theirs.json()).filter((feature) => feature.name.startsWith(PREFIX));
        const sdk = new Unleash({
          url: `${worker.base}/api/`,
          appName: 'mig-test',
          customHeaders: { Authorization: token.secret },
          disableMetrics: true,
          refreshInterval: 500,
          skipInstanceCountWarning: true,
        });
        await new Promise<void>((resolve, reject) => {
          (sdk as unknown as { once(event: string, listener: (value: unknown) => void): void }).once('synchronized', () => resolve());
          (sdk as unknown as { once(event: string, listener: (value: unknown) => void): void }).once('error', reject);
        });
        const got = sdk.getFeatureToggleDefinitions().filter((feature) => feature.name.startsWith(PREFIX));
        expect(got.map((feature) => feature.name).sort()).toEqual(expected.map((feature) => feature.name).sort());
        for (const feature of expected) {
          expect(got.find((candidate) => candidate.name === feature.name)?.enabled, feature.name).toBe(feature.enabled);
        }
        sdk.destroy();
      }
    }, 120_000);

    // Only live: the proxy client sends its own contexts, and a replay holds only the ones --verify sent
    // (the recorded frontend answers are compared by --verify above instead).
    it.runIf(source.live)(
      "unleash-proxy-client, given the source's own frontend token, gets the same flags from us",
      async () => {
        for (const token of tokens.filter((t) => t.type === 'frontend')) {
          const answers: Record<string, string[]> = {};
          for (const [label, url] of [
            ['source', source.url()],
            ['ours', worker.base],
          ] as const) {
            const client = new UnleashClient({
              url: `${url}/api/frontend`,
              clientKey: token.secret,
              appName: 'mig-test',
              refreshInterval: 0,
              disableMetrics: true,
            });
            client.updateContext({ userId: 'user-11', properties: { 'mig-region': 'eu', 'mig-tier': '12' } });
            await client.start();
            answers[label] = client
              .getAllToggles()
              .filter((toggle) => toggle.name.startsWith(PREFIX))
              .map((toggle) => `${toggle.name}:${toggle.enabled}:${toggle.variant.name}`)
              .sort();
            client.stop();
          }
          expect(answers.ours).toEqual(answers.source);
          expect(answers.ours!.length).toBeGreaterThan(0);
        }
      },
      120_000,
    );
  });
}
