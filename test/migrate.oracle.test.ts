/**
 * `npm run test:oracles`: the migration against the live Unleash 6.10.1 (:4243) and 8.2.0
 * (:4242) oracles of /work/shared (see docs/migrate.md). Both must be running; everything
 * created on them is named `mig-…`. Not part of `npm test`: CI replays recorded answers
 * instead (test/migrate-replay.node.test.ts).
 */
import { migrationSuite } from './support/migrate-suite';
import { testWorkerPort } from './support/node-env';
import { personalToken, seed } from '../scripts/migrate/seed.mjs';

const PORT = testWorkerPort(8796) + 30;
const nodeProcess = (globalThis as unknown as { process: { env: Record<string, string | undefined> } }).process;

for (const [version, url, adminToken] of [
  ['6.10.1', nodeProcess.env.UNLEASH6_URL ?? 'http://127.0.0.1:4243', '*:*.unleash6-admin-token'],
  ['8.2.0', nodeProcess.env.UNLEASH8_URL ?? 'http://127.0.0.1:4242', '*:*.unleash-insecure-admin-api-token'],
] as const) {
  migrationSuite(
    `Unleash ${version} (live oracle)`,
    {
      url: () => url,
      adminToken,
      live: true,
      setUp: async () => {
        // Unleash's import refuses admin tokens: the seed imports with the admin user's personal token.
        const importToken = await personalToken(url, 'admin', 'unleash4all', 'mig-');
        await seed({ url, token: adminToken, importToken, prefix: 'mig-', log: () => undefined });
      },
    },
    PORT,
  );
}
