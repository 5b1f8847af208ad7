// Setup shared by `npm start` and `npm run dev`: a fresh clone has no .dev.vars (it is
// git-ignored), so copy the example; then apply the local D1 migrations without wrangler's
// interactive confirmation. Wrangler redraws its migration table after every file, so its
// output is kept and summed up in one line; it is shown in full only when applying fails.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import path from 'node:path';

if (!existsSync('.dev.vars')) {
  copyFileSync('.dev.vars.example', '.dev.vars');
  console.log('created .dev.vars from .dev.vars.example (local admin key: *:*.local-dev-admin-token)');
}
const wrangler = path.join('node_modules', '.bin', process.platform === 'win32' ? 'wrangler.cmd' : 'wrangler');
const result = spawnSync(wrangler, ['d1', 'migrations', 'apply', 'DB', '--local'], {
  encoding: 'utf8',
  env: { ...process.env, CI: 'true', WRANGLER_SEND_METRICS: 'false' },
  shell: process.platform === 'win32',
});
const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
if (result.status !== 0) {
  process.stderr.write(output);
  console.error(`\nlocal D1: applying migrations failed (exit ${result.status ?? result.signal}); see above`);
  process.exit(1);
}
const applied = /About to apply (\d+) migration/.exec(output)?.[1];
console.log(applied ? `local D1: applied ${applied} migration(s) (.wrangler/state)` : 'local D1: migrations up to date (.wrangler/state)');
// The bootstrap user `admin` gets Unleash's default password on first start (never overwritten).
execFileSync(process.execPath, [path.join('scripts', 'admin-password.mjs')], { stdio: 'inherit' });
