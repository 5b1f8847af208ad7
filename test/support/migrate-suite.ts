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

/** The official Node SDK, synchronised once with `url` under `key`. */
export async function syncedSdk(url: string, key: string): Promise<Unleash> {
  const sdk = new Unleash({
    url: `${url}/api/`,
    appName: 'mig-test',
    customHeaders: { Authorization: key },
    disableMetrics: true,
    // Not 0: the SDK then never fetches, and 'synchronized' never comes. destroy() stops polling.
    refreshInterval: 60_000,
    skipInstanceCountWarning: true,
  });
  await new Promise<void>((resolve, reject) => {
    (sdk as unknown as { once(event: string, listener: (value: unknown) => void): void }).once('synchronized', () => resolve());
    (sdk as unknown as { once(event: string, listener: (value: unknown) => void): void }).once('error', reject);
  });
  return sdk;
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

    it('--verify compares every SDK token of the source, `*` ones included, and finds no difference', async () => {
      source.rewind?.();
      const lines: string[] = [];
      const code = await main([...args(), '--verify'], (line) => lines.push(line));
      const sdkTokens = tokens.filter((token) => ['client', 'frontend'].includes(token.type));
      expect(sdkTokens.some((token) => token.secret.startsWith('*:'))).toBe(true);
      expect(lines).toContain(`compared ${sdkTokens.length} of ${sdkTokens.length} SDK tokens of the source`);
      expect(lines.at(-1)).toMatch(new RegExp(`verify: ${sdkTokens.length} token\\(s\\), \\d+ comparison\\(s\\), 0 difference\\(s\\)`));
      expect(code).toBe(0);
    }, 300_000);

    it('a second run writes nothing: no request, no event', async () => {
      const lastEventId = async () =>
        (
          (await (await fetch(`${worker.base}/api/admin/events`, { headers: { authorization: TARGET_TOKEN } })).json()) as {
            events: { id: number }[];
          }
        ).events[0]?.id;
      const before = await lastEventId();
      const { code, report } = await run(['--overwrite'], 'second');
      expect(code).toBe(0);
      expect(report.writes).toBe(0);
      expect(await lastEventId()).toBe(before);
      for (const counts of Object.values(report.kinds)) {
        expect(counts.created ?? 0).toBe(0);
        expect(counts.updated ?? 0).toBe(0);
      }
    }, 300_000);

    it("the official Node SDK, given the source's own client token, gets the same flags and variants from us", async () => {
      const client = tokens.filter((t) => t.type === 'client');
      expect(client.some((token) => token.secret.startsWith('*:'))).toBe(true);
      for (const token of client) {
        source.rewind?.();
        const sdks = await Promise.all([source.url(), worker.base].map((url) => syncedSdk(url, token.secret)));
        try {
          const [theirs, ours] = sdks.map((sdk) => sdk.getFeatureToggleDefinitions().filter((feature) => feature.name.startsWith(PREFIX)));
          expect(ours!.map((feature) => feature.name).sort()).toEqual(theirs!.map((feature) => feature.name).sort());
          let threeWay = 0;
          for (const feature of theirs!) {
            if (feature.strategies?.some((strategy) => (strategy.variants ?? []).length === 3)) threeWay++;
            for (let user = 0; user < 40; user++) {
              const context = { userId: `user-${user}`, sessionId: `s-${user}`, properties: { 'mig-region': 'eu', 'mig-tier': '12' } };
              const [a, b] = sdks.map((sdk) => `${sdk.isEnabled(feature.name, context)}:${sdk.getVariant(feature.name, context).name}`);
              expect(b, `${feature.name} for user-${user}`).toBe(a);
            }
          }
          expect(threeWay).toBeGreaterThan(0);
        } finally {
          for (const sdk of sdks) sdk.destroy();
        }
      }
    }, 300_000);

    it.runIf(source.live)(
      '--to at a real Unleash is refused before anything is written there',
      async () => {
        const lastEventId = async () =>
          (
            (await (await fetch(`${source.url()}/api/admin/events`, { headers: { authorization: source.adminToken } })).json()) as {
              events: { id: number }[];
            }
          ).events[0]?.id;
        const before = await lastEventId();
        const lines: string[] = [];
        const code = await main(
          ['--from', source.url(), '--from-token', source.adminToken, '--to', source.url(), '--to-token', source.adminToken, ...files()],
          (line) => lines.push(line),
        );
        expect(code).toBe(1);
        expect(lines.join('\n')).toMatch(/is not this service.*nothing was written/);
        expect(await lastEventId()).toBe(before);
      },
      120_000,
    );

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
              // Not 0: the SDK then never fetches, and 'synchronized' never comes. destroy() stops polling.
              refreshInterval: 60_000,
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
