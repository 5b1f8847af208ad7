import { env, exports } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { createUser, loginAs, signedInUser, STRONG_PASSWORD, withSession } from './support/auth';
import { expireLoginFailures, expireSessions } from '../src/scheduled';
import { getDb } from '../src/db/client';
import { reserveLoginAttempt } from '../src/identity/passwords/login-limits';
import { sha256Hex } from './support/crypto';
import { count } from './support/db';

const LOGIN_FAILED =
  'The combination of password and username you provided is invalid. If you have forgotten your password, visit /forgotten-password or get in touch with your instance administrator.';
const LOGIN_HINT =
  'You must log in to use Unleash. Your request had no authorization header, so we could not authorize you. Try logging in at /auth/simple/login';
const HOUR = 3_600_000;

function login(username: string, password: string) {
  return call('POST', '/auth/simple/login', { token: null, body: { username, password } });
}

async function userRow(id: number) {
  return env.DB.prepare('SELECT login_attempts, seen_at, last_failed_login_at FROM users WHERE id = ?').bind(id).first<{
    login_attempts: number;
    seen_at: string | null;
    last_failed_login_at: string | null;
  }>();
}

function sessionCount(userId: number): Promise<number> {
  return count('SELECT count(*) AS n FROM sessions WHERE user_id = ?', userId);
}

function sessionIdOf(cookie: string): string {
  return cookie.slice('unleash-session='.length);
}

describe('POST /auth/simple/login', () => {
  it('signs in by username: 200 with the user, a session cookie, and seenAt set', async () => {
    const user = await createUser(2);
    const response = await login(user.username, STRONG_PASSWORD);
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual([
      'isAPI',
      'accountType',
      'id',
      'username',
      'imageUrl',
      'seenAt',
      'loginAttempts',
      'createdAt',
      'scimId',
      'deletedSessions',
      'activeSessions',
    ]);
    expect(body).toMatchObject({
      isAPI: false,
      accountType: 'User',
      id: user.id,
      username: user.username,
      loginAttempts: 0,
      deletedSessions: 0,
      activeSessions: 1,
    });
    expect(Date.parse(body.seenAt)).toBeGreaterThan(Date.now() - 60_000);
    expect((await userRow(user.id))!.seen_at).toBe(body.seenAt);
  });

  it('sets an HttpOnly, SameSite=Lax cookie on / for 48 hours, not Secure on localhost', async () => {
    const user = await createUser();
    const before = Date.now();
    const response = await login(user.username, STRONG_PASSWORD);
    const cookie = response.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^unleash-session=[0-9a-f]{64}; Path=\/; Expires=[^;]+; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    const maxAge = Number(/Max-Age=(\d+)/.exec(cookie)![1]);
    expect(maxAge).toBeGreaterThan(48 * 3600 - 60);
    expect(maxAge).toBeLessThanOrEqual(48 * 3600);
    const expires = Date.parse(/Expires=([^;]+)/.exec(cookie)![1]!);
    expect(Math.abs(expires - (before + 48 * HOUR))).toBeLessThan(60_000);
  });

  it('marks the cookie Secure on any other host', async () => {
    const user = await createUser();
    const response = await exports.default.fetch(
      new Request('https://flags.example.com/auth/simple/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: user.username, password: STRONG_PASSWORD }),
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('set-cookie')).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
  });

  it('stores only the hash of the session id, in D1 and in KV', async () => {
    const user = await createUser();
    const cookie = await loginAs(user.username);
    const id = sessionIdOf(cookie);
    const rows = await env.DB.prepare('SELECT * FROM sessions WHERE user_id = ?').bind(user.id).all<Record<string, unknown>>();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0]!.id_hash).toBe(await sha256Hex(id));
    expect(JSON.stringify(rows.results)).not.toContain(id);
    const kv = await env.TOKENS.get(`session:${await sha256Hex(id)}`);
    expect(kv).not.toBeNull();
    expect(kv).not.toContain(id);
  });

  it('signs in by email, whatever its case; usernames are exact', async () => {
    const user = await createUser(3, { email: 'Casey.Login@Example.com' });
    expect((await login('CASEY.LOGIN@example.COM', STRONG_PASSWORD)).status).toBe(200);
    await expectError(await login(user.username.toUpperCase(), STRONG_PASSWORD), 401, 'AuthenticationRequired');
  });

  it('answers an unknown user and a wrong password with the same 401 body', async () => {
    const user = await createUser();
    const wrong = await expectError(await login(user.username, 'Wrong-Password-1'), 401, 'AuthenticationRequired');
    const unknown = await expectError(await login('nobody-at-all', 'Wrong-Password-1'), 401, 'AuthenticationRequired');
    const { id: _a, ...wrongRest } = wrong;
    const { id: _b, ...unknownRest } = unknown;
    expect(wrongRest).toEqual(unknownRest);
    expect(wrongRest).toEqual({ name: 'AuthenticationRequired', message: LOGIN_FAILED, details: [{ message: LOGIN_FAILED }] });
  });

  it('refuses users without a password, deleted users and system users', async () => {
    const created = await call('POST', '/api/admin/user-admin', { body: { username: 'no-password-person', rootRole: 3 } });
    expect(created.status).toBe(201);
    await expectError(await login('no-password-person', ''), 401, 'AuthenticationRequired');
    await expectError(await login('no-password-person', STRONG_PASSWORD), 401, 'AuthenticationRequired');

    const deleted = await createUser();
    expect((await call('DELETE', `/api/admin/user-admin/${deleted.id}`)).status).toBe(200);
    await expectError(await login(deleted.username, STRONG_PASSWORD), 401, 'AuthenticationRequired');

    for (const system of ['unleash_system_user', 'admin_token_user', 'admin']) {
      await expectError(await login(system, STRONG_PASSWORD), 401, 'AuthenticationRequired');
    }
  });

  it('400 when username or password is missing', async () => {
    const missing = await expectError(
      await call('POST', '/auth/simple/login', { token: null, body: { username: 'x' } }),
      400,
      'ValidationError',
    );
    expect(missing.details[0]!.path).toBe('/body/password');
  });

  it('counts failed attempts and resets them on success', async () => {
    const user = await createUser();
    for (let i = 0; i < 3; i++) await login(user.username, 'Wrong-Password-1');
    expect((await userRow(user.id))!.login_attempts).toBe(3);
    expect((await bodyOf(await call('GET', `/api/admin/user-admin/${user.id}`))).loginAttempts).toBe(3);
    expect((await login(user.username, STRONG_PASSWORD)).status).toBe(200);
    expect((await userRow(user.id))!.login_attempts).toBe(0);
  });
});

