import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser, loginAs } from './support/auth';
import { bodyOf, call, expectError } from './support/http';
import { signInAs } from './support/users';
import { count } from './support/db';

let viewer: string;

beforeAll(async () => {
  viewer = await signInAs('Viewer');
});

describe('literal user-admin paths', () => {
  it('are never taken for a user id', async () => {
    for (const path of ['/api/admin/user-admin/admin-count', '/api/admin/user-admin/search?q=zz']) {
      const response = await call('GET', path);
      expect(response.status, path).toBe(200);
    }
    const reset = await call('POST', '/api/admin/user-admin/reset-password', { body: { id: 'nobody@example.com' } });
    expect((await bodyOf(reset)).message).toBe('No user found');
  });
});

describe('GET /api/admin/user-admin/admin-count', () => {
  it('counts active admins with and without a password', async () => {
    const before = await bodyOf(await call('GET', '/api/admin/user-admin/admin-count'));
    expect(Object.keys(before)).toEqual(['password', 'noPassword', 'service']);
    await createUser('Admin');
    await createUser('Editor');
    const after = await bodyOf(await call('GET', '/api/admin/user-admin/admin-count'));
    expect(after).toEqual({ ...before, password: before.password + 1 });
  });

  it('is for admins only', async () => {
    await expectError(await call('GET', '/api/admin/user-admin/admin-count', { token: viewer }), 403, 'NoAccessError');
  });
});

describe('GET /api/admin/user-admin/search', () => {
  it('finds users by name, username or email start, with the public fields only', async () => {
    await call('POST', '/api/admin/user-admin', {
      body: { name: 'Searchable Person', username: 'findme-user', email: 'findme@example.com', rootRole: 3 },
    });
    const response = await call('GET', '/api/admin/user-admin/search?q=findme', { token: viewer });
    expect(response.status).toBe(200);
    const found = await bodyOf(response);
    expect(found).toHaveLength(1);
    expect(Object.keys(found[0])).toEqual(['isAPI', 'accountType', 'id', 'name', 'username', 'email', 'imageUrl', 'seenAt', 'scimId']);
    expect(found[0]).toMatchObject({ name: 'Searchable Person', username: 'findme-user', email: 'findme@example.com' });
    expect(await bodyOf(await call('GET', '/api/admin/user-admin/search?q=archable'))).toHaveLength(1);
    // The username and email match from their start only; a single character finds nothing.
    expect(await bodyOf(await call('GET', '/api/admin/user-admin/search?q=ndme'))).toEqual([]);
    expect(await bodyOf(await call('GET', '/api/admin/user-admin/search?q=f'))).toEqual([]);
    expect(await bodyOf(await call('GET', '/api/admin/user-admin/search'))).toEqual([]);
    // LIKE wildcards in the text are matched literally.
    expect(await bodyOf(await call('GET', '/api/admin/user-admin/search?q=%25%25'))).toEqual([]);
  });
});

describe('POST /api/admin/user-admin/reset-password', () => {
  it('answers a reset link for the user named by email, which then resets the password', async () => {
    const user = await createUser('Viewer', { email: 'reset-me@example.com' });
    const response = await call('POST', '/api/admin/user-admin/reset-password', { body: { id: 'Reset-Me@example.com' } });
    expect(response.status).toBe(200);
    const { resetPasswordUrl } = await bodyOf(response);
    const token = new URL(resetPasswordUrl).searchParams.get('token')!;
    expect(new URL(resetPasswordUrl).pathname).toBe('/reset-password');
    const validated = await call('GET', `/auth/reset/validate?token=${token}`, { token: null });
    expect(validated.status).toBe(200);
    expect((await call('POST', '/auth/reset/password', { token: null, body: { token, password: 'Another-Horse-43' } })).status).toBe(200);
    await loginAs(user.username, 'Another-Horse-43');
  });

  it('answers 404 for an unknown email, 400 without one, 403 to a non-admin, making no link', async () => {
    const before = await count('SELECT count(*) AS n FROM reset_tokens');
    await expectError(
      await call('POST', '/api/admin/user-admin/reset-password', { body: { id: 'nobody@example.com' } }),
      404,
      'NotFoundError',
    );
    await expectError(await call('POST', '/api/admin/user-admin/reset-password', { body: {} }), 400, 'ValidationError');
    await expectError(
      await call('POST', '/api/admin/user-admin/reset-password', { body: { id: 'reset-me@example.com' }, token: viewer }),
      403,
      'NoAccessError',
    );
    expect(await count('SELECT count(*) AS n FROM reset_tokens')).toBe(before);
  });
});

