// `npm start` setup: a fresh clone has no .dev.vars (it is git-ignored), so copy the example;
// then apply the local D1 migrations without wrangler's interactive confirmation.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import path from 'node:path';

if (!existsSync('.dev.vars')) {
  copyFileSync('.dev.vars.example', '.dev.vars');
  console.log('created .dev.vars from .dev.vars.example (local admin key: *:*.local-dev-admin-token)');
}
const wrangler = path.join('node_modules', '.bin', process.platform === 'win32' ? 'wrangler.cmd' : 'wrangler');
execFileSync(wrangler, ['d1', 'migrations', 'apply', 'DB', '--local'], {
  stdio: 'inherit',
  env: { ...process.env, CI: 'true' },
  shell: process.platform === 'win32',
});
// The bootstrap user `admin` gets Unleash's default password on first start (never overwritten).
execFileSync(process.execPath, [path.join('scripts', 'admin-password.mjs')], { stdio: 'inherit' });