describe('sign-in limits: per account and address, never against the owner', () => {
  // /auth/simple/login is also rate limited to 10 requests a minute per address: tests that need
  // more from one address write the earlier failures straight to D1 (`earlierFailures`).
  const WRONG = 'Wrong-Password-1';
  let counter = 0;
  /** A client address no other test uses. */
  const address = () => `192.0.2.${++counter}`;

  function loginFrom(ip: string, username: string, password: string) {
    return call('POST', '/auth/simple/login', { token: null, body: { username, password }, headers: { 'cf-connecting-ip': ip } });
  }

  async function failuresOf(userId: number): Promise<number> {
    return (await env.DB.prepare('SELECT count(*) AS n FROM login_failures WHERE user_id = ?').bind(userId).first<{ n: number }>())!.n;
  }

  async function earlierFailures(userId: number, ip: string, count: number, minutesAgo = 1) {
    const at = new Date(Date.now() - minutesAgo * 60_000).toISOString();
    for (let i = 0; i < count; i++) {
      await env.DB.prepare('INSERT INTO login_failures (user_id, address, failed_at) VALUES (?, ?, ?)').bind(userId, ip, at).run();
    }
  }

  async function ageFailures(userId: number, minutes: number) {
    await env.DB.prepare("UPDATE login_failures SET failed_at = strftime('%Y-%m-%dT%H:%M:%fZ', failed_at, ?) WHERE user_id = ?")
      .bind(`-${minutes} minutes`, userId)
      .run();
  }

  it('10 wrong passwords from an address are checked and counted; the account still opens elsewhere', async () => {
    const user = await createUser();
    const stranger = address();
    for (let i = 0; i < 10; i++) await expectError(await loginFrom(stranger, user.username, WRONG), 401, 'AuthenticationRequired');
    expect(await failuresOf(user.id)).toBe(10);
    expect((await userRow(user.id))!.login_attempts).toBe(10);
    expect((await loginFrom(address(), user.username, STRONG_PASSWORD)).status).toBe(200);
    expect((await userRow(user.id))!.login_attempts).toBe(0);
  });

  it('that address is then refused for 15 minutes, the right password too, with the same 401', async () => {
    const user = await createUser();
    const stranger = address();
    await earlierFailures(user.id, stranger, 10);
    const refused = await expectError(await loginFrom(stranger, user.username, STRONG_PASSWORD), 401, 'AuthenticationRequired');
    expect(refused.message).toBe(LOGIN_FAILED);
    // A refused attempt is not checked, so not counted either.
    expect(await failuresOf(user.id)).toBe(10);
    expect((await userRow(user.id))!.login_attempts).toBe(0);
    // 16 minutes later (no other address failing meanwhile) it may try again.
    await ageFailures(user.id, 15);
    expect((await loginFrom(stranger, user.username, STRONG_PASSWORD)).status).toBe(200);
  });

  it("a stranger failing from other addresses never stops the owner's right password", async () => {
    const user = await createUser();
    // The attack the per-account lockout fell to: ten wrong passwords, then more from other addresses.
    const strangers = Array.from({ length: 6 }, address);
    for (const stranger of strangers) {
      for (let i = 0; i < 10; i++) await expectError(await loginFrom(stranger, user.username, WRONG), 401, 'AuthenticationRequired');
    }
    // The first address got its 10 guesses; once the account was under attack, every other one 3.
    expect(await failuresOf(user.id)).toBe(10 + 3 * 5);
    expect((await loginFrom(address(), user.username, STRONG_PASSWORD)).status).toBe(200);
    // The strangers' addresses stay refused, whatever they send.
    const db = getDb(env);
    for (const stranger of strangers) expect(await reserveLoginAttempt(db, user.id, stranger, Date.now())).toBe(false);
  });

  it('under attack, the owner may still mistype twice from their own address', async () => {
    const user = await createUser();
    for (let i = 0; i < 12; i++) await loginFrom(address(), user.username, WRONG);
    const owner = address();
    await expectError(await loginFrom(owner, user.username, WRONG), 401, 'AuthenticationRequired');
    await expectError(await loginFrom(owner, user.username, WRONG), 401, 'AuthenticationRequired');
    expect((await loginFrom(owner, user.username, STRONG_PASSWORD)).status).toBe(200);
  });

  it('parallel guesses from one address cannot get past the limit: at most 10 are counted', async () => {
    const user = await createUser();
    const db = getDb(env);
    const stranger = address();
    const outcomes = await Promise.all(Array.from({ length: 25 }, () => reserveLoginAttempt(db, user.id, stranger, Date.now())));
    expect(outcomes.filter(Boolean)).toHaveLength(10);
    expect(await failuresOf(user.id)).toBe(10);
  });

  it('a right password forgives its address; a new password set by an admin clears every count', async () => {
    const user = await createUser();
    const owner = address();
    const stranger = address();
    for (let i = 0; i < 2; i++) await loginFrom(owner, user.username, WRONG);
    await earlierFailures(user.id, stranger, 10);
    expect((await loginFrom(owner, user.username, STRONG_PASSWORD)).status).toBe(200);
    expect(await failuresOf(user.id)).toBe(10);
    expect((await call('POST', `/api/admin/user-admin/${user.id}/change-password`, { body: { password: 'Another-Pass-77' } })).status).toBe(
      200,
    );
    expect(await failuresOf(user.id)).toBe(0);
    expect((await loginFrom(stranger, user.username, 'Another-Pass-77')).status).toBe(200);
  });

  it('an hour of guessing from N addresses gets at most 3N + 49 wrong passwords checked', async () => {
    const user = await createUser();
    const db = getDb(env);
    const addresses = Array.from({ length: 4 }, address);
    const start = Date.now();
    let checked = 0;
    // Every minute for an hour, each address guesses until it is refused.
    for (let minute = 0; minute < 60; minute++) {
      for (const ip of addresses) {
        while (await reserveLoginAttempt(db, user.id, ip, start + minute * 60_000)) checked++;
      }
    }
    expect(checked).toBeLessThanOrEqual(3 * addresses.length + 49);
    // The first address keeps its 10 per 15 minutes (the others' 9 never put it under attack);
    // the others get 3 each.
    expect(checked).toBe(40 + 3 * (addresses.length - 1));
  });

  it('the cron sweep deletes failures older than an hour', async () => {
    const user = await createUser();
    await earlierFailures(user.id, address(), 3, 61);
    await earlierFailures(user.id, address(), 1, 59);
    const summary = await expireLoginFailures.run(env, new Date());
    expect(summary.deleted).toBeGreaterThanOrEqual(3);
    expect(await failuresOf(user.id)).toBe(1);
  });
});

