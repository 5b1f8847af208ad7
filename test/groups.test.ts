/**
 * Groups (`/api/admin/groups`), groups in project access, and a member's rights: the union of
 * their own roles and their groups', gained and lost on their next request.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { getDb } from '../src/db/client';
import { changeMemberships, groupsOfUser } from '../src/db/groups';
import { bodyOf, call, expectError } from './support/http';
import { createProject } from './support/admin';
import { unique } from './support/names';
import { createUser, signedInUser, withSession } from './support/auth';
import { count, lastEvent, parsedEvent } from './support/db';

const groupCount = () => count('SELECT count(*) AS n FROM groups');
const memberCount = () => count('SELECT count(*) AS n FROM group_user');

async function createGroup(body: Record<string, unknown>): Promise<any> {
  const response = await call('POST', '/api/admin/groups', { body });
  expect(response.status).toBe(201);
  return bodyOf(response);
}

describe('POST /api/admin/groups', () => {
  it('creates a group with members, answers groupSchema and records group-created', async () => {
    const a = await createUser();
    const b = await createUser();
    const name = unique('groups-dx');
    const response = await call('POST', '/api/admin/groups', {
      body: { name, description: 'DX', mappingsSSO: ['dx-team'], users: [{ user: { id: a.id } }, { user: { id: b.id } }], rootRole: 2 },
    });
    expect(response.status).toBe(201);
    const group = await bodyOf(response);
    expect(response.headers.get('location')).toBe(`/api/admin/groups/${group.id}`);
    expect(Object.keys(group)).toEqual(['id', 'name', 'description', 'mappingsSSO', 'rootRole', 'createdBy', 'createdAt', 'scimId']);
    expect(group).toMatchObject({ name, description: 'DX', mappingsSSO: ['dx-team'], rootRole: 2, scimId: null });
    expect(parsedEvent(await lastEvent('group-created'))).toMatchObject({
      data: { name, description: 'DX', mappingsSSO: ['dx-team'], rootRole: 2, users: [a.id, b.id] },
    });
    const got = await bodyOf(await call('GET', `/api/admin/groups/${group.id}`));
    expect(got.userCount).toBe(2);
    expect(got.users.map((entry: any) => entry.user.id).sort()).toEqual([a.id, b.id].sort());
    expect(Object.keys(got.users[0])).toEqual(['user', 'joinedAt', 'createdBy']);
  });

  it('refuses an empty name, a taken name, an unknown root role or member, and a non-admin; writes nothing', async () => {
    const name = unique('groups-taken');
    await createGroup({ name });
    const before = [await groupCount(), await memberCount(), await count("SELECT count(*) AS n FROM events WHERE type = 'group-created'")];
    const empty = await expectError(await call('POST', '/api/admin/groups', { body: { name: ' ' } }), 400, 'BadDataError');
    expect(empty.details[0]!.message).toBe('Group name cannot be empty');
    const taken = await expectError(await call('POST', '/api/admin/groups', { body: { name } }), 409, 'NameExistsError');
    expect(taken.message).toBe('Group name already exists');
    await expectError(await call('POST', '/api/admin/groups', { body: { name: unique('g'), rootRole: 5 } }), 400, 'ValidationError');
    await expectError(
      await call('POST', '/api/admin/groups', { body: { name: unique('g'), users: [{ user: { id: 987654 } }] } }),
      400,
      'ValidationError',
    );
    await expectError(
      await call('POST', '/api/admin/groups', { body: { name: unique('g'), users: [{ user: {} }] } }),
      400,
      'ValidationError',
    );
    const editor = await signedInUser('Editor');
    await expectError(
      await call('POST', '/api/admin/groups', withSession(editor.cookie, { body: { name: unique('g') } })),
      403,
      'NoAccessError',
    );
    expect([await groupCount(), await memberCount(), await count("SELECT count(*) AS n FROM events WHERE type = 'group-created'")]).toEqual(
      before,
    );
  });
});

describe('GET /api/admin/groups', () => {
  it('lists groups with members, counts and projects', async () => {
    const member = await createUser();
    const project = await createProject();
    const group = await createGroup({ name: unique('groups-list'), users: [{ user: { id: member.id } }] });
    expect((await call('PUT', `/api/admin/projects/${project}/groups/${group.id}/roles`, { body: { roles: [5] } })).status).toBe(200);
    const response = await call('GET', '/api/admin/groups');
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    const listed = body.groups.find((entry: any) => entry.id === group.id);
    expect(listed).toMatchObject({ userCount: 1, projects: [project] });
    expect(listed.users[0].user.id).toBe(member.id);
  });

  it('answers 404 for an unknown group and 400 for a bad id', async () => {
    const missing = await expectError(await call('GET', '/api/admin/groups/987654'), 404, 'NotFoundError');
    expect(missing.message).toBe('Could not find group with id 987654');
    await expectError(await call('GET', '/api/admin/groups/abc'), 400, 'ValidationError');
  });
});

describe('PUT and DELETE /api/admin/groups/:id', () => {
  it('updates the name and members and records group-updated with before and after', async () => {
    const a = await createUser();
    const b = await createUser();
    const group = await createGroup({ name: unique('groups-up'), users: [{ user: { id: a.id } }] });
    const name = unique('groups-renamed');
    const response = await call('PUT', `/api/admin/groups/${group.id}`, { body: { name, users: [{ user: { id: b.id } }] } });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toMatchObject({ id: group.id, name });
    const event = parsedEvent(await lastEvent('group-updated'));
    expect(event).toMatchObject({
      data: { id: group.id, name, users: [b.id] },
      preData: { id: group.id, name: group.name, users: [a.id] },
    });
    const got = await bodyOf(await call('GET', `/api/admin/groups/${group.id}`));
    expect(got.users.map((entry: any) => entry.user.id)).toEqual([b.id]);
  });

  it('refuses a taken name and an unknown group, writing nothing', async () => {
    const other = await createGroup({ name: unique('groups-other') });
    const group = await createGroup({ name: unique('groups-mine') });
    await expectError(await call('PUT', `/api/admin/groups/${group.id}`, { body: { name: other.name } }), 409, 'NameExistsError');
    await expectError(await call('PUT', '/api/admin/groups/987654', { body: { name: unique('g') } }), 404, 'NotFoundError');
    expect((await bodyOf(await call('GET', `/api/admin/groups/${group.id}`))).name).toBe(group.name);
  });

  it('deletes a group, records group-deleted with its members, and then answers 404', async () => {
    const a = await createUser();
    const group = await createGroup({ name: unique('groups-del'), users: [{ user: { id: a.id } }] });
    const editor = await signedInUser('Editor');
    await expectError(await call('DELETE', `/api/admin/groups/${group.id}`, withSession(editor.cookie)), 403, 'NoAccessError');
    expect((await call('DELETE', `/api/admin/groups/${group.id}`)).status).toBe(200);
    expect(parsedEvent(await lastEvent('group-deleted'))).toMatchObject({ preData: { id: group.id, name: group.name, users: [a.id] } });
    expect(await count('SELECT count(*) AS n FROM group_user WHERE group_id = ?', group.id)).toBe(0);
    await expectError(await call('DELETE', `/api/admin/groups/${group.id}`), 404, 'NotFoundError');
  });
});

describe('groups in project access', () => {
  it('gives a group project roles, lists it in the project access, and removes it, with events', async () => {
    const project = await createProject();
    const member = await createUser();
    const group = await createGroup({ name: unique('groups-acc'), users: [{ user: { id: member.id } }] });
    expect((await call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [5], groups: [group.id] } })).status).toBe(200);
    expect(parsedEvent(await lastEvent('project-access-added'))).toMatchObject({
      data: { roles: [{ roleId: 5, groupIds: [group.id], userIds: [] }] },
    });
    expect((await call('PUT', `/api/admin/projects/${project}/groups/${group.id}/roles`, { body: { roles: [4, 5] } })).status).toBe(200);
    expect(parsedEvent(await lastEvent('project-access-group-roles-updated'))).toMatchObject({
      data: { roles: [4, 5], groupId: group.id },
      preData: { roles: [5], groupId: group.id },
    });
    const access = await bodyOf(await call('GET', `/api/admin/projects/${project}/access`));
    expect(access.groups).toHaveLength(1);
    expect(access.groups[0]).toMatchObject({ id: group.id, name: group.name, roles: [4, 5], userCount: 1 });
    const picker = await bodyOf(await call('GET', '/api/admin/user-admin/access'));
    expect(picker.groups.find((entry: any) => entry.id === group.id)).toEqual({
      id: group.id,
      name: group.name,
      userCount: 1,
      rootRole: null,
    });
    expect((await call('DELETE', `/api/admin/projects/${project}/groups/${group.id}/roles`)).status).toBe(200);
    expect(parsedEvent(await lastEvent('project-access-group-roles-deleted'))).toMatchObject({
      preData: { roles: [4, 5], groupId: group.id },
    });
    expect((await bodyOf(await call('GET', `/api/admin/projects/${project}/access`))).groups).toEqual([]);
  });

  it('refuses an unknown group or role, and a caller without access, writing nothing', async () => {
    const project = await createProject();
    const group = await createGroup({ name: unique('groups-ref') });
    await expectError(
      await call('PUT', `/api/admin/projects/${project}/groups/987654/roles`, { body: { roles: [5] } }),
      400,
      'ValidationError',
    );
    await expectError(
      await call('PUT', `/api/admin/projects/${project}/groups/${group.id}/roles`, { body: { roles: [1] } }),
      400,
      'ValidationError',
    );
    const viewer = await signedInUser('Viewer');
    await expectError(
      await call('PUT', `/api/admin/projects/${project}/groups/${group.id}/roles`, withSession(viewer.cookie, { body: { roles: [5] } })),
      403,
      'NoAccessError',
    );
    expect(await count('SELECT count(*) AS n FROM group_role WHERE group_id = ?', group.id)).toBe(0);
  });
});

describe("a member's rights through their groups", () => {
  it('lets a Viewer create flags in a project through a group, and not on the request after their removal', async () => {
    const project = await createProject();
    const viewer = await signedInUser('Viewer');
    const createFlag = () =>
      call('POST', `/api/admin/projects/${project}/features`, withSession(viewer.cookie, { body: { name: unique('groups-flag') } }));
    await expectError(await createFlag(), 403, 'NoAccessError');
    const group = await createGroup({ name: unique('groups-rights'), users: [{ user: { id: viewer.id } }] });
    expect((await call('PUT', `/api/admin/projects/${project}/groups/${group.id}/roles`, { body: { roles: [5] } })).status).toBe(200);
    expect((await createFlag()).status).toBe(201);
    const me = await bodyOf(await call('GET', '/api/admin/user', withSession(viewer.cookie)));
    expect(me.permissions).toContainEqual(expect.objectContaining({ permission: 'CREATE_FEATURE', project }));
    expect((await call('PUT', `/api/admin/groups/${group.id}`, { body: { name: group.name, users: [] } })).status).toBe(200);
    await expectError(await createFlag(), 403, 'NoAccessError');
  });

  it("gives members the group's root role, and takes it away when the group is deleted", async () => {
    const viewer = await signedInUser('Viewer');
    const createProjectAs = () =>
      call('POST', '/api/admin/projects', withSession(viewer.cookie, { body: { id: unique('gp'), name: 'groups project' } }));
    await expectError(await createProjectAs(), 403, 'NoAccessError');
    const group = await createGroup({ name: unique('groups-root'), rootRole: 2, users: [{ user: { id: viewer.id } }] });
    expect((await createProjectAs()).status).toBe(201);
    expect((await call('DELETE', `/api/admin/groups/${group.id}`)).status).toBe(200);
    await expectError(await createProjectAs(), 403, 'NoAccessError');
  });
});

describe('the membership read-model (src/db/groups.ts) that SSO sync and SCIM share', () => {
  it("adds and removes members with their events, skips no-op changes, and lists a person's groups", async () => {
    const person = await createUser();
    const group = await createGroup({ name: unique('groups-model') });
    const db = getDb(env);
    const actor = { actorName: 'groups-test', userId: 1 };
    const first = await changeMemberships(db, actor, { add: [{ groupId: group.id, userId: person.id }] });
    expect(first.added).toEqual([{ groupId: group.id, userId: person.id }]);
    expect(parsedEvent(await lastEvent('group-user-added'))).toMatchObject({
      createdBy: 'groups-test',
      data: { groupId: group.id, userId: person.id },
    });
    expect((await changeMemberships(db, actor, { add: [{ groupId: group.id, userId: person.id }] })).added).toEqual([]);
    expect((await groupsOfUser(db, person.id)).map((g) => g.name)).toEqual([group.name]);
    const gone = await changeMemberships(db, actor, { remove: [{ groupId: group.id, userId: person.id }] });
    expect(gone.removed).toHaveLength(1);
    expect(parsedEvent(await lastEvent('group-user-removed'))).toMatchObject({ preData: { groupId: group.id, userId: person.id } });
    expect(await groupsOfUser(db, person.id)).toEqual([]);
  });
});

describe('what SDKs see of groups', () => {
  it('moves no SDK revision: group and membership events change no flag an SDK is answered', async () => {
    const changes = () => count('SELECT count(*) AS n FROM sdk_changes');
    const person = await createUser();
    const before = await changes();
    const group = await createGroup({ name: unique('groups-sdk'), users: [{ user: { id: person.id } }] });
    const renamed = await call('PUT', `/api/admin/groups/${group.id}`, { body: { name: unique('groups-sdk'), users: [] } });
    expect(renamed.status).toBe(200);
    expect((await call('DELETE', `/api/admin/groups/${group.id}`)).status).toBe(200);
    expect(
      await count(
        "SELECT count(*) AS n FROM events WHERE type LIKE 'group-%' AND id > (SELECT coalesce(max(event_id), 0) FROM sdk_changes)",
      ),
    ).toBeGreaterThan(0);
    expect(await changes()).toBe(before);
  });
});
