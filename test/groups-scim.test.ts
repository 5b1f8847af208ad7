/**
 * The groups API and SCIM: while SCIM is on, a provisioned group's name, members and SSO
 * mappings are the directory's (its role and description stay the admins'), and
 * `DELETE /api/admin/groups/scim-groups` removes every provisioned group at once.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { count, lastEvent, rows } from './support/db';
import { bodyOf, call, expectError } from './support/http';
import { unique } from './support/names';
import { enableScim, oktaUser, scim, SCIM_GROUP } from './support/scim';
import { signInAs } from './support/users';

const SCIM_MANAGED = 'This group is managed by your SCIM provider, only the role and description can be changed manually';

let token: string;
beforeAll(async () => {
  token = await enableScim();
});

/** A group the directory provisioned with one member; its id in the groups API, and its member's. */
async function provisionedGroup(): Promise<{ id: number; userId: number; name: string }> {
  const user = await bodyOf(await scim(token, 'POST', '/Users', oktaUser(`${unique('gs')}@example.com`)));
  const name = unique('Directory');
  const group = await bodyOf(
    await scim(token, 'POST', '/Groups', { schemas: [SCIM_GROUP], displayName: name, members: [{ value: user.id }] }),
  );
  const [row] = await rows<{ id: number; userId: number }>(
    'SELECT g.id, gu.user_id AS userId FROM groups g JOIN group_user gu ON gu.group_id = g.id WHERE g.scim_id = ?',
    group.id,
  );
  return { ...row!, name };
}

const snapshot = (id: number) =>
  rows(
    'SELECT name, description, mappings_sso AS m, root_role_id AS r FROM groups WHERE id = ? UNION ALL SELECT user_id, 0, 0, 0 FROM group_user WHERE group_id = ?',
    id,
    id,
  );

describe('PUT /api/admin/groups/:id of a SCIM group', () => {
  it("refuses a rename, other members or SSO mappings with Unleash's 403; writes nothing", async () => {
    const group = await provisionedGroup();
    const before = [await snapshot(group.id), await count("SELECT count(*) AS n FROM events WHERE type = 'group-updated'")];
    const same = { name: group.name, users: [{ user: { id: group.userId } }], mappingsSSO: [] };
    for (const body of [
      { ...same, name: 'By hand' },
      { ...same, users: [] },
      { ...same, mappingsSSO: ['okta-admins'] },
    ]) {
      const error = await expectError(await call('PUT', `/api/admin/groups/${group.id}`, { body }), 403, 'ForbiddenError');
      expect(error.message).toBe(SCIM_MANAGED);
    }
    expect([await snapshot(group.id), await count("SELECT count(*) AS n FROM events WHERE type = 'group-updated'")]).toEqual(before);
  });

  it('still changes its root role and description (what the UI sends: the whole group, unchanged otherwise)', async () => {
    const group = await provisionedGroup();
    const body = { name: group.name, description: 'Set by hand', rootRole: 3, users: [{ user: { id: group.userId } }], mappingsSSO: [] };
    const response = await call('PUT', `/api/admin/groups/${group.id}`, { body });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toMatchObject({ name: group.name, description: 'Set by hand', rootRole: 3 });
    expect((await lastEvent('group-updated'))?.data).toContain('Set by hand');
  });

  it('lets admins rename it once SCIM is off, and never guards a hand-made group', async () => {
    const group = await provisionedGroup();
    const own = await bodyOf(await call('POST', '/api/admin/groups', { body: { name: unique('hand') } }));
    expect((await call('PUT', `/api/admin/groups/${own.id}`, { body: { name: unique('hand-renamed') } })).status).toBe(200);
    await call('POST', '/api/admin/scim-settings', { body: { enabled: false } });
    try {
      const renamed = unique('renamed');
      const response = await call('PUT', `/api/admin/groups/${group.id}`, { body: { name: renamed, users: [] } });
      expect(response.status).toBe(200);
      expect(await count('SELECT count(*) AS n FROM group_user WHERE group_id = ?', group.id)).toBe(0);
    } finally {
      await call('POST', '/api/admin/scim-settings', { body: { enabled: true } });
    }
  });
});

describe('DELETE /api/admin/groups/scim-groups', () => {
  it('deletes every SCIM group with its members and project roles, keeps hand-made ones; one scim-groups-deleted event', async () => {
    const group = await provisionedGroup();
    const own = await bodyOf(
      await call('POST', '/api/admin/groups', { body: { name: unique('kept'), users: [{ user: { id: group.userId } }] } }),
    );
    expect((await call('POST', '/api/admin/projects/default/access', { body: { roles: [4], groups: [group.id] } })).status).toBe(200);
    expect(await count('SELECT count(*) AS n FROM group_role WHERE group_id = ?', group.id)).toBe(1);
    const response = await call('DELETE', '/api/admin/groups/scim-groups');
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(await count('SELECT count(*) AS n FROM groups WHERE scim_id IS NOT NULL')).toBe(0);
    expect(await count('SELECT count(*) AS n FROM group_user WHERE group_id = ?', group.id)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM group_role WHERE group_id = ?', group.id)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM group_user WHERE group_id = ?', own.id)).toBe(1);
    const events = await rows<{ type: string; data: string | null }>(
      "SELECT type, data FROM events WHERE type LIKE 'scim-%' OR type = 'group-deleted' ORDER BY id DESC LIMIT 1",
    );
    expect(events).toEqual([{ type: 'scim-groups-deleted', data: null }]);
  });

  it('is for admins only (nothing written), and is not taken for a group id', async () => {
    const group = await provisionedGroup();
    const editor = await signInAs('Editor');
    const before = [await count('SELECT count(*) AS n FROM events'), await count('SELECT count(*) AS n FROM groups')];
    await expectError(await call('DELETE', '/api/admin/groups/scim-groups', { token: editor }), 403, 'NoAccessError');
    expect([await count('SELECT count(*) AS n FROM events'), await count('SELECT count(*) AS n FROM groups')]).toEqual(before);
    expect(await count('SELECT count(*) AS n FROM groups WHERE id = ?', group.id)).toBe(1);
  });
});