describe('session cookie on admin routes', () => {
  it("a session acts as its user with the user's permissions", async () => {
    const viewer = await signedInUser(3);
    expect((await call('GET', '/api/admin/projects', withSession(viewer.cookie))).status).toBe(200);
    await expectError(
      await call('POST', '/api/admin/api-tokens', withSession(viewer.cookie, { body: { tokenName: 'x', type: 'client' } })),
      403,
      'NoAccessError',
    );
  });

  it("401 with Unleash's login hint for an unknown, malformed or foreign cookie", async () => {
    for (const cookie of [
      `unleash-session=${'ab'.repeat(32)}`,
      'unleash-session=s%3Abogus.signature',
      'other=1',
      `unleash-session=${'AB'.repeat(32)}`,
    ]) {
      const body = await expectError(await call('GET', '/api/admin/user', withSession(cookie)), 401, 'AuthenticationRequired');
      expect(body).toMatchObject({ message: LOGIN_HINT, path: '/auth/simple/login', type: 'password', defaultHidden: false });
    }
  });

  it('an Authorization header wins over the cookie', async () => {
    const viewer = await signedInUser(3);
    const options = { token: '*:*.not-a-key', headers: { cookie: viewer.cookie } };
    await expectError(await call('GET', '/api/admin/user', options), 401, 'AuthenticationRequired');
  });

  it('expires after 48 hours', async () => {
    const user = await signedInUser(3);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      expect((await call('GET', '/api/admin/user', withSession(user.cookie))).status).toBe(200);
      vi.setSystemTime(Date.now() + 48 * HOUR - 60_000);
      expect((await call('GET', '/api/admin/user', withSession(user.cookie))).status).toBe(200);
      vi.setSystemTime(Date.now() + 2 * 60_000);
      await expectError(await call('GET', '/api/admin/user', withSession(user.cookie)), 401, 'AuthenticationRequired');
    } finally {
      vi.useRealTimers();
    }
  });

  it('the scheduled sweep deletes expired session rows and keeps live ones', async () => {
    const user = await signedInUser(3);
    await loginAs(user.username, user.password);
    expect(await sessionCount(user.id)).toBe(2);
    await env.DB.prepare('UPDATE sessions SET expires_at = ? WHERE id_hash = ?')
      .bind(new Date(Date.now() - 60_000).toISOString(), await sha256Hex(sessionIdOf(user.cookie)))
      .run();
    const summary = await expireSessions.run(env, new Date());
    expect(summary.deleted).toBeGreaterThanOrEqual(1);
    expect(await sessionCount(user.id)).toBe(1);
  });

  it("a deleted user's session ends with the user", async () => {
    const user = await signedInUser(2);
    expect((await call('GET', '/api/admin/user', withSession(user.cookie))).status).toBe(200);
    expect((await call('DELETE', `/api/admin/user-admin/${user.id}`)).status).toBe(200);
    await expectError(await call('GET', '/api/admin/user', withSession(user.cookie)), 401, 'AuthenticationRequired');
    expect(await sessionCount(user.id)).toBe(0);
  });
});

