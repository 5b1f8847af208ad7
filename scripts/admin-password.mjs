// Gives the bootstrap user `admin` (id 1) a password, so that a person can sign in to the UI
// and to /auth/simple/login.
//
//   node scripts/admin-password.mjs                     local D1: Unleash's default `unleash4all`, only
//                                                       while admin has no password (npm start runs this)
//   node scripts/admin-password.mjs --persist-to DIR    the same for wrangler dev --persist-to DIR
//   node scripts/admin-password.mjs --remote            the deployed D1: asks for the password (twice,
//                                                       not shown), or reads it from stdin when piped
//   node scripts/admin-password.mjs --ask               the same against the local D1
//
//   printf '%s' "$ADMIN_PASSWORD" | node scripts/admin-password.mjs --remote    (CI, a password manager)
//
// The password never goes on the command line (shell history, the process list): it is typed
// or piped. A chosen password must pass Unleash's strength rule (scripts/password-rule.mjs).
// Setting it ends admin's sessions (at once in D1; a Worker isolate may still accept a cached
// one for up to 5 minutes), clears the failed sign-ins counted against admin, expires admin's
// open reset links and records it among admin's last passwords, as the Worker does.
//
// The hash has the Worker's format (src/identity/passwords/password.ts): PBKDF2-SHA256, 100,000
// iterations (the most Workers allow), 16-byte random salt. It goes to wrangler and nowhere
// else: neither it nor the password is ever printed; when wrangler fails, its own message is
// shown (with the hash cut out, should it echo the SQL).
import { spawnSync } from 'node:child_process';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { passwordProblems } from './password-rule.mjs';

export const DEFAULT_ADMIN_PASSWORD = 'unleash4all';
const ITERATIONS = 100_000;
const ADMIN_ID = 1;
/** Unleash keeps a person's last 5 passwords (src/identity/passwords/password-history.ts). */
const PASSWORD_HISTORY = 5;

