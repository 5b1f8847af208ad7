import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import worker from '../src/index';
import { bodyOf, call, expectError } from './support/http';
import { createPersonalToken, signedInUser, withSession } from './support/auth';
import { sha256Hex } from './support/crypto';
import { count, lastEvent } from './support/db';

const FUTURE = '2099-01-01T00:00:00.000Z';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function createPat(cookie: string, body: unknown) {
  return call('POST', '/api/admin/user/tokens', withSession(cookie, { body }));
}

describe('POST /api/admin/user/tokens', () => {
  it('201 with the secret shown once (user:<56 hex>), stored only hashed', async () => {
    const user = await signedInUser(2);
    const response = await createPat(user.cookie, { description: 'ci', expiresAt: FUTURE });
    expect(response.status).toBe(201);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['id', 'description', 'expiresAt', 'userId', 'createdAt', 'seenAt', 'secret']);
    expect(body).toMatchObject({ description: 'ci', expiresAt: FUTURE, userId: user.id, seenAt: null });
    expect(body.createdAt).toMatch(ISO);
    expect(body.secret).toMatch(/^user:[0-9a-f]{56}$/);
    const row = await env.DB.prepare('SELECT * FROM personal_access_tokens WHERE id = ?').bind(body.id).first<Record<string, unknown>>();
    expect(row!.secret_hash).toBe(await sha256Hex(body.secret));
    expect(JSON.stringify(row)).not.toContain(body.secret.slice(5));

    const listed = await bodyOf(await call('GET', '/api/admin/user/tokens', withSession(user.cookie)));
    expect(listed).toEqual({
      pats: [{ id: body.id, description: 'ci', expiresAt: FUTURE, userId: user.id, createdAt: body.createdAt, seenAt: null }],
    });
  });

  it('records the pat-created event by the user, without the secret', async () => {
    const user = await signedInUser(3);
    const { secret } = await bodyOf(await createPat(user.cookie, { description: ' audited ', expiresAt: FUTURE }));
    const event = await lastEvent('pat-created');
    expect(event).toMatchObject({ created_by: user.username, created_by_user_id: user.id, project: null, environment: null });
    expect(JSON.parse(event!.data!)).toEqual({ description: 'audited', expiresAt: FUTURE, secret: '***' });
    expect(JSON.stringify(event)).not.toContain(secret.slice(5));
  });

  it('writes no token and no event when refused', async () => {
    const user = await signedInUser(3);
    await createPersonalToken(user.cookie, 'taken');
    const before = [await count('SELECT count(*) AS n FROM personal_access_tokens'), await count('SELECT count(*) AS n FROM events')];
    await expectError(await createPat(user.cookie, { description: 'taken', expiresAt: FUTURE }), 409, 'NameExistsError');
    await expectError(await createPat(user.cookie, { description: ' ', expiresAt: FUTURE }), 400, 'ValidationError');
    await expectError(await createPat(user.cookie, { description: 'x' }), 400, 'ValidationError');
    expect([await count('SELECT count(*) AS n FROM personal_access_tokens'), await count('SELECT count(*) AS n FROM events')]).toEqual(
      before,
    );
  });

  it('400 without description or expiresAt, for a blank description or a past expiry', async () => {
    const user = await signedInUser(3);
    const noExpiry = await expectError(await createPat(user.cookie, { description: 'x' }), 400, 'ValidationError');
    expect(noExpiry.details[0]!.path).toBe('/body/expiresAt');
    const noDescription = await expectError(await createPat(user.cookie, { expiresAt: FUTURE }), 400, 'ValidationError');
    expect(noDescription.details[0]!.path).toBe('/body/description');
    const blank = await expectError(await createPat(user.cookie, { description: '  ', expiresAt: FUTURE }), 400, 'ValidationError');
    expect(blank.details[0]!.message).toBe('PAT description cannot be empty.');
    const past = await expectError(
      await createPat(user.cookie, { description: 'old', expiresAt: '2020-01-01T00:00:00Z' }),
      400,
      'ValidationError',
    );
    expect(past.details[0]!.message).toBe('The expiry date should be in future.');
  });

  it('409 for a description the user already has; another user may use it', async () => {
    const user = await signedInUser(3);
    await createPersonalToken(user.cookie, 'same');
    const body = await expectError(await createPat(user.cookie, { description: 'same', expiresAt: FUTURE }), 409, 'NameExistsError');
    expect(body.message).toBe('PAT description already exists.');
    const other = await signedInUser(3);
    await createPersonalToken(other.cookie, 'same');
  });

  it('403 for the eleventh token of a user', async () => {
    const user = await signedInUser(3);
    for (let i = 0; i < 10; i++) await createPersonalToken(user.cookie, `t-${i}`);
    const body = await expectError(
      await createPat(user.cookie, { description: 'one too many', expiresAt: FUTURE }),
      403,
      'OperationDeniedError',
    );
    expect(body.message).toBe('Too many PATs (10) already exist for this user.');
  });

  it('403 for an admin API token: personal tokens need a person', async () => {
    const body = await expectError(
      await call('POST', '/api/admin/user/tokens', { body: { description: 'x', expiresAt: FUTURE } }),
      403,
      'NoAccessError',
    );
    expect(body.message).toBe('PATs require an authenticated user.');
    await expectError(await call('GET', '/api/admin/user/tokens'), 403, 'NoAccessError');
  });
});

