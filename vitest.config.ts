import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';
import { control, outbound } from './test/support/receiver.ts';
import { upstream, upstreamControl, UPSTREAM_HOST } from './test/support/edge-upstream.ts';

export const TEST_ADMIN_TOKEN = '*:*.test-admin-token';

/** Tests that drive the real Worker from Node (wrangler dev), e.g. with the official SDKs. */
const NODE_TESTS = 'test/**/*.node.test.ts';
/** Edge mode (wrangler.toml [env.edge]) in front of a replay of a real Unleash (test/support/edge-upstream.ts). */
const EDGE_TESTS = 'test/edge/**/*.test.ts';
/** Tests against the live Unleash oracles (`npm run test:oracles`: Edge mode, migration), never part of `npm test`. */
const ORACLE_TESTS = 'test/**/*.oracle.test.ts';
/** Unleash's own admin UI in a real browser against the Worker under wrangler dev (test/ui/). */
const UI_TESTS = 'test/ui/**/*.ui.test.ts';

// Wrangler logs "Using secrets defined in .dev.vars" at log level for every test file once
// `npm start` has created .dev.vars; the tests set their own bindings, so keep wrangler to
// warnings and errors (read lazily by wrangler's logger, so setting it here is enough).
process.env.WRANGLER_LOG ??= 'warn';

export default defineConfig(async () => {
  const migrations = await readD1Migrations('./migrations');
  return {
    test: {
      projects: [
        {
          plugins: [
            cloudflareTest({
              wrangler: { configPath: './wrangler.toml' },
              miniflare: {
                bindings: {
                  TEST_MIGRATIONS: migrations,
                  INIT_ADMIN_API_TOKENS: `${TEST_ADMIN_TOKEN}, *:*.second-admin-token`,
                  // Tests write and read back at once: check the SDK data revision on every request.
                  SDK_REVISION_CHECK_MS: '0',
                  // …also while an open stream listens to the change feed (test/streaming-push.test.ts sets its own).
                  SDK_PUSH_FALLBACK_MS: '0',
                  // The binding queues its usage counts after every call, not once a minute.
                  BINDING_METRICS_INTERVAL_MS: '0',
                  // Integration retries at once, not after seconds of backoff.
                  INTEGRATIONS_RETRY_DELAY_SECONDS: '0',
                  // Failed metrics flushes too.
                  METRICS_RETRY_DELAY_SECONDS: '0',
                  // Set here so that a developer's .dev.vars (which allows them, for trying
                  // integrations locally) cannot change what the private-target tests see.
                  INTEGRATIONS_ALLOW_PRIVATE_TARGETS: 'false',
                },
                // Integrations deliver to a receiver in this process (test/support/receiver.ts).
                outboundService: outbound,
                serviceBindings: { RECEIVER: control },
                queueConsumers: {
                  'unleash-import': { maxBatchTimeout: 0.05 },
                  // An entry here replaces wrangler.toml's consumer: restate its retries and dead letters.
                  'unleash-integrations': { maxBatchTimeout: 0.05, maxRetries: 5, deadLetterQueue: 'unleash-integrations-dlq' },
                  'unleash-integrations-dlq': { maxBatchTimeout: 0.05 },
                  // Metrics posts reach D1 through this queue: tests wait for it (test/support/metrics.ts).
                  'unleash-metrics': { maxBatchSize: 100, maxBatchTimeout: 0.05, maxRetries: 3, deadLetterQueue: 'unleash-metrics-dlq' },
                  'unleash-metrics-dlq': { maxBatchTimeout: 0.05 },
                },
              },
            }),
          ],
          test: {
            name: 'workers',
            include: ['test/**/*.test.ts'],
            exclude: [NODE_TESTS, UI_TESTS, EDGE_TESTS, ORACLE_TESTS],
            setupFiles: ['./test/support/apply-migrations.ts', './test/support/documented-responses.ts'],
            testTimeout: 30_000,
            hookTimeout: 60_000,
          },
        },
        {
          plugins: [
            cloudflareTest({
              wrangler: { configPath: './wrangler.toml', environment: 'edge' },
              miniflare: {
                bindings: {
                  EDGE_UPSTREAM_URL: `http://${UPSTREAM_HOST}`,
                  EDGE_WEBHOOK_SECRET: 'edge-test-webhook-secret',
                  // Tests move the upstream and read back at once: isolates ask the sync object every time.
                  EDGE_CHECK_MS: '0',
                  // The binding hands on its usage after every call, not once a minute.
                  BINDING_METRICS_INTERVAL_MS: '0',
                },
                outboundService: upstream,
                serviceBindings: { UPSTREAM: upstreamControl },
              },
            }),
          ],
          test: {
            name: 'edge',
            include: [EDGE_TESTS],
            // One recorded upstream (its phase, up or down) for the project: files take turns.
            fileParallelism: false,
            exclude: [NODE_TESTS],
            testTimeout: 30_000,
            hookTimeout: 60_000,
          },
        },
        {
          test: {
            name: 'node',
            environment: 'node',
            include: [NODE_TESTS],
            testTimeout: 120_000,
            hookTimeout: 120_000,
          },
        },
        {
          test: {
            name: 'oracles',
            environment: 'node',
            include: [ORACLE_TESTS],
            // `npm run test:oracles` (docs/edge.md, docs/migrate.md). The oracles are shared: one suite at a time.
            fileParallelism: false,
            testTimeout: 600_000,
            hookTimeout: 600_000,
          },
        },
        {
          test: {
            name: 'ui',
            environment: 'node',
            include: [UI_TESTS],
            // One browser and one Worker for the file; the flows run one after another.
            fileParallelism: false,
            // The UI renders after its calls land; a page can take seconds on a busy machine.
            expect: { poll: { timeout: 20_000, interval: 100 } },
            testTimeout: 180_000,
            hookTimeout: 240_000,
          },
        },
      ],
    },
  };
});
