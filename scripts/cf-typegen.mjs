// `npm run cf-typegen`: writes src/worker-configuration.d.ts with `wrangler types` (the
// Workers runtime types and `GeneratedEnv`, the bindings and [vars] of wrangler.toml).
// `npm run check:types-generated` (`--check`): fails when the committed file differs in any
// byte from what wrangler generates now.
//
// `--env-file=/dev/null`: wrangler types would otherwise type every key of a local .dev.vars
// or .env as a required secret, so the output would depend on files that are not committed
// (`npm start` creates .dev.vars). Secrets and optional variables are declared in src/env.ts.
// `--env-interface=GeneratedEnv`: src/env.ts extends it into the `Env` the code imports; a
// global `Env` would let a file that forgets the import compile against the wrong type.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const OUT = 'src/worker-configuration.d.ts';
const ARGS = ['types', '--env-file=/dev/null', '--env-interface=GeneratedEnv', '--strict-vars=false'];

function wranglerTypes(out) {
  const wrangler = path.join('node_modules', '.bin', process.platform === 'win32' ? 'wrangler.cmd' : 'wrangler');
  const result = spawnSync(wrangler, [...ARGS, out], {
    encoding: 'utf8',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', WRANGLER_HIDE_BANNER: 'true', CLOUDFLARE_INCLUDE_PROCESS_ENV: 'false' },
    shell: process.platform === 'win32',
  });
  if (result.status !== 0) {
    process.stderr.write(`${result.stdout ?? ''}${result.stderr ?? ''}`);
    throw new Error(`wrangler types failed (exit ${result.status ?? result.signal})`);
  }
}

/**
 * What `wrangler types` writes to OUT. It is written next to OUT (the entry point's import and
 * the hash over it depend on the directory; TypeScript's `src/**` skips dot files) under a new
 * name, so wrangler does not reuse the runtime types of the file already there: only the path
 * in the header differs.
 */
function generate() {
  const tmpOut = path.join(path.dirname(OUT), `.${path.basename(OUT, '.d.ts')}.${process.pid}.d.ts`);
  try {
    wranglerTypes(tmpOut);
    return readFileSync(tmpOut, 'utf8').replace(` ${tmpOut}\` (hash: `, ` ${OUT}\` (hash: `);
  } finally {
    rmSync(tmpOut, { force: true });
  }
}

const generated = generate();
if (!process.argv.includes('--check')) {
  writeFileSync(OUT, generated);
  console.log(`wrote ${OUT}`);
} else {
  const committed = readFileSync(OUT, 'utf8');
  if (committed !== generated) {
    const a = committed.split('\n');
    const b = generated.split('\n');
    const line = a.findIndex((text, i) => text !== b[i]);
    const at = line === -1 ? Math.min(a.length, b.length) : line;
    console.error(`${OUT} differs from what \`wrangler ${ARGS.join(' ')}\` generates, first at line ${at + 1}:`);
    console.error(`  committed: ${a[at] ?? '(end of file)'}`);
    console.error(`  generated: ${b[at] ?? '(end of file)'}`);
    console.error('Run `npm run cf-typegen` and commit the result (change wrangler.toml or src/env.ts, not that file).');
    process.exitCode = 1;
  } else {
    console.log(`${OUT} is what wrangler types generates`);
  }
}