describe('GET /api/admin/user/roles', () => {
  it("answers the caller's roles in the project, with their root role", async () => {
    const user = await createUser('Editor');
    const token = await createPersonalToken(await loginAs(user.username));
    const response = await call('GET', '/api/admin/user/roles?projectId=default', { token });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body.version).toBe(1);
    expect(body.roles).toEqual([{ id: 2, name: 'Editor', type: 'root', project: 'default', description: expect.any(String) }]);
    expect(Object.keys(body.roles[0])).toEqual(['id', 'name', 'type', 'project', 'description']);
  });

  it('answers 400 without a project', async () => {
    await expectError(await call('GET', '/api/admin/user/roles', { token: viewer }), 400, 'ValidationError');
  });
});

describe('POST /auth/reset/password-email', () => {
  it('answers 200 with no body whether or not the address is known, and makes no link', async () => {
    await createUser('Viewer', { email: 'known@example.com' });
    const before = await count('SELECT count(*) AS n FROM reset_tokens');
    for (const email of ['known@example.com', 'unknown@example.com']) {
      const response = await call('POST', '/auth/reset/password-email', { token: null, body: { email } });
      expect(response.status).toBe(200);
      expect(await response.text()).toBe('');
    }
    expect(await count('SELECT count(*) AS n FROM reset_tokens')).toBe(before);
    await expectError(await call('POST', '/auth/reset/password-email', { token: null, body: {} }), 400, 'ValidationError');
  });
});

describe('GET /api/admin/user-admin/inactive and POST /api/admin/user-admin/inactive/delete', () => {
  const LONG_AGO = '2020-01-01T00:00:00.000Z';

  async function makeInactive(id: number) {
    await env.DB.prepare('UPDATE users SET created_at = ?, seen_at = ? WHERE id = ?').bind(LONG_AGO, LONG_AGO, id).run();
  }

  it('lists people unseen for 180 days and deletes only those of the listed ids, recording the events', async () => {
    const idle = await createUser('Viewer', { email: 'idle@example.com' });
    const active = await createUser('Viewer');
    await makeInactive(idle.id);
    const response = await call('GET', '/api/admin/user-admin/inactive');
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body.version).toBe(1);
    const listed = body.inactiveUsers.find((user: { id: number }) => user.id === idle.id);
    expect(Object.keys(listed)).toEqual(['id', 'name', 'email', 'username', 'seenAt', 'createdAt', 'patSeenAt']);
    expect(listed).toMatchObject({ email: 'idle@example.com', username: idle.username, seenAt: LONG_AGO, patSeenAt: null });
    expect(body.inactiveUsers.some((user: { id: number }) => user.id === active.id)).toBe(false);

    const deleted = await call('POST', '/api/admin/user-admin/inactive/delete', { body: { ids: [idle.id, active.id] } });
    expect(deleted.status).toBe(200);
    expect(await deleted.text()).toBe('');
    expect(await count('SELECT count(*) AS n FROM users WHERE id = ? AND deleted_at IS NOT NULL', idle.id)).toBe(1);
    expect(await count('SELECT count(*) AS n FROM users WHERE id = ? AND deleted_at IS NULL', active.id)).toBe(1);
    expect(
      await count("SELECT count(*) AS n FROM events WHERE type = 'user-deleted' AND json_extract(pre_data, '$.id') = ?", idle.id),
    ).toBe(1);
  });

  it('refuses a non-admin and bad ids, deleting nobody', async () => {
    const idle = await createUser('Viewer');
    await makeInactive(idle.id);
    await expectError(await call('GET', '/api/admin/user-admin/inactive', { token: viewer }), 403, 'NoAccessError');
    await expectError(
      await call('POST', '/api/admin/user-admin/inactive/delete', { body: { ids: [idle.id] }, token: viewer }),
      403,
      'NoAccessError',
    );
    await expectError(await call('POST', '/api/admin/user-admin/inactive/delete', { body: { ids: ['x'] } }), 400, 'ValidationError');
    expect(await count('SELECT count(*) AS n FROM users WHERE id = ? AND deleted_at IS NULL', idle.id)).toBe(1);
  });
});