export function hashPassword(password) {
  const salt = randomBytes(16);
  const hash = pbkdf2Sync(password, salt, ITERATIONS, 32, 'sha256');
  return `pbkdf2-sha256$${ITERATIONS}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** The SQL that sets admin's password. The hash is base64 and `$`: nothing in it needs quoting. */
function passwordSql(hash, onlyIfUnset) {
  const now = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
  const holdsHash = `EXISTS (SELECT 1 FROM users WHERE id = ${ADMIN_ID} AND password_hash = '${hash}')`;
  return [
    `UPDATE users SET password_hash = '${hash}', login_attempts = 0, last_failed_login_at = NULL, updated_at = ${now} WHERE id = ${ADMIN_ID}${onlyIfUnset ? ' AND password_hash IS NULL' : ''}`,
    // The rest only when the password was set (not when a local one already existed).
    `INSERT OR IGNORE INTO used_passwords (user_id, password_hash, used_at) SELECT ${ADMIN_ID}, '${hash}', ${now} WHERE ${holdsHash}`,
    `DELETE FROM used_passwords WHERE user_id = ${ADMIN_ID} AND rowid NOT IN (SELECT rowid FROM used_passwords WHERE user_id = ${ADMIN_ID} ORDER BY used_at DESC, rowid DESC LIMIT ${PASSWORD_HISTORY})`,
    `DELETE FROM login_failures WHERE user_id = ${ADMIN_ID} AND ${holdsHash}`,
    `UPDATE reset_tokens SET expires_at = ${now} WHERE user_id = ${ADMIN_ID} AND used_at IS NULL AND expires_at > ${now} AND ${holdsHash}`,
    `DELETE FROM sessions WHERE user_id = ${ADMIN_ID} AND ${holdsHash}`,
  ].join(';\n');
}

/** Thrown when wrangler fails; `output` is wrangler's own message, hash removed. */
export class WranglerError extends Error {
  constructor(status, output) {
    super(`wrangler d1 execute failed (exit ${status})`);
    this.output = output;
  }
}

/**
 * Runs the SQL through wrangler; `onlyIfUnset` keeps a password someone already chose. Throws
 * WranglerError (never an error whose message holds the command line) when wrangler fails.
 */
export function setAdminPassword({
  password = DEFAULT_ADMIN_PASSWORD,
  remote = false,
  persistTo,
  onlyIfUnset = !remote,
  cwd = process.cwd(),
} = {}) {
  const hash = hashPassword(password);
  // The SQL (it holds the hash) goes to wrangler in a file only this user can read, never on
  // its command line, where any local user's process list would show it.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'admin-password-'));
  const sqlFile = path.join(dir, 'set-password.sql');
  writeFileSync(sqlFile, passwordSql(hash, onlyIfUnset), { mode: 0o600 });
  const args = ['d1', 'execute', 'DB', remote ? '--remote' : '--local', '--yes', '--file', sqlFile];
  if (persistTo) args.push('--persist-to', persistTo);
  try {
    runWrangler(args, hash, cwd);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runWrangler(args, hash, cwd) {
  const bin = path.join(cwd, 'node_modules', '.bin');
  const wrangler = path.join(bin, process.platform === 'win32' ? 'wrangler.cmd' : 'wrangler');
  const result = spawnSync(wrangler, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    // node_modules/.bin first, as npm scripts have it: wrangler then runs on the project's Node 24
    // even when this script was started with an older system Node.
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`, CI: 'true', WRANGLER_SEND_METRICS: 'false' },
    shell: process.platform === 'win32',
  });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}\n${result.stderr ?? ''}`.replaceAll(hash, '<password hash>').trim();
    throw new WranglerError(result.status ?? result.signal, output || String(result.error?.message ?? 'no output'));
  }
}

/** Reads a password: typed twice without echo at a terminal, else all of stdin (one trailing newline dropped). */
async function readPassword() {
  if (!process.stdin.isTTY) {
    let text = '';
    for await (const chunk of process.stdin) text += chunk;
    return text.replace(/\r?\n$/, '');
  }
  const first = await prompt('New password for admin: ');
  const second = await prompt('Again: ');
  if (first !== second) fail('the two passwords differ; nothing was changed');
  return first;
}

function prompt(question) {
  return new Promise((resolve) => {
    const { stdin, stderr } = process;
    stderr.write(question);
    stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    stdin.resume();
    let typed = '';
    const onData = (data) => {
      for (const char of data) {
        if (char === '\r' || char === '\n' || char === '\u0004') {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off('data', onData);
          stderr.write('\n');
          resolve(typed);
          return;
        }
        if (char === '\u0003') {
          stdin.setRawMode(false);
          stderr.write('\n');
          process.exit(130);
        }
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else typed += char;
      }
    };
    stdin.on('data', onData);
  });
}

function fail(message, code = 1) {
  console.error(`admin password: ${message}`);
  process.exit(code);
}

async function main() {
  const { values } = parseArgs({
    options: {
      remote: { type: 'boolean', default: false },
      ask: { type: 'boolean', default: false },
      'persist-to': { type: 'string' },
      password: { type: 'string' },
    },
  });
  if (values.password !== undefined) {
    fail(
      '--password is not accepted: a password on the command line stays in shell history and shows in the process list. Type it when asked, or pipe it: printf \'%s\' "$ADMIN_PASSWORD" | node scripts/admin-password.mjs --remote',
      2,
    );
  }
  const chosen = values.remote || values.ask;
  const password = chosen ? await readPassword() : DEFAULT_ADMIN_PASSWORD;
  if (chosen) {
    if (password === '') fail('no password given; nothing was changed', 2);
    const problems = passwordProblems(password);
    if (problems.length > 0) fail(`too weak, nothing was changed: ${problems.join(' ')}`, 2);
  }
  try {
    setAdminPassword({ password, remote: values.remote, persistTo: values['persist-to'], onlyIfUnset: !chosen });
  } catch (error) {
    if (!(error instanceof WranglerError)) throw error;
    console.error(error.output);
    fail(`${error.message}; nothing was changed${values.remote ? ' (is `npx wrangler login` done, or CLOUDFLARE_API_TOKEN set?)' : ''}`);
  }
  console.log(
    chosen
      ? `admin password set${values.remote ? ' on the deployed D1' : ''}: sign in as "admin" with it`
      : `UI and /auth/simple/login: sign in as "admin" with "${DEFAULT_ADMIN_PASSWORD}" (set on first start only; change it in the UI, Profile)`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