describe('POST /logout', () => {
  it('ends every session of the user at once, clears the cookie and redirects to /', async () => {
    const user = await signedInUser(2);
    const other = await loginAs(user.username);
    expect(await sessionCount(user.id)).toBe(2);

    // `redirect: 'manual'`: the redirect itself is what we check. The UI's form posts it from our own origin.
    const response = await exports.default.fetch(
      new Request('http://localhost/logout', {
        method: 'POST',
        headers: { cookie: user.cookie, origin: 'http://localhost' },
        redirect: 'manual',
      }),
    );
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/');
    expect(response.headers.get('set-cookie')).toBe(
      'unleash-session=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; SameSite=Lax',
    );
    expect(response.headers.get('clear-site-data')).toBe('"cookies", "storage"');

    for (const cookie of [user.cookie, other]) {
      await expectError(await call('GET', '/api/admin/user', withSession(cookie)), 401, 'AuthenticationRequired');
      expect(await env.TOKENS.get(`session:${await sha256Hex(sessionIdOf(cookie))}`)).toBeNull();
    }
    expect(await sessionCount(user.id)).toBe(0);
  });

  it('401 without a session', async () => {
    await expectError(await call('POST', '/logout', { token: null }), 401, 'AuthenticationRequired');
  });

  it('GET /logout signs nobody out', async () => {
    const user = await signedInUser(3);
    await call('GET', '/logout', withSession(user.cookie));
    expect((await call('GET', '/api/admin/user', withSession(user.cookie))).status).toBe(200);
  });
});

