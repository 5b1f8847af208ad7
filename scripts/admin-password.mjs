// Gives the bootstrap user `admin` (id 1) a password, so that a person can sign in to the UI
// and to /auth/simple/login. Unleash creates this user with the password `unleash4all`; we
// do the same for local development (`npm start` / `npm run dev` call this script), but only
// while the user has no password yet, so a password changed later is never overwritten.
//
//   node scripts/admin-password.mjs                      local D1; sets unleash4all if unset
//   node scripts/admin-password.mjs --persist-to DIR     the same for wrangler dev --persist-to DIR
//   node scripts/admin-password.mjs --remote --password 'S3cret-pass!'   the deployed D1 (always sets)
//
// The hash has the Worker's format (src/modules/users/password.ts): PBKDF2-SHA256, 100,000
// iterations (the most Workers allow), 16-byte random salt.
import { execFileSync } from 'node:child_process';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';

export const DEFAULT_ADMIN_PASSWORD = 'unleash4all';
const ITERATIONS = 100_000;

export function hashPassword(password) {
  const salt = randomBytes(16);
  const hash = pbkdf2Sync(password, salt, ITERATIONS, 32, 'sha256');
  return `pbkdf2-sha256$${ITERATIONS}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** Runs the UPDATE through wrangler; `onlyIfUnset` keeps a password someone already chose. */
export function setAdminPassword({
  password = DEFAULT_ADMIN_PASSWORD,
  remote = false,
  persistTo,
  onlyIfUnset = !remote,
  cwd = process.cwd(),
} = {}) {
  const condition = onlyIfUnset ? ' AND password_hash IS NULL' : '';
  // The hash is base64 and `$`: nothing in it needs quoting inside an SQL string literal.
  const sql = `UPDATE users SET password_hash = '${hashPassword(password)}', login_attempts = 0 WHERE id = 1${condition};`;
  const args = ['d1', 'execute', 'DB', remote ? '--remote' : '--local', '--command', sql];
  if (persistTo) args.push('--persist-to', persistTo);
  const wrangler = path.join(cwd, 'node_modules', '.bin', process.platform === 'win32' ? 'wrangler.cmd' : 'wrangler');
  execFileSync(wrangler, args, { cwd, stdio: 'ignore', env: { ...process.env, CI: 'true' }, shell: process.platform === 'win32' });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { remote: { type: 'boolean', default: false }, password: { type: 'string' }, 'persist-to': { type: 'string' } },
  });
  if (values.remote && !values.password) {
    console.error('--remote needs --password: a deployed service never gets the default password');
    process.exit(2);
  }
  setAdminPassword({ password: values.password, remote: values.remote, persistTo: values['persist-to'] });
  console.log(
    values.password
      ? 'admin password set'
      : `UI and /auth/simple/login: sign in as "admin" with "${DEFAULT_ADMIN_PASSWORD}" (set on first start only; change it in the UI, Profile)`,
  );
}
