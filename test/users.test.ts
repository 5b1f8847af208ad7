import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { verifyPassword } from '../src/identity/passwords/password';
import { bodyOf, call, createToken, expectError } from './support/http';
import { count } from './support/db';
import { gravatar } from './support/crypto';
import { postUser } from './support/auth';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const GRAVATAR = /^https:\/\/gravatar\.com\/avatar\/[0-9a-f]{64}\?s=42&d=retro&r=g$/;

describe('GET /api/admin/user-admin/:id', () => {
  it('returns the bootstrap admin as Unleash 6 does, keys in its order', async () => {
    const response = await call('GET', '/api/admin/user-admin/1');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
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
      'rootRole',
    ]);
    expect(body).toMatchObject({
      isAPI: false,
      accountType: 'User',
      id: 1,
      username: 'admin',
      // sha256("admin"), the same URL the reference server builds for its admin.
      imageUrl: 'https://gravatar.com/avatar/8c6976e5b5410415bde908bd4dee15dfb167a9c873fc4bb8a81f6f2ab448a918?s=42&d=retro&r=g',
      seenAt: null,
      loginAttempts: 0,
      scimId: null,
      rootRole: 1,
    });
    expect(body.createdAt).toMatch(ISO);
  });

  it('returns a created user with name, email and the gravatar of the email', async () => {
    const created = await postUser({ email: 'get-1@example.com', name: 'Get One', username: 'get-one', rootRole: 2 });
    const response = await call('GET', `/api/admin/user-admin/${created.id}`);
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual([
      'isAPI',
      'accountType',
      'id',
      'name',
      'username',
      'email',
      'imageUrl',
      'seenAt',
      'loginAttempts',
      'createdAt',
      'scimId',
      'rootRole',
    ]);
    expect(body).toEqual({
      isAPI: false,
      accountType: 'User',
      id: created.id,
      name: 'Get One',
      username: 'get-one',
      email: 'get-1@example.com',
      imageUrl: await gravatar('get-1@example.com'),
      seenAt: null,
      loginAttempts: 0,
      createdAt: created.createdAt,
      scimId: null,
      rootRole: 2,
    });
  });

  it('reads ids as Unleash coerces them (01, 1e0, surrounding spaces)', async () => {
    for (const id of ['01', '1e0', '%201', '+1']) {
      const response = await call('GET', `/api/admin/user-admin/${id}`);
      expect(response.status, id).toBe(200);
      expect((await bodyOf(response)).id).toBe(1);
    }
  });

  it('answers 400 naming /params/id when the id is not an integer', async () => {
    for (const id of ['abc', '1.5', 'true', 'Infinity', 'NaN', '0x', '1e400', '00000000-0000-4000-8000-000000000000']) {
      const response = await call('GET', `/api/admin/user-admin/${id}`);
      const body = await expectError(response, 400, 'ValidationError');
      expect(body.details, id).toEqual([
        { path: '/params/id', message: `The \`/params/id\` property must be integer. You sent ${JSON.stringify(decodeURIComponent(id))}.` },
      ]);
    }
  });

  it('answers 404 "No user found" for unknown, zero, negative, out-of-range and system ids, never 500', async () => {
    for (const id of ['999999', '0', '-1', '-42', '-1337', '2147483648', '99999999999999999999', '-2147483649']) {
      const response = await call('GET', `/api/admin/user-admin/${id}`);
      const body = await expectError(response, 404, 'NotFoundError');
      expect(body.message, id).toBe('No user found');
      expect(body.details).toEqual([{ message: 'No user found' }]);
    }
  });

  it('answers 401 without a key and 403 for client and frontend keys', async () => {
    await expectError(await call('GET', '/api/admin/user-admin/1', { token: null }), 401, 'AuthenticationRequired');
    await expectError(await call('GET', '/api/admin/user-admin/1', { token: '*:*.not-a-key' }), 401, 'AuthenticationRequired');
    const client = await createToken({ tokenName: 'users-client', type: 'client', environment: 'development' });
    const frontend = await createToken({ tokenName: 'users-frontend', type: 'frontend', environment: 'development' });
    for (const token of [client, frontend]) {
      const body = await expectError(await call('GET', '/api/admin/user-admin/1', { token }), 403, 'NoAccessError');
      expect(body.message).toBe('invalid token: expected a different token type for this endpoint');
    }
  });
});

