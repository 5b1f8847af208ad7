import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError } from './support/http';
import { count } from './support/db';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAY = 24 * 60 * 60 * 1000;
const VIEWER = {
  id: 3,
  type: 'root',
  name: 'Viewer',
  description:
    'Users with the root viewer role can only read root resources in Unleash. Viewers can be added to specific projects as project members. Users with the viewer role may not view API tokens.',
  project: null,
};
const TOKEN_KEYS = ['secret', 'name', 'url', 'expiresAt', 'enabled', 'createdAt', 'createdBy', 'role', 'users'];

function inDays(days: number): string {
  return new Date(Date.now() + days * DAY).toISOString();
}

async function createSignupToken(body: Record<string, unknown>) {
  const response = await call('POST', '/api/admin/invite-link/tokens', { body });
  if (response.status !== 201) throw new Error(`token creation failed: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

async function signup(secret: string, body: unknown) {
  return call('POST', `/invite/${secret}/signup`, { token: null, body });
}

describe('POST /api/admin/invite-link/tokens', () => {
  it('creates a Viewer token: 201, 32-hex secret, url on the public base, a location and an event', async () => {
    const expiresAt = inDays(7);
    const response = await call('POST', '/api/admin/invite-link/tokens', { body: { name: 'Team invite', expiresAt } });
    expect(response.status).toBe(201);
    const token = await bodyOf(response);
    expect(Object.keys(token)).toEqual(TOKEN_KEYS);
    expect(token.secret).toMatch(/^[0-9a-f]{32}$/);
    expect(token).toEqual({
      secret: token.secret,
      name: 'Team invite',
      url: `http://localhost/new-user?invite=${token.secret}`,
      expiresAt,
      enabled: true,
      createdAt: token.createdAt,
      createdBy: 'admin',
      role: VIEWER,
      users: [],
    });
    expect(token.createdAt).toMatch(ISO);
    expect(response.headers.get('location')).toBe(`/api/admin/invite-link/tokens/${token.secret}`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    // The event names the invite by a prefix: the secret (and the url carrying it) is never stored there.
    expect(
      await count(
        "SELECT count(*) AS n FROM events WHERE type = 'public-signup-token-created' AND json_extract(data, '$.secretPrefix') = ?",
        `${token.secret.slice(0, 6)}***`,
      ),
    ).toBe(1);
    expect(
      await count('SELECT count(*) AS n FROM events WHERE instr(data, ?) > 0 OR instr(pre_data, ?) > 0', token.secret, token.secret),
    ).toBe(0);
  });

  it('answers every read and update of invite links with cache-control: no-store (they carry secrets)', async () => {
    const token = await createSignupToken({ name: 'Uncached', expiresAt: inDays(1) });
    for (const response of [
      await call('GET', '/api/admin/invite-link/tokens'),
      await call('GET', `/api/admin/invite-link/tokens/${token.secret}`),
      await call('PUT', `/api/admin/invite-link/tokens/${token.secret}`, { body: { enabled: true } }),
    ]) {
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('caps the expiry at one month from now, as Unleash does', async () => {
    const token = await createSignupToken({ name: 'Far future', expiresAt: '2099-01-01T00:00:00Z' });
    const expiry = Date.parse(token.expiresAt);
    expect(expiry).toBeGreaterThan(Date.now() + 27 * DAY);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 31 * DAY);
  });

  it('gives the token another root role when asked, and refuses non-root roles', async () => {
    const editor = await createSignupToken({ name: 'Editors', expiresAt: inDays(1), roleId: 2 });
    expect(editor.role).toMatchObject({ id: 2, type: 'root', name: 'Editor', project: null });
    const error = await expectError(
      await call('POST', '/api/admin/invite-link/tokens', { body: { name: 'Owners', expiresAt: inDays(1), roleId: 4 } }),
      400,
      'ValidationError',
    );
    expect(error.details).toEqual([{ message: 'Could not find a root role with id 4', path: '/body/roleId' }]);
  });

  it('answers 400 for missing, extra or malformed fields, storing nothing', async () => {
    const before = await count('SELECT count(*) AS n FROM public_signup_tokens');
    const cases: [unknown, string][] = [
      [{ expiresAt: inDays(1) }, 'The `/body/name` property is required. It was not present on the data you sent.'],
      [{ name: 'x' }, 'The `/body/expiresAt` property is required. It was not present on the data you sent.'],
      [{ name: 'x', expiresAt: '2030-01-01' }, 'The `/body/expiresAt` property must match format "date-time". You sent "2030-01-01".'],
      [
        { name: 'x', expiresAt: inDays(1), secret: 'mine' },
        'The `/body` object of the request body does not allow additional properties. Your request included the `/body/secret` property.',
      ],
      [{ name: '', expiresAt: inDays(1) }, 'The `/body/name` property must not be empty. You sent "".'],
    ];
    for (const [body, message] of cases) {
      const error = await expectError(await call('POST', '/api/admin/invite-link/tokens', { body }), 400, 'ValidationError');
      expect(error.details.map((detail) => detail.message)).toContain(message);
    }
    expect(await count('SELECT count(*) AS n FROM public_signup_tokens')).toBe(before);
  });
});

