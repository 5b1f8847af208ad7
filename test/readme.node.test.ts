/**
 * README.md's examples run, in order, against a fresh `wrangler dev` (see
 * scripts/readme-check.mjs): a newcomer who pastes them after `npm start` gets what the
 * README says. A block that fails names its README line and shows the failing command.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkReadme, readmeBlocks } from '../scripts/readme-check.mjs';

// Next to the SDK suite's port (TEST_WORKER_PORT), so both node suites can run at once.
const ROOT = path.resolve(import.meta.dirname, '..');
const PORT = Number(process.env.TEST_WORKER_PORT ?? 8793) + 2;

describe('README examples', () => {
  it('has runnable blocks for every API section', () => {
    const blocks = readmeBlocks();
    const code = blocks.map((block) => block.code).join('\n');
    for (const path of [
      '/api-tokens',
      '/roles',
      '/user-admin',
      '/invite/',
      '/search/features',
      '/features-batch/import',
      '/api/client/features',
      '/api/frontend',
    ]) {
      expect(code).toContain(path);
    }
    expect(blocks.some((block) => block.lang === 'js')).toBe(true);
  });

  it('run in order on a fresh service, every command answering the status the README shows', async () => {
    const { blocks, results } = await checkReadme({ port: PORT });
    const failed = results.find((result) => !result.ok);
    expect(failed ? `README.md:${failed.line} failed:\n${failed.output.slice(-4000)}` : 'all passed').toBe('all passed');
    expect(results.length).toBe(blocks);
  }, 300_000);
});

describe('README "Deploying to Cloudflare"', () => {
  it('creates every D1 database, KV namespace and Queue wrangler.toml binds, so a deploy that follows it finds them', () => {
    const config = readFileSync(path.join(ROOT, 'wrangler.toml'), 'utf8');
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const guide = readme.slice(readme.indexOf('## Deploying to Cloudflare'));
    const queues = new Set([...config.matchAll(/^\s*(?:queue|dead_letter_queue)\s*=\s*"([^"]+)"/gm)].map((match) => match[1]!));
    const databases = [...config.matchAll(/^\s*database_name\s*=\s*"([^"]+)"/gm)].map((match) => match[1]!);
    const namespaces = [...config.matchAll(/\[\[kv_namespaces\]\]\s*\nbinding\s*=\s*"([^"]+)"/g)].map((match) => match[1]!);
    expect(queues.size).toBeGreaterThanOrEqual(6);
    expect(databases.length).toBeGreaterThan(0);
    expect(namespaces.length).toBeGreaterThan(0);
    const created = new Set([...guide.matchAll(/^npx wrangler (?:queues|d1|kv namespace) create (\S+)/gm)].map((match) => match[1]!));
    expect([...queues, ...databases, ...namespaces].filter((name) => !created.has(name))).toEqual([]);
    // And the prose counts the queues it creates (one Queue and its dead-letter queue each).
    const words = ['no', 'one', 'two', 'three', 'four', 'five'];
    expect(guide).toContain(`${words[[...queues].filter((name) => !name.endsWith('-dlq')).length]} Queues`);
  });
});
