/**
 * scripts/admin-password.mjs, run as a person or CI runs it: the password is typed or piped,
 * never an argument; Unleash's strength rule applies; wrangler's own error is shown when it
 * fails; neither the password nor its hash is ever printed.
 */
import { spawnSync } from 'node:child_process';
import { pbkdf2Sync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordProblems as scriptRule } from '../scripts/password-rule.mjs';
import { passwordProblems as workerRule } from '../src/identity/passwords/password-policy';

const ROOT = path.resolve(import.meta.dirname, '..');
const WRANGLER = path.join(ROOT, 'node_modules', '.bin', 'wrangler');
const STRONG = 'Deploy-Admin-Pass-9';

let home: string;
let persistTo: string;

/** An environment with no Cloudflare credentials at all (a temporary home, no API token). */
function isolatedEnv(): NodeJS.ProcessEnv {
  // WRANGLER_LOG: vitest.config.ts keeps wrangler to warnings, which would hide --json's output.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    CI: 'true',
    WRANGLER_LOG: 'log',
  };
  delete env.CLOUDFLARE_API_TOKEN;
  delete env.CLOUDFLARE_ACCOUNT_ID;
  delete env.CF_API_TOKEN;
  return env;
}

function script(args: string[], input?: string) {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'admin-password.mjs'), ...args], {
    cwd: ROOT,
    input: input ?? '',
    encoding: 'utf8',
    env: isolatedEnv(),
    timeout: 120_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}`, stderr: result.stderr };
}

function adminRow(): { password_hash: string | null; used: number } {
  const result = spawnSync(
    WRANGLER,
    [
      'd1',
      'execute',
      'DB',
      '--local',
      '--persist-to',
      persistTo,
      '--json',
      '--command',
      'SELECT password_hash, (SELECT count(*) FROM used_passwords WHERE user_id = 1) AS used FROM users WHERE id = 1',
    ],
    { cwd: ROOT, encoding: 'utf8', env: isolatedEnv() },
  );
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout)[0].results[0];
}

function matches(password: string, stored: string): boolean {
  const [, iterations, salt, hash] = stored.split('$');
  return pbkdf2Sync(password, Buffer.from(salt!, 'base64'), Number(iterations), 32, 'sha256').toString('base64') === hash;
}

beforeAll(() => {
  home = mkdtempSync(path.join(os.tmpdir(), 'admin-password-home-'));
  persistTo = mkdtempSync(path.join(os.tmpdir(), 'admin-password-state-'));
  const applied = spawnSync(WRANGLER, ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', persistTo], {
    cwd: ROOT,
    encoding: 'utf8',
    env: isolatedEnv(),
  });
  expect(applied.status, applied.stderr).toBe(0);
}, 120_000);

afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(persistTo, { recursive: true, force: true });
});

describe('scripts/admin-password.mjs', () => {
  it("checks the Worker's strength rule, word for word", () => {
    for (const sample of [
      '',
      'short',
      'unleash4all',
      'aaaBBB111!!!',
      'Correct-Horse-42',
      'a'.repeat(130),
      'correct horse battery staple',
      'ÄÖÜäöü12345!',
    ]) {
      expect(scriptRule(sample), sample).toEqual(workerRule(sample));
    }
  });

  it('refuses --password: a password on the command line stays in shell history', () => {
    const { status, stderr } = script(['--remote', '--password', STRONG]);
    expect(status).toBe(2);
    expect(stderr).toContain('--password is not accepted');
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it("refuses a weak password with Unleash's reasons, and changes nothing", () => {
    const { status, output } = script(['--ask', '--persist-to', persistTo], 'unleash4all\n');
    expect(status).toBe(2);
    expect(output).toContain('too weak, nothing was changed: The password must contain at least one uppercase letter.');
    expect(adminRow().password_hash).toBeNull();
  });

  it('sets a piped password (one trailing newline dropped), records it, and prints neither it nor its hash', () => {
    const { status, output } = script(['--ask', '--persist-to', persistTo], `${STRONG}\n`);
    expect(status, output).toBe(0);
    expect(output).toContain('admin password set');
    const row = adminRow();
    expect(matches(STRONG, row.password_hash!)).toBe(true);
    expect(row.used).toBe(1);
    expect(output).not.toContain(STRONG);
    expect(output).not.toContain('pbkdf2-sha256');
  }, 60_000);

  it('leaves a chosen password alone when run without flags (npm start)', () => {
    const before = adminRow().password_hash;
    const { status, output } = script(['--persist-to', persistTo]);
    expect(status, output).toBe(0);
    expect(adminRow().password_hash).toBe(before);
  }, 60_000);

  it("--remote without credentials shows wrangler's own error, no stack trace, no hash", () => {
    const { status, output, stderr } = script(['--remote'], `${STRONG}\n`);
    expect(status).toBe(1);
    expect(stderr).toContain('CLOUDFLARE_API_TOKEN');
    expect(stderr).toContain('admin password: wrangler d1 execute failed (exit 1); nothing was changed');
    expect(output).not.toMatch(/\n\s+at /);
    expect(output).not.toContain('pbkdf2-sha256');
    expect(output).not.toContain(STRONG);
  }, 60_000);

  it('hands wrangler the SQL in a file only its user can read, never on its command line, and removes the file', () => {
    // A stand-in wrangler in the directory the script runs from: it records what it was given.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'admin-password-fake-'));
    try {
      const bin = path.join(dir, 'node_modules', '.bin');
      mkdirSync(bin, { recursive: true });
      const fake = path.join(bin, 'wrangler');
      writeFileSync(
        fake,
        [
          '#!/bin/sh',
          `printf '%s\\n' "$@" > '${dir}/args'`,
          'while [ $# -gt 0 ]; do',
          `  if [ "$1" = "--file" ]; then cp "$2" '${dir}/sql'; stat -c %a "$2" > '${dir}/mode'; printf '%s' "$2" > '${dir}/path'; fi`,
          '  shift',
          'done',
          '',
        ].join('\n'),
      );
      chmodSync(fake, 0o755);
      const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'admin-password.mjs'), '--remote'], {
        cwd: dir,
        input: `${STRONG}\n`,
        encoding: 'utf8',
        env: isolatedEnv(),
        timeout: 60_000,
      });
      expect(result.status, result.stderr).toBe(0);
      const args = readFileSync(path.join(dir, 'args'), 'utf8');
      expect(args).toContain('--remote');
      expect(args).toContain('--file');
      expect(args).not.toContain('pbkdf2-sha256');
      expect(readFileSync(path.join(dir, 'sql'), 'utf8')).toContain('pbkdf2-sha256$');
      expect(readFileSync(path.join(dir, 'mode'), 'utf8').trim()).toBe('600');
      expect(existsSync(readFileSync(path.join(dir, 'path'), 'utf8'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