describe('GET /api/admin/invite-link/tokens', () => {
  it('lists tokens with their role and users', async () => {
    const token = await createSignupToken({ name: 'Listed', expiresAt: inDays(3) });
    const response = await call('GET', '/api/admin/invite-link/tokens');
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['tokens']);
    expect(body.tokens).toContainEqual(token);
  });
});

describe('GET /api/admin/invite-link/tokens/:token', () => {
  it('returns one token, 404 NotFoundError for an unknown secret', async () => {
    const token = await createSignupToken({ name: 'One', expiresAt: inDays(3) });
    expect(await bodyOf(await call('GET', `/api/admin/invite-link/tokens/${token.secret}`))).toEqual(token);
    const error = await expectError(
      await call('GET', '/api/admin/invite-link/tokens/0123456789abcdef0123456789abcdef'),
      404,
      'NotFoundError',
    );
    expect(error.message).toBe('Could not find public signup token.');
    await expectError(await call('GET', `/api/admin/invite-link/tokens/${token.secret.toUpperCase()}`), 404, 'NotFoundError');
  });
});

describe('PUT /api/admin/invite-link/tokens/:token', () => {
  it('changes expiresAt and enabled and answers 200 with the full token, users and role included', async () => {
    const token = await createSignupToken({ name: 'Editable', expiresAt: inDays(2) });
    const person = await bodyOf(await signup(token.secret, { email: 'put-signup@example.com', name: 'Signed Up' }));

    const expiresAt = '2030-01-01T10:00:00.000Z';
    const response = await call('PUT', `/api/admin/invite-link/tokens/${token.secret}`, {
      body: { expiresAt: '2030-01-01T10:00:00', enabled: false },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(TOKEN_KEYS);
    // Not capped on update (Unleash caps only on create).
    expect(body).toEqual({ ...token, expiresAt, enabled: false, users: [person] });
    expect(await bodyOf(await call('GET', `/api/admin/invite-link/tokens/${token.secret}`))).toEqual(body);

    const enabled = await bodyOf(await call('PUT', `/api/admin/invite-link/tokens/${token.secret}`, { body: { enabled: true } }));
    expect(enabled).toMatchObject({ enabled: true, expiresAt });
    const event = await env.DB.prepare(
      "SELECT created_by, data, pre_data FROM events WHERE type = 'public-signup-token-updated' ORDER BY id DESC LIMIT 1",
    ).first<{ created_by: string; data: string; pre_data: string }>();
    expect(event!.created_by).toBe('admin');
    const secretPrefix = `${token.secret.slice(0, 6)}***`;
    expect(JSON.parse(event!.data)).toEqual({ secretPrefix, enabled: true, expiresAt });
    expect(JSON.parse(event!.pre_data)).toEqual({ secretPrefix, enabled: false, expiresAt });
  });

  it('reports enabled false once expiresAt has passed, on every read, while the stored flag stays', async () => {
    const token = await createSignupToken({ name: 'Expiring', expiresAt: inDays(2) });
    const past = '2020-01-01T00:00:00.000Z';
    const updated = await bodyOf(
      await call('PUT', `/api/admin/invite-link/tokens/${token.secret}`, { body: { expiresAt: past, enabled: true } }),
    );
    expect(updated).toMatchObject({ expiresAt: past, enabled: false });
    expect((await bodyOf(await call('GET', `/api/admin/invite-link/tokens/${token.secret}`))).enabled).toBe(false);
    const listed = (await bodyOf(await call('GET', '/api/admin/invite-link/tokens'))).tokens.find(
      (item: { secret: string }) => item.secret === token.secret,
    );
    expect(listed.enabled).toBe(false);
    expect(await count('SELECT enabled AS n FROM public_signup_tokens WHERE secret = ?', token.secret)).toBe(1);
    // Moving the expiry forward makes it usable again.
    const revived = await bodyOf(await call('PUT', `/api/admin/invite-link/tokens/${token.secret}`, { body: { expiresAt: inDays(1) } }));
    expect(revived.enabled).toBe(true);
  });

  it('answers 400 ValidationError with a JSON body for {} and for wrong types or extra keys, changing nothing', async () => {
    const token = await createSignupToken({ name: 'Validated', expiresAt: inDays(2) });
    const events = await count('SELECT count(*) AS n FROM events');
    const empty = await expectError(
      await call('PUT', `/api/admin/invite-link/tokens/${token.secret}`, { body: {} }),
      400,
      'ValidationError',
    );
    expect(empty.details).toEqual([
      { path: '/body', message: 'The `/body` property must contain at least one of `expiresAt` and `enabled`. You sent {}.' },
    ]);
    const cases: [unknown, string][] = [
      [{ enabled: 'yes' }, 'The `/body/enabled` property must be boolean. You sent "yes".'],
      [{ enabled: null }, 'The `/body/enabled` property must be boolean. You sent null.'],
      [{ expiresAt: '2030-01-01' }, 'The `/body/expiresAt` property must match format "date-time". You sent "2030-01-01".'],
      [{ expiresAt: '' }, 'The `/body/expiresAt` property must match format "date-time". You sent "".'],
      [{ expiresAt: 20300101 }, 'The `/body/expiresAt` property must be string. You sent 20300101.'],
      [
        { expiresAt: '2030-02-30T00:00:00Z' },
        'The `/body/expiresAt` property must match format "date-time". You sent "2030-02-30T00:00:00Z".',
      ],
      [
        { enabled: false, name: 'renamed' },
        'The `/body` object of the request body does not allow additional properties. Your request included the `/body/name` property.',
      ],
      [[], 'The `/body` property must be object. You sent [].'],
      [null, 'The `/body` property must be object. You sent null.'],
      ['s', 'The `/body` property must be object. You sent "s".'],
    ];
    for (const [body, message] of cases) {
      const error = await expectError(await call('PUT', `/api/admin/invite-link/tokens/${token.secret}`, { body }), 400, 'ValidationError');
      expect(
        error.details.map((detail) => detail.message),
        JSON.stringify(body),
      ).toContain(message);
    }
    await expectError(
      await call('PUT', `/api/admin/invite-link/tokens/${token.secret}`, { rawBody: '{"enabled":' }),
      400,
      'ValidationError',
    );
    await expectError(
      await call('PUT', `/api/admin/invite-link/tokens/${token.secret}`, { rawBody: '{"a":'.repeat(10000) }),
      400,
      'ValidationError',
    );
    const deep = `${'['.repeat(10000)}${']'.repeat(10000)}`;
    for (const raw of [`{"enabled":false,"extra":${deep}}`, `{"enabled":${deep}}`, `{"expiresAt":${deep}}`]) {
      const error = await expectError(
        await call('PUT', `/api/admin/invite-link/tokens/${token.secret}`, { rawBody: raw }),
        400,
        'ValidationError',
      );
      expect(error.details.length).toBe(1);
    }
    expect(await count('SELECT count(*) AS n FROM events')).toBe(events);
    expect(await bodyOf(await call('GET', `/api/admin/invite-link/tokens/${token.secret}`))).toEqual(token);
  });

  it('answers 404 NotFoundError for an unknown secret', async () => {
    const error = await expectError(
      await call('PUT', '/api/admin/invite-link/tokens/ffffffffffffffffffffffffffffffff', { body: { enabled: false } }),
      404,
      'NotFoundError',
    );
    expect(error.message).toBe('Could not find public signup token.');
    expect(error.details).toEqual([{ message: 'Could not find public signup token.' }]);
    await expectError(await call('PUT', '/api/admin/invite-link/tokens/%00%2F..', { body: { enabled: false } }), 404, 'NotFoundError');
  });

  it('answers 401 without a key, 403 for client and frontend keys, 415 for non-JSON after the key check', async () => {
    const token = await createSignupToken({ name: 'Guarded', expiresAt: inDays(2) });
    const path = `/api/admin/invite-link/tokens/${token.secret}`;
    await expectError(await call('PUT', path, { token: null, body: { enabled: false } }), 401, 'AuthenticationRequired');
    await expectError(await call('PUT', path, { token: null, rawBody: 'x', contentType: 'text/plain' }), 401, 'AuthenticationRequired');
    const client = await createToken({ tokenName: 'signup-client', type: 'client', environment: 'development' });
    const frontend = await createToken({ tokenName: 'signup-frontend', type: 'frontend', environment: 'development' });
    for (const key of [client, frontend]) {
      await expectError(await call('PUT', path, { token: key, body: { enabled: false } }), 403, 'NoAccessError');
      await expectError(await call('PUT', path, { token: key, rawBody: 'x', contentType: 'text/plain' }), 403, 'NoAccessError');
    }
    const unsupported = await expectError(
      await call('PUT', path, { rawBody: 'enabled=false', contentType: 'application/x-www-form-urlencoded' }),
      415,
      'ContentTypeerror',
    );
    expect(unsupported.message).toContain('(application/x-www-form-urlencoded)');
    await expectError(await call('PUT', path, { rawBody: '{"enabled":false}', contentType: null }), 415, 'ContentTypeerror');
    expect((await bodyOf(await call('GET', path))).enabled).toBe(true);
  });
});

describe('GET /invite/:token/validate', () => {
  it('answers 200 with no body for a usable token, without a key', async () => {
    const token = await createSignupToken({ name: 'Usable', expiresAt: inDays(2) });
    const response = await call('GET', `/invite/${token.secret}/validate`, { token: null });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });

  it('answers 400 with a reason for unknown, disabled and expired tokens', async () => {
    const unknown = await expectError(
      await call('GET', '/invite/0123456789abcdef0123456789abcdef/validate', { token: null }),
      400,
      'ValidationError',
    );
    expect(unknown.message).toBe('This invite link is not valid: no invite link has that secret.');
    const disabled = await createSignupToken({ name: 'Disabled', expiresAt: inDays(2) });
    await call('PUT', `/api/admin/invite-link/tokens/${disabled.secret}`, { body: { enabled: false } });
    expect(
      (await expectError(await call('GET', `/invite/${disabled.secret}/validate`, { token: null }), 400, 'ValidationError')).message,
    ).toBe('This invite link has been disabled.');
    const expired = await createSignupToken({ name: 'Expired', expiresAt: '2020-01-01T00:00:00Z' });
    expect(expired.enabled).toBe(false);
    expect(
      (await expectError(await call('GET', `/invite/${expired.secret}/validate`, { token: null }), 400, 'ValidationError')).message,
    ).toBe('This invite link expired at 2020-01-01T00:00:00.000Z.');
  });
});

describe('POST /invite/:token/signup', () => {
  it("creates a user with the token's role, records it on the token, and hashes the password", async () => {
    const token = await createSignupToken({ name: 'Signups', expiresAt: inDays(2), roleId: 2 });
    const response = await signup(token.secret, { email: ' New.Signup@Example.com ', name: 'New Signup', password: 'Hunter2-but-longer' });
    expect(response.status).toBe(201);
    const user = await bodyOf(response);
    expect(Object.keys(user)).toEqual([
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
    ]);
    expect(user).toMatchObject({ name: 'New Signup', email: 'new.signup@example.com', rootRole: 2 });
    expect(await bodyOf(await call('GET', `/api/admin/user-admin/${user.id}`))).toEqual(user);

    const second = await bodyOf(await signup(token.secret, { email: 'second.signup@example.com', name: 'Second', username: 'second' }));
    const read = await bodyOf(await call('GET', `/api/admin/invite-link/tokens/${token.secret}`));
    expect(read.users).toEqual([user, second]);

    const hash = await env.DB.prepare('SELECT password_hash FROM users WHERE id = ?').bind(user.id).first<{ password_hash: string }>();
    expect(hash!.password_hash).toMatch(/^pbkdf2-sha256\$100000\$/);
    expect(hash!.password_hash).not.toContain('Hunter2');
    expect(await count('SELECT password_hash IS NULL AS n FROM users WHERE id = ?', second.id)).toBe(1);
    expect(
      await count(
        "SELECT count(*) AS n FROM events WHERE type = 'public-signup-token-user-added' AND json_extract(data, '$.secretPrefix') = ?",
        `${token.secret.slice(0, 6)}***`,
      ),
    ).toBe(2);
    expect(await count('SELECT count(*) AS n FROM events WHERE instr(data, ?) > 0', token.secret)).toBe(0);
    const created = await env.DB.prepare("SELECT created_by FROM events WHERE type = 'user-created' AND json_extract(data, '$.id') = ?")
      .bind(user.id)
      .first<{ created_by: string }>();
    expect(created!.created_by).toBe('unleash_system_user');
  });

  it('refuses expired, disabled and unknown tokens with a clear 400 and creates nobody', async () => {
    const users = await count('SELECT count(*) AS n FROM users');
    const expired = await createSignupToken({ name: 'Expired signup', expiresAt: '2021-06-01T00:00:00Z' });
    const disabled = await createSignupToken({ name: 'Disabled signup', expiresAt: inDays(2) });
    await call('PUT', `/api/admin/invite-link/tokens/${disabled.secret}`, { body: { enabled: false } });
    const person = { email: 'refused@example.com', name: 'Refused' };
    expect((await expectError(await signup(expired.secret, person), 400, 'ValidationError')).message).toBe(
      'This invite link expired at 2021-06-01T00:00:00.000Z.',
    );
    expect((await expectError(await signup(disabled.secret, person), 400, 'ValidationError')).message).toBe(
      'This invite link has been disabled.',
    );
    expect((await expectError(await signup('nope', person), 400, 'ValidationError')).message).toBe(
      'This invite link is not valid: no invite link has that secret.',
    );
    expect(await count('SELECT count(*) AS n FROM users')).toBe(users);
    expect(await count('SELECT count(*) AS n FROM public_signup_tokens_user WHERE secret IN (?, ?)', expired.secret, disabled.secret)).toBe(
      0,
    );
  });

  it('refuses bad bodies and taken emails with 400, leaving no user or token row behind', async () => {
    const token = await createSignupToken({ name: 'Strict signup', expiresAt: inDays(2) });
    await signup(token.secret, { email: 'first@example.com', name: 'First' });
    const users = await count('SELECT count(*) AS n FROM users');
    const links = await count('SELECT count(*) AS n FROM public_signup_tokens_user');
    const cases: [unknown, string][] = [
      [{ email: 'FIRST@example.com', name: 'Again' }, 'User already exists'],
      [{ name: 'No email' }, 'The `/body/email` property is required. It was not present on the data you sent.'],
      [{ email: 'x@example.com' }, 'The `/body/name` property is required. It was not present on the data you sent.'],
      [{ email: 'not-an-email', name: 'x' }, 'The `/body/email` property must be a valid email address. You sent "not-an-email".'],
      [
        { email: 'y@example.com', name: 'y', rootRole: 1 },
        'The `/body` object of the request body does not allow additional properties. Your request included the `/body/rootRole` property.',
      ],
      [{ email: 'z@example.com', name: 'z', password: '' }, 'The `/body/password` property must not be empty. You sent "".'],
      [
        { email: 'w@example.com', name: 'w', password: 'bad\ud800' },
        'The `/body/password` property must be well-formed text without NUL characters. You sent "bad\\ud800".',
      ],
    ];
    for (const [body, message] of cases) {
      const error = await expectError(await signup(token.secret, body), 400, 'ValidationError');
      expect(
        error.details.map((detail) => detail.message),
        JSON.stringify(body),
      ).toContain(message);
    }
    await expectError(
      await call('POST', `/invite/${token.secret}/signup`, { token: null, rawBody: 'email=x', contentType: 'text/plain' }),
      415,
      'ContentTypeerror',
    );
    expect(await count('SELECT count(*) AS n FROM users')).toBe(users);
    expect(await count('SELECT count(*) AS n FROM public_signup_tokens_user')).toBe(links);
  });

  it("lets a soft-deleted user's email sign up again and hides deleted users from the token", async () => {
    const token = await createSignupToken({ name: 'Rejoin', expiresAt: inDays(2) });
    const first = await bodyOf(await signup(token.secret, { email: 'rejoin@example.com', name: 'Rejoin' }));
    expect((await call('DELETE', `/api/admin/user-admin/${first.id}`)).status).toBe(200);
    const second = await signup(token.secret, { email: 'rejoin@example.com', name: 'Rejoin again' });
    expect(second.status).toBe(201);
    const read = await bodyOf(await call('GET', `/api/admin/invite-link/tokens/${token.secret}`));
    expect(read.users.map((user: { id: number }) => user.id)).toEqual([(await bodyOf(second)).id]);
  });
});

describe('migration 0008', () => {
  it('rewrites invite events written before it: the secret becomes a prefix, the url goes', async () => {
    const secret = 'abcdef0123456789abcdef0123456789';
    await env.DB.prepare("INSERT INTO events (type, created_by, data, pre_data) VALUES ('public-signup-token-updated', 'admin', ?, ?)")
      .bind(
        JSON.stringify({ secret, url: `http://x/new-user?invite=${secret}`, enabled: true }),
        JSON.stringify({ secret, enabled: false }),
      )
      .run();
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith('0008'))!;
    for (const query of migration.queries.filter((q) => q.includes('UPDATE events'))) await env.DB.prepare(query).run();
    const row = await env.DB.prepare(
      "SELECT data, pre_data FROM events WHERE type = 'public-signup-token-updated' AND json_extract(data, '$.secretPrefix') = 'abcdef***'",
    ).first<{ data: string; pre_data: string }>();
    expect(JSON.parse(row!.data)).toEqual({ enabled: true, secretPrefix: 'abcdef***' });
    expect(JSON.parse(row!.pre_data)).toEqual({ enabled: false, secretPrefix: 'abcdef***' });
    expect(await count('SELECT count(*) AS n FROM events WHERE instr(data, ?) > 0 OR instr(pre_data, ?) > 0', secret, secret)).toBe(0);
  });
});
