import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createUser, loginAs } from './support/auth';
import { count, rows } from './support/db';
import { call, expectError } from './support/http';
import { signInAs } from './support/users';

describe('DELETE /api/admin/user-admin/scim-users', () => {
  it('deletes every SCIM-provisioned person (200, no body) with one scim-users-deleted event; their sessions end', async () => {
    const scim = await createUser('Viewer');
    const cookie = await loginAs(scim.username, scim.password);
    const local = await createUser('Viewer');
    await env.DB.prepare("UPDATE users SET scim_id = 'scim-1' WHERE id = ?").bind(scim.id).run();
    expect((await call('GET', '/api/admin/user', { token: null, headers: { cookie } })).status).toBe(200);

    const response = await call('DELETE', '/api/admin/user-admin/scim-users');
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(await count('SELECT count(*) AS n FROM users WHERE id = ? AND deleted_at IS NOT NULL', scim.id)).toBe(1);
    expect(await count('SELECT count(*) AS n FROM users WHERE id = ? AND deleted_at IS NULL', local.id)).toBe(1);
    const events = await rows<{ type: string; data: string | null }>(
      "SELECT type, data FROM events WHERE type LIKE 'scim-%' OR type = 'user-deleted' ORDER BY id DESC LIMIT 1",
    );
    expect(events).toEqual([{ type: 'scim-users-deleted', data: null }]);
    await expectError(await call('GET', '/api/admin/user', { token: null, headers: { cookie } }), 401, 'AuthenticationRequired');
  });

  it('is for admins only, and is not taken for a user id', async () => {
    const editor = await signInAs('Editor');
    const before = await count('SELECT count(*) AS n FROM events');
    await expectError(await call('DELETE', '/api/admin/user-admin/scim-users', { token: editor }), 403, 'NoAccessError');
    expect(await count('SELECT count(*) AS n FROM events')).toBe(before);
    // With no SCIM person left it still answers 200 (and records the event, as Unleash does).
    expect((await call('DELETE', '/api/admin/user-admin/scim-users')).status).toBe(200);
  });
});
