/**
 * `npm run migrate` in CI: the source is a replay of what the real Unleash 6.10.1 and 8.2.0
 * answered (recorded by scripts/migrate/record.mjs, served by test/support/migrate-replay.mjs),
 * the target a fresh Worker under `wrangler dev`. The same suite runs against the live
 * oracles in test/migrate.oracle.test.ts (`npm run test:oracles`).
 */
import path from 'node:path';
import { expect } from 'vitest';
import { startReplay, type Replay } from './support/migrate-replay.mjs';
import { migrationSuite } from './support/migrate-suite';
import { testWorkerPort } from './support/node-env';

const PORT = testWorkerPort(8796) + 20;

for (const [version, adminToken] of [
  ['6.10.1', '*:*.unleash6-admin-token'],
  ['8.2.0', '*:*.unleash-insecure-admin-api-token'],
] as const) {
  let replay: Replay;
  migrationSuite(
    `recorded Unleash ${version}`,
    {
      url: () => replay.base,
      adminToken,
      live: false,
      setUp: async () => {
        replay = await startReplay(path.join(import.meta.dirname, 'fixtures', 'migrate', `unleash-${version}.json`));
      },
      tearDown: async () => {
        // Every request the migration sent was one the real Unleash answered when recorded.
        expect(replay.unmatched.filter((request) => !/\/api\/client\/(register|metrics)/.test(request))).toEqual([]);
        await replay.stop();
      },
      rewind: () => replay.rewind(),
    },
    PORT,
  );
}
