/**
 * README.md's examples run, in order, against a fresh `wrangler dev` (see
 * scripts/readme-check.mjs): a newcomer who pastes them after `npm start` gets what the
 * README says. A block that fails names its README line and shows the failing command.
 */
import { describe, expect, it } from 'vitest';
import { checkReadme, readmeBlocks } from '../scripts/readme-check.mjs';

// Next to the SDK suite's port (TEST_WORKER_PORT), so both node suites can run at once.
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