describe('a personal access token in Authorization', () => {
  it("acts as its user, with the user's permissions", async () => {
    const viewer = await signedInUser(3);
    const pat = await createPersonalToken(viewer.cookie);
    const me = await bodyOf(await call('GET', '/api/admin/user', { token: pat }));
    expect(me.user).toMatchObject({ id: viewer.id, username: viewer.username });
    await expectError(await call('GET', '/api/admin/user-admin', { token: pat }), 403, 'NoAccessError');

    const admin = await signedInUser(1);
    const adminPat = await createPersonalToken(admin.cookie);
    expect((await call('GET', '/api/admin/user-admin', { token: adminPat })).status).toBe(200);
    expect((await call('GET', '/api/admin/user/tokens', { token: adminPat })).status).toBe(200);
  });

  it('is refused on the SDK APIs', async () => {
    const user = await signedInUser(1);
    const pat = await createPersonalToken(user.cookie);
    await expectError(await call('GET', '/api/client/features', { token: pat }), 403, 'NoAccessError');
  });

  it('401 for an unknown token', async () => {
    await expectError(await call('GET', '/api/admin/user', { token: `user:${'0'.repeat(56)}` }), 401, 'AuthenticationRequired');
  });

  it('401 once expired', async () => {
    const user = await signedInUser(3);
    const expiresAt = new Date(Date.now() + 10 * 60_000).toISOString();
    const response = await createPat(user.cookie, { description: 'short', expiresAt });
    const { secret } = await bodyOf(response);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      expect((await call('GET', '/api/admin/user', { token: secret })).status).toBe(200);
      vi.setSystemTime(Date.now() + 11 * 60_000);
      await expectError(await call('GET', '/api/admin/user', { token: secret }), 401, 'AuthenticationRequired');
    } finally {
      vi.useRealTimers();
    }
  });

  it('records when it was last seen', async () => {
    const user = await signedInUser(3);
    const secret = await createPersonalToken(user.cookie, 'seen');
    const ctx = createExecutionContext();
    await worker.fetch(new Request('http://localhost/api/admin/user', { headers: { authorization: secret } }), env, ctx);
    await waitOnExecutionContext(ctx);
    const { pats } = await bodyOf(await call('GET', '/api/admin/user/tokens', withSession(user.cookie)));
    expect(Date.parse(pats[0].seenAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('ends when its user is deleted', async () => {
    const user = await signedInUser(3);
    const secret = await createPersonalToken(user.cookie);
    expect((await call('GET', '/api/admin/user', { token: secret })).status).toBe(200);
    expect((await call('DELETE', `/api/admin/user-admin/${user.id}`)).status).toBe(200);
    await expectError(await call('GET', '/api/admin/user', { token: secret }), 401, 'AuthenticationRequired');
    expect(await env.TOKENS.get(`pat:${await sha256Hex(secret)}`)).toBeNull();
  });
});

describe('DELETE /api/admin/user/tokens/:id', () => {
  it('revokes at once: D1 row and KV entry gone, the token refused', async () => {
    const user = await signedInUser(3);
    const response = await createPat(user.cookie, { description: 'to revoke', expiresAt: FUTURE });
    const { id, secret } = await bodyOf(response);
    expect((await call('GET', '/api/admin/user', { token: secret })).status).toBe(200);
    const removed = await call('DELETE', `/api/admin/user/tokens/${id}`, withSession(user.cookie));
    expect(removed.status).toBe(200);
    expect(await removed.text()).toBe('');
    await expectError(await call('GET', '/api/admin/user', { token: secret }), 401, 'AuthenticationRequired');
    expect(await env.TOKENS.get(`pat:${await sha256Hex(secret)}`)).toBeNull();
    expect(await bodyOf(await call('GET', '/api/admin/user/tokens', withSession(user.cookie)))).toEqual({ pats: [] });
  });

  it('records the pat-deleted event: the token as stored, the secret masked', async () => {
    const user = await signedInUser(3);
    const created = await bodyOf(await createPat(user.cookie, { description: 'gone', expiresAt: FUTURE }));
    expect((await call('DELETE', `/api/admin/user/tokens/${created.id}`, withSession(user.cookie))).status).toBe(200);
    const event = await lastEvent('pat-deleted');
    expect(event).toMatchObject({ created_by: user.username, created_by_user_id: user.id });
    const { secret, ...shown } = created;
    expect(JSON.parse(event!.data!)).toEqual({ ...shown, secret: '***' });
    expect(Object.keys(JSON.parse(event!.data!))).toEqual(['id', 'description', 'expiresAt', 'userId', 'createdAt', 'seenAt', 'secret']);
  });

  it("404 for an unknown id or another user's token, 400 for a non-integer id", async () => {
    const owner = await signedInUser(3);
    const { id } = await bodyOf(await createPat(owner.cookie, { description: 'mine', expiresAt: FUTURE }));
    const stranger = await signedInUser(1);
    const events = await count('SELECT count(*) AS n FROM events');
    const body = await expectError(
      await call('DELETE', `/api/admin/user/tokens/${id}`, withSession(stranger.cookie)),
      404,
      'NotFoundError',
    );
    expect(body.message).toBe('No PAT found.');
    await expectError(await call('DELETE', '/api/admin/user/tokens/999999', withSession(owner.cookie)), 404, 'NotFoundError');
    const bad = await expectError(await call('DELETE', '/api/admin/user/tokens/abc', withSession(owner.cookie)), 400, 'ValidationError');
    expect(bad.details[0]!.path).toBe('/params/id');
    expect((await bodyOf(await call('GET', '/api/admin/user/tokens', withSession(owner.cookie)))).pats).toHaveLength(1);
    expect(await count('SELECT count(*) AS n FROM events')).toBe(events);
  });
});

describe('GET /api/admin/user', () => {
  it('for a session: the user and Unleash-shaped permissions; an Admin has ADMIN', async () => {
    const admin = await signedInUser(1);
    const response = await call('GET', '/api/admin/user', withSession(admin.cookie));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['user', 'permissions', 'feedback', 'splash']);
    expect(body.user).toMatchObject({ isAPI: false, accountType: 'User', id: admin.id, username: admin.username });
    expect(body.user).not.toHaveProperty('rootRole');
    expect(body.permissions).toContainEqual({ permission: 'ADMIN' });
    expect(body.feedback).toEqual([]);
    expect(body.splash).toEqual({});
  });

  it("an Editor's root permissions carry no project; project roles name theirs", async () => {
    const editor = await signedInUser(2);
    const { permissions } = await bodyOf(await call('GET', '/api/admin/user', withSession(editor.cookie)));
    expect(permissions.length).toBeGreaterThan(0);
    expect(permissions).not.toContainEqual({ permission: 'ADMIN' });
    for (const permission of permissions) expect(Object.keys(permission)[0]).toBe('permission');
    expect(permissions).toContainEqual({ permission: 'CREATE_PROJECT' });
  });

  it('for an admin API token: the token user -42, without the secret', async () => {
    const response = await call('GET', '/api/admin/user');
    const body = await bodyOf(response);
    expect(body.user).toEqual({
      isAPI: true,
      username: 'admin',
      permissions: ['ADMIN'],
      environment: '*',
      type: 'admin',
      projects: ['*'],
      internalAdminTokenUserId: -42,
    });
    expect(JSON.stringify(body)).not.toContain('test-admin-token');
    expect(body.permissions).toEqual([{ permission: 'ADMIN' }]);
  });

  it('401 with the login hint without a credential', async () => {
    const body = await expectError(await call('GET', '/api/admin/user', { token: null }), 401, 'AuthenticationRequired');
    expect(body).toMatchObject({ path: '/auth/simple/login', type: 'password', defaultHidden: false });
  });
});

describe('GET /api/admin/user/profile', () => {
  it("the caller's root role, projects and subscriptions", async () => {
    const editor = await signedInUser(2);
    const body = await bodyOf(await call('GET', '/api/admin/user/profile', withSession(editor.cookie)));
    expect(body).toEqual({
      projects: ['default'],
      rootRole: { id: 2, name: 'Editor', type: 'root', description: expect.any(String) },
      subscriptions: ['productivity-report'],
      features: [],
    });
  });
});