describe('POST /api/admin/user-admin', () => {
  it('creates a user: 201, the User plus inviteLink and emailSent, a location, an audit event', async () => {
    const before = await count("SELECT count(*) AS n FROM events WHERE type = 'user-created'");
    const response = await call('POST', '/api/admin/user-admin', {
      body: { email: '  New.Person@Example.COM ', name: ' New Person ', rootRole: 3 },
    });
    expect(response.status).toBe(201);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual([
      'isAPI',
      'accountType',
      'id',
      'name',
      'email',
      'imageUrl',
      'seenAt',
      'loginAttempts',
      'createdAt',
      'scimId',
      'rootRole',
      'inviteLink',
      'emailSent',
    ]);
    expect(body).toMatchObject({ name: 'New Person', email: 'new.person@example.com', rootRole: 3, emailSent: false });
    // The new user's own link to choose a password, as Unleash answers (secret shown once).
    expect(body.inviteLink).toMatch(/^http:\/\/localhost\/new-user\?token=[0-9a-f]{64}$/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(body.imageUrl).toBe(await gravatar('new.person@example.com'));
    expect(response.headers.get('location')).toBe(`/api/admin/user-admin/${body.id}`);
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'user-created'")).toBe(before + 1);
    const event = await env.DB.prepare(
      "SELECT created_by, created_by_user_id, data FROM events WHERE type = 'user-created' ORDER BY id DESC LIMIT 1",
    ).first<{ created_by: string; created_by_user_id: number; data: string }>();
    expect(event!.created_by).toBe('admin');
    expect(event!.created_by_user_id).toBe(-42);
    expect(JSON.parse(event!.data)).toEqual({ id: body.id, name: 'New Person', email: 'new.person@example.com', rootRole: 3 });
    const roleRow = await env.DB.prepare("SELECT role_id FROM role_user WHERE user_id = ? AND project = 'default'")
      .bind(body.id)
      .first<{ role_id: number }>();
    expect(roleRow!.role_id).toBe(3);
  });

  it('accepts a username alone and a root role by name', async () => {
    const body = await postUser({ username: 'only-username', rootRole: 'Editor' });
    expect(body).toMatchObject({ username: 'only-username', rootRole: 2 });
    expect(body).not.toHaveProperty('email');
    expect(body).not.toHaveProperty('name');
    expect(body.imageUrl).toBe(await gravatar('only-username'));
  });

  it('stores a given password only as a salted PBKDF2 hash', async () => {
    const body = await postUser({ email: 'with-password@example.com', password: 'correct horse battery staple', rootRole: 3 });
    const row = await env.DB.prepare('SELECT password_hash FROM users WHERE id = ?').bind(body.id).first<{ password_hash: string }>();
    expect(row!.password_hash).toMatch(/^pbkdf2-sha256\$100000\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    expect(row!.password_hash).not.toContain('correct horse');
    expect(await verifyPassword('correct horse battery staple', row!.password_hash)).toBe(true);
    expect(await verifyPassword('wrong', row!.password_hash)).toBe(false);
    expect(Object.keys(body).filter((key) => /password/i.test(key))).toEqual([]);
    expect(JSON.stringify(body)).not.toContain('pbkdf2');
  });

  it('refuses a duplicate email (any case) or username with 400 "User already exists", storing nothing', async () => {
    await postUser({ email: 'dup@example.com', username: 'dup-user', rootRole: 3 });
    const users = await count('SELECT count(*) AS n FROM users');
    for (const body of [
      { email: 'DUP@example.com', rootRole: 3 },
      { username: 'dup-user', rootRole: 3 },
    ]) {
      const error = await expectError(await call('POST', '/api/admin/user-admin', { body }), 400, 'ValidationError');
      expect(error.message).toBe('Request validation failed: your request body or params contain invalid data: User already exists');
      expect(error.details[0]!.message).toBe('User already exists');
    }
    expect(await count('SELECT count(*) AS n FROM users')).toBe(users);
  });

  it('refuses bad input with 400 and writes no row (Unleash stored users before failing)', async () => {
    const users = await count('SELECT count(*) AS n FROM users');
    const roleUsers = await count('SELECT count(*) AS n FROM role_user');
    const events = await count('SELECT count(*) AS n FROM events');
    const cases: [unknown, string][] = [
      [{ email: 'nobody@example.com' }, 'The `/body/rootRole` property is required. It was not present on the data you sent.'],
      [{ rootRole: 3 }, 'You must specify username or email'],
      [{ email: 'not-an-email', rootRole: 3 }, 'The `/body/email` property must be a valid email address. You sent "not-an-email".'],
      [{ email: 'a@b..c', rootRole: 3 }, 'The `/body/email` property must be a valid email address. You sent "a@b..c".'],
      [{ username: 'rr-4', rootRole: 4 }, 'Could not find rootRole=4'],
      [{ username: 'rr-999', rootRole: 999 }, 'Could not find rootRole=999'],
      [{ username: 'rr-owner', rootRole: 'Owner' }, 'Could not find rootRole=Owner'],
      [{ username: 'rr-frac', rootRole: 1.5 }, 'The `/body/rootRole` property must be integer. You sent 1.5.'],
      [{ username: 'rr-big', rootRole: 2 ** 63 }, 'The `/body/rootRole` property must be <= 2147483647. You sent 9223372036854776000.'],
      [
        { username: 'extra', rootRole: 3, isAdmin: true },
        'The `/body` object of the request body does not allow additional properties. Your request included the `/body/isAdmin` property.',
      ],
      [
        { username: 'nul\u0000byte', rootRole: 3 },
        'The `/body/username` property must be well-formed text without NUL characters. You sent "nul\\u0000byte".',
      ],
      [
        { username: 'lone\ud800', rootRole: 3 },
        'The `/body/username` property must be well-formed text without NUL characters. You sent "lone\\ud800".',
      ],
      [{ username: '   ', rootRole: 3 }, 'The `/body/username` property must not be empty. You sent "".'],
      [
        { username: 'x'.repeat(256), rootRole: 3 },
        `The \`/body/username\` property must be at most 255 characters long. You sent "${'x'.repeat(96)}...`,
      ],
    ];
    for (const [body, message] of cases) {
      const response = await call('POST', '/api/admin/user-admin', { body });
      const error = await expectError(response, 400, 'ValidationError');
      expect(error.details.map((detail) => detail.message).join(' | '), JSON.stringify(body)).toContain(message);
    }
    for (const raw of ['[]', 'null', '"s"', '{"a":'.repeat(5000)]) {
      await expectError(await call('POST', '/api/admin/user-admin', { rawBody: raw }), 400, 'ValidationError');
    }
    expect(await count('SELECT count(*) AS n FROM users')).toBe(users);
    expect(await count('SELECT count(*) AS n FROM role_user')).toBe(roleUsers);
    expect(await count('SELECT count(*) AS n FROM events')).toBe(events);
  });

  it('answers 415 for a non-JSON body after checking the key', async () => {
    await expectError(
      await call('POST', '/api/admin/user-admin', { rawBody: 'email=x', contentType: 'text/plain' }),
      415,
      'ContentTypeerror',
    );
    await expectError(
      await call('POST', '/api/admin/user-admin', { rawBody: 'email=x', contentType: 'text/plain', token: null }),
      401,
      'AuthenticationRequired',
    );
  });
});

describe('GET /api/admin/user-admin', () => {
  it('lists live users with inviteLink, and the root roles', async () => {
    const created = await postUser({ email: 'listed@example.com', rootRole: 3 });
    const response = await call('GET', '/api/admin/user-admin');
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['users', 'rootRoles']);
    const ids = body.users.map((user: { id: number }) => user.id);
    expect(ids).toContain(1);
    expect(ids).toContain(created.id);
    expect(ids).not.toContain(-42);
    expect(ids).not.toContain(-1337);
    expect(body.users.find((user: { id: number }) => user.id === created.id)).toEqual({ ...created, inviteLink: '', emailSent: undefined });
    expect(body.rootRoles.map((role: { id: number; name: string; type: string }) => [role.id, role.name, role.type])).toEqual([
      [1, 'Admin', 'root'],
      [2, 'Editor', 'root'],
      [3, 'Viewer', 'root'],
    ]);
  });
});

describe('PUT /api/admin/user-admin/:id', () => {
  it('changes name, email and root role, and records before and after', async () => {
    const created = await postUser({ email: 'edit-me@example.com', name: 'Before', rootRole: 3 });
    const response = await call('PUT', `/api/admin/user-admin/${created.id}`, {
      body: { name: 'After', email: ' Edited@Example.com', rootRole: 'Editor' },
    });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body).toMatchObject({ id: created.id, name: 'After', email: 'edited@example.com', rootRole: 2 });
    expect(body.imageUrl).toMatch(GRAVATAR);
    expect(await bodyOf(await call('GET', `/api/admin/user-admin/${created.id}`))).toEqual(body);
    expect(await count("SELECT count(*) AS n FROM role_user WHERE user_id = ? AND project = 'default'", created.id)).toBe(1);
    const event = await env.DB.prepare("SELECT data, pre_data FROM events WHERE type = 'user-updated' ORDER BY id DESC LIMIT 1").first<{
      data: string;
      pre_data: string;
    }>();
    expect(JSON.parse(event!.pre_data)).toEqual({ id: created.id, name: 'Before', email: 'edit-me@example.com', rootRole: 3 });
    expect(JSON.parse(event!.data)).toEqual({ id: created.id, name: 'After', email: 'edited@example.com', rootRole: 2 });
  });

  it("refuses another user's email, a bad email or an unknown role with 400 and changes nothing", async () => {
    const taken = await postUser({ email: 'taken@example.com', rootRole: 3 });
    const user = await postUser({ email: 'mine@example.com', rootRole: 3 });
    const cases: [unknown, string][] = [
      [{ email: 'taken@example.com' }, 'User already exists'],
      [{ email: 'bad' }, 'The `/body/email` property must be a valid email address. You sent "bad".'],
      [{ rootRole: 5 }, 'Could not find rootRole=5'],
    ];
    for (const [body, message] of cases) {
      const error = await expectError(await call('PUT', `/api/admin/user-admin/${user.id}`, { body }), 400, 'ValidationError');
      expect(error.details[0]!.message).toBe(message);
    }
    expect(await bodyOf(await call('GET', `/api/admin/user-admin/${user.id}`))).toMatchObject({ email: 'mine@example.com', rootRole: 3 });
    expect(taken.id).not.toBe(user.id);
  });

  it('answers 404 for an unknown user and 400 for a non-integer id', async () => {
    await expectError(await call('PUT', '/api/admin/user-admin/987654', { body: { name: 'x' } }), 404, 'NotFoundError');
    await expectError(await call('PUT', '/api/admin/user-admin/abc', { body: { name: 'x' } }), 400, 'ValidationError');
  });
});

