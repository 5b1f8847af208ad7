// Runs README.md's examples, in order, against a fresh local Worker (wrangler dev with fresh
// --persist-to state), so that a newcomer who runs them after `npm start` gets what the README
// says. Used by test/readme.node.test.ts; also runnable alone:
//   node scripts/readme-check.mjs [port]
//
// What runs: every fenced block whose info string is exactly `sh` (each in its own
// `bash -e -o pipefail`, so a block may not lean on an earlier block's shell variables, only on
// what earlier blocks created in the service) and every block fenced `js` (an ES module run
// with node from the project root, so `unleash-client` and `unleash-proxy-client` resolve).
// Shell blocks that must not run here (install, deploy) are fenced `bash` instead.
// Blocks run in a scratch directory (files they write, like import.json, land there) and
// `localhost:8787` in a block is pointed at the test port. Expected statuses are checked by
// the examples themselves: `curl -f` fails on any 4xx/5xx, and the few examples that show an
// error compare the status explicitly.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startWorker } from '../bench/sdk/worker.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The admin key README's examples use: the one `.dev.vars.example` gives `npm start`. */
export const README_ADMIN_TOKEN = '*:*.local-dev-admin-token';

/** The runnable blocks of a Markdown text, in order: `{ lang, line, code }`. */
export function extractBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    if (open[1] === 'sh' || open[1] === 'js') blocks.push({ lang: open[1], line: start + 1, code: body.join('\n') });
  }
  return blocks;
}

/** README.md's runnable blocks. */
export function readmeBlocks(readme = path.join(ROOT, 'README.md')) {
  return extractBlocks(readFileSync(readme, 'utf8'));
}

function pointAt(code, port) {
  return code.replaceAll('localhost:8787', `127.0.0.1:${port}`);
}

/**
 * Runs one block; returns `{ ok, output }`. Shell blocks run with -x so a failure shows the
 * command that failed; js blocks get UNLEASH_URL and the keys they read from the environment.
 */
export function runBlock(block, { port, scratch, env = {} }) {
  const code = pointAt(block.code, port);
  const options = { cwd: scratch, encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } };
  let result;
  if (block.lang === 'sh') {
    result = spawnSync('bash', ['-e', '-o', 'pipefail', '-x', '-c', code], options);
  } else {
    const file = path.join(scratch, `readme-line-${block.line}.mjs`);
    writeFileSync(file, code);
    result = spawnSync(process.execPath, [file], options);
  }
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`;
  // `// prints: <text>` in a js block is a promise to the reader: hold the block to it.
  const promised = [...block.code.matchAll(/\/\/ prints: (.+)$/gm)].map((match) => match[1].trim());
  const missing = promised.filter((text) => !(result.stdout ?? '').includes(text));
  if (missing.length > 0) return { ok: false, output: `${output}\nexpected output: ${missing.join(', ')}` };
  return { ok: result.status === 0, output };
}

async function adminCall(base, method, route, body) {
  const response = await fetch(`${base}${route}`, {
    method,
    headers: { authorization: README_ADMIN_TOKEN, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
  return response.json();
}

/**
 * Starts a fresh Worker on `port`, runs every block of README.md in order and stops at the
 * first failure. Returns `{ results: [{ line, lang, ok, output }] }`.
 */
export async function checkReadme({ port, readme = path.join(ROOT, 'README.md') }) {
  const blocks = readmeBlocks(readme);
  const scratch = path.join(ROOT, '.wrangler', `readme-check-${port}`);
  mkdirSync(scratch, { recursive: true });
  const worker = await startWorker({ port, token: README_ADMIN_TOKEN });
  const results = [];
  try {
    let keys;
    for (const block of blocks) {
      let env = {};
      if (block.lang === 'js') {
        // The JS examples read their keys from the environment, as the README tells the reader to
        // run them; the keys are made here, as the reader makes them with the shell examples.
        keys ??= {
          UNLEASH_CLIENT_KEY: (
            await adminCall(worker.base, 'POST', '/api/admin/api-tokens', {
              tokenName: 'readme-js-client',
              type: 'client',
              environment: 'development',
            })
          ).secret,
          UNLEASH_FRONTEND_KEY: (
            await adminCall(worker.base, 'POST', '/api/admin/api-tokens', {
              tokenName: 'readme-js-frontend',
              type: 'frontend',
              environment: 'development',
            })
          ).secret,
        };
        env = keys;
      }
      const result = runBlock(block, { port, scratch, env });
      results.push({ line: block.line, lang: block.lang, ...result });
      if (!result.ok) break;
    }
  } finally {
    await worker.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
  return { blocks: blocks.length, results };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2] ?? 8795);
  // Fail early with a clear message rather than a block failing on a missing tool.
  execFileSync('bash', ['-c', 'command -v curl >/dev/null'], { stdio: 'inherit' });
  const { blocks, results } = await checkReadme({ port });
  for (const result of results) console.log(`${result.ok ? 'ok  ' : 'FAIL'} README.md:${result.line} (${result.lang})`);
  const failed = results.find((result) => !result.ok);
  if (failed) {
    console.log(`\n--- README.md:${failed.line} ---\n${failed.output}`);
    process.exit(1);
  }
  console.log(`${results.length} of ${blocks} README blocks ran`);
}