describe('a root role change', () => {
  it("applies to the user's session at once", async () => {
    const user = await signedInUser(3);
    await expectError(await call('GET', '/api/admin/user-admin', withSession(user.cookie)), 403, 'NoAccessError');
    expect((await call('PUT', `/api/admin/user-admin/${user.id}`, { body: { rootRole: 1 } })).status).toBe(200);
    expect((await call('GET', '/api/admin/user-admin', withSession(user.cookie))).status).toBe(200);
  });
});

describe("a role's permissions change", () => {
  const FLAGS = '/api/admin/projects/default/features';

  async function customRole(type: 'custom' | 'root-custom', permissions: string[]): Promise<number> {
    const response = await call('POST', '/api/admin/roles', {
      body: { name: `role-${crypto.randomUUID().slice(0, 8)}`, type, permissions: permissions.map((name) => ({ name })) },
    });
    expect(response.status).toBe(201);
    return (await bodyOf<{ id: number }>(response)).id;
  }

  async function setPermissions(roleId: number, type: 'custom' | 'root-custom', permissions: string[]) {
    const role = await bodyOf<{ name: string }>(await call('GET', `/api/admin/roles/${roleId}`));
    const response = await call('PUT', `/api/admin/roles/${roleId}`, {
      body: { name: role.name, type, permissions: permissions.map((name) => ({ name })) },
    });
    expect(response.status).toBe(200);
  }

  /** A Viewer holding `roleId` in project default, signed in, with a flag to edit. */
  async function holderOf(roleId: number) {
    const user = await signedInUser(3);
    expect((await call('POST', '/api/admin/projects/default/access', { body: { roles: [roleId], users: [user.id] } })).status).toBe(200);
    const flag = `role-edit-${crypto.randomUUID().slice(0, 8)}`;
    expect((await call('POST', FLAGS, { body: { name: flag } })).status).toBe(201);
    const edit = () => call('PUT', `${FLAGS}/${flag}`, withSession(user.cookie, { body: { description: 'edited' } }));
    return { user, edit };
  }

  it('a project role: a permission taken away is refused, and given back is allowed, on the very next request', async () => {
    const roleId = await customRole('custom', ['UPDATE_FEATURE']);
    const { edit } = await holderOf(roleId);
    expect((await edit()).status).toBe(200);
    await setPermissions(roleId, 'custom', ['CREATE_FEATURE']);
    await expectError(await edit(), 403, 'NoAccessError');
    await setPermissions(roleId, 'custom', ['UPDATE_FEATURE']);
    expect((await edit()).status).toBe(200);
  });

  it('a root role: the same, at once', async () => {
    const roleId = await customRole('root-custom', ['CREATE_TAG_TYPE']);
    const user = await createUser(roleId);
    const cookie = await loginAs(user.username);
    const addTagType = () =>
      call('POST', '/api/admin/tag-types', withSession(cookie, { body: { name: `t-${crypto.randomUUID().slice(0, 8)}` } }));
    expect((await addTagType()).status).toBe(201);
    await setPermissions(roleId, 'root-custom', ['READ_ROLE']);
    await expectError(await addTagType(), 403, 'NoAccessError');
    await setPermissions(roleId, 'root-custom', ['CREATE_TAG_TYPE']);
    expect((await addTagType()).status).toBe(201);
  });

  it('an edit made by another isolate (D1 changed under this one) reaches the holder within 10 seconds', async () => {
    const roleId = await customRole('custom', ['UPDATE_FEATURE']);
    const { edit } = await holderOf(roleId);
    expect((await edit()).status).toBe(200);
    // Another isolate's edit: the rows change, this isolate's cache is not told.
    await env.DB.prepare("UPDATE role_permission SET permission = 'CREATE_FEATURE' WHERE role_id = ?").bind(roleId).run();
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 10_001);
      await expectError(await edit(), 403, 'NoAccessError');
    } finally {
      vi.useRealTimers();
    }
  });
});