describe('DELETE /api/admin/user-admin/:id', () => {
  it('soft-deletes: the user reads as 404, its row is blanked, and the email can be used again', async () => {
    const created = await postUser({ email: 'leaving@example.com', username: 'leaving', name: 'Leaving', rootRole: 2 });
    const response = await call('DELETE', `/api/admin/user-admin/${created.id}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    await expectError(await call('GET', `/api/admin/user-admin/${created.id}`), 404, 'NotFoundError');
    await expectError(await call('DELETE', `/api/admin/user-admin/${created.id}`), 404, 'NotFoundError');
    const row = await env.DB.prepare('SELECT name, username, email, deleted_at FROM users WHERE id = ?')
      .bind(created.id)
      .first<Record<string, string | null>>();
    expect(row).toMatchObject({ name: null, username: null, email: null });
    expect(row!.deleted_at).toMatch(ISO);
    expect(await count('SELECT count(*) AS n FROM role_user WHERE user_id = ?', created.id)).toBe(0);
    const event = await env.DB.prepare("SELECT pre_data FROM events WHERE type = 'user-deleted' ORDER BY id DESC LIMIT 1").first<{
      pre_data: string;
    }>();
    expect(JSON.parse(event!.pre_data)).toEqual({
      id: created.id,
      name: 'Leaving',
      username: 'leaving',
      email: 'leaving@example.com',
      rootRole: 2,
    });
    const again = await postUser({ email: 'leaving@example.com', username: 'leaving', rootRole: 3 });
    expect(again.id).toBeGreaterThan(created.id);
  });

  it('will not delete the system users', async () => {
    await expectError(await call('DELETE', '/api/admin/user-admin/-42'), 404, 'NotFoundError');
    await expectError(await call('DELETE', '/api/admin/user-admin/-1337'), 404, 'NotFoundError');
  });
});
