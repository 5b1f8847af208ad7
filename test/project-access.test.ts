import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { loadUserAccess } from '../src/auth/access';
import { getDb, runBatch } from '../src/db/client';
import * as store from '../src/identity/project-access/store';
import { replaceRolesStatements } from '../src/identity/project-access/service';
import { bodyOf, call, expectError } from './support/http';
import { createProject } from './support/admin';
import { unique } from './support/names';
import { createUser, postUser, signedInUser, withSession } from './support/auth';
import { count } from './support/db';

async function createProjectRole(permissions: { name: string; environment?: string }[]): Promise<number> {
  const response = await call('POST', '/api/admin/roles', {
    body: { name: unique('role'), description: 'test', type: 'custom', permissions },
  });
  expect(response.status).toBe(201);
  return (await bodyOf<{ id: number }>(response)).id;
}

async function roleRows(project: string, userId: number): Promise<number[]> {
  const rows = await env.DB.prepare('SELECT role_id FROM role_user WHERE project = ? AND user_id = ? ORDER BY role_id')
    .bind(project, userId)
    .all<{ role_id: number }>();
  return rows.results.map((row) => row.role_id);
}

describe('user access (role_permission rows placed as Unleash places them)', () => {
  it('gives an Editor project permissions in project default only, and root permissions everywhere', async () => {
    const editor = (await createUser('Editor')).id;
    const project = await createProject();
    const access = await loadUserAccess(env, editor);
    expect(access.may('UPDATE_FEATURE', 'default')).toBe(true);
    expect(access.may('UPDATE_FEATURE', project)).toBe(false);
    expect(access.may('UPDATE_FEATURE_ENVIRONMENT', 'default', 'production')).toBe(true);
    expect(access.may('UPDATE_FEATURE_ENVIRONMENT', 'default')).toBe(false);
    expect(access.may('CREATE_PROJECT')).toBe(true);
    expect(access.may('CREATE_SEGMENT', project)).toBe(true);
    expect(access.may('ADMIN')).toBe(false);
  });

  it('scopes a project role to its project and its environment permissions to their environment', async () => {
    const viewer = (await createUser('Viewer')).id;
    const project = await createProject();
    const role = await createProjectRole([{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }, { name: 'UPDATE_FEATURE' }]);
    expect((await call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [role], users: [viewer] } })).status).toBe(200);
    const access = await loadUserAccess(env, viewer);
    expect(access.may('UPDATE_FEATURE_ENVIRONMENT', project, 'production')).toBe(true);
    expect(access.may('UPDATE_FEATURE_ENVIRONMENT', project, 'development')).toBe(false);
    expect(access.may('UPDATE_FEATURE_ENVIRONMENT', 'default', 'production')).toBe(false);
    expect(access.may('UPDATE_FEATURE', project)).toBe(true);
    expect(access.may('UPDATE_FEATURE', 'default')).toBe(false);
  });
});

describe('GET /api/admin/projects/:projectId/access', () => {
  it('lists the project roles and each user with their roles', async () => {
    const project = await createProject();
    const user = (await createUser('Viewer')).id;
    expect(
      (await call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [4, 5], users: [user], groups: [] } })).status,
    ).toBe(200);
    const response = await call('GET', `/api/admin/projects/${project}/access`);
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['roles', 'groups', 'users']);
    expect(body.roles.map((role: { id: number }) => role.id)).toEqual(expect.arrayContaining([4, 5]));
    expect(body.roles.every((role: { type: string }) => role.type === 'project' || role.type === 'custom')).toBe(true);
    expect(body.groups).toEqual([]);
    const listed = body.users.find((entry: { id: number }) => entry.id === user);
    expect(listed).toMatchObject({ id: user, accountType: 'User', roleId: 4, roles: [4, 5] });
    expect(typeof listed.addedAt).toBe('string');
  });

  it('answers 404 for an unknown project', async () => {
    await expectError(await call('GET', '/api/admin/projects/no-such-project/access'), 404, 'NotFoundError');
  });
});

describe('POST /api/admin/projects/:projectId/access', () => {
  it('refuses a root role or an unknown role with 400 and writes nothing', async () => {
    const project = await createProject();
    const user = (await createUser('Viewer')).id;
    await expectError(
      await call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [1], users: [user] } }),
      400,
      'ValidationError',
    );
    await expectError(
      await call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [4, 999999], users: [user] } }),
      400,
      'ValidationError',
    );
    expect(await roleRows(project, user)).toEqual([]);
  });

  it('refuses an unknown user and groups with 400', async () => {
    const project = await createProject();
    await expectError(
      await call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [4], users: [987654] } }),
      400,
      'ValidationError',
    );
    await expectError(
      await call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [4], groups: [987654] } }),
      400,
      'ValidationError',
    );
  });

  it('records who granted the access', async () => {
    const project = await createProject();
    const user = (await createUser('Viewer')).id;
    await call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [5], users: [user] } });
    const event = await env.DB.prepare(
      "SELECT created_by, created_by_user_id, data FROM events WHERE type = 'project-access-added' AND project = ?",
    )
      .bind(project)
      .first<{ created_by: string; created_by_user_id: number; data: string }>();
    expect(event).toMatchObject({ created_by: 'admin', created_by_user_id: -42 });
    expect(JSON.parse(event!.data)).toEqual({ roles: [{ roleId: 5, groupIds: [], userIds: [user] }] });
  });
});

describe('POST /api/admin/projects/:projectId/role/:roleId/access', () => {
  it('grants one role to the listed users (the older form)', async () => {
    const project = await createProject();
    const user = (await createUser('Viewer')).id;
    expect(
      (await call('POST', `/api/admin/projects/${project}/role/5/access`, { body: { users: [{ id: user }], groups: [] } })).status,
    ).toBe(200);
    expect(await roleRows(project, user)).toEqual([5]);
    await expectError(
      await call('POST', `/api/admin/projects/${project}/role/2/access`, { body: { users: [{ id: user }] } }),
      400,
      'ValidationError',
    );
    expect(await roleRows(project, user)).toEqual([5]);
  });
});

describe('PUT and DELETE /api/admin/projects/:projectId/users/:userId/roles', () => {
  it('replaces the roles of a user, then removes them', async () => {
    const project = await createProject();
    const user = (await createUser('Viewer')).id;
    await call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [4], users: [user] } });
    expect((await call('PUT', `/api/admin/projects/${project}/users/${user}/roles`, { body: { roles: [5] } })).status).toBe(200);
    expect(await roleRows(project, user)).toEqual([5]);
    expect((await call('DELETE', `/api/admin/projects/${project}/users/${user}/roles`)).status).toBe(200);
    expect(await roleRows(project, user)).toEqual([]);
    // The root role (held in project default) is untouched.
    expect(await roleRows('default', user)).toEqual([3]);
  });
});

describe('role assignment is conditional on the role still existing', () => {
  it('writes neither the grant nor its event when the role was deleted after the checks', async () => {
    const project = await createProject();
    const user = (await createUser('Viewer')).id;
    const role = await createProjectRole([{ name: 'UPDATE_FEATURE' }]);
    const db = getDb(env);
    const actor = { actorName: 'test', userId: -42 };
    // The role goes away between the service's checks and its batch.
    expect((await call('DELETE', `/api/admin/roles/${role}`)).status).toBe(200);
    await runBatch(db, [
      store.grantStatement(db, project, role, user, [role], actor),
      store.guardedEvent(db, actor, { type: 'project-access-added', project, data: { roles: [role] } }, [role]),
    ]);
    expect(await roleRows(project, user)).toEqual([]);
    const events = await env.DB.prepare("SELECT COUNT(*) AS n FROM events WHERE type = 'project-access-added' AND project = ?")
      .bind(project)
      .first<{ n: number }>();
    expect(events?.n).toBe(0);
    // With the role present the same statements do write.
    await runBatch(db, [store.grantStatement(db, project, 5, user, [5], actor)]);
    expect(await roleRows(project, user)).toEqual([5]);
  });
});

describe("replacing a person's or a group's project roles: one guard for both", () => {
  async function groupRoleRows(project: string, groupId: number): Promise<number[]> {
    const rows = await env.DB.prepare('SELECT role_id FROM group_role WHERE project = ? AND group_id = ? ORDER BY role_id')
      .bind(project, groupId)
      .all<{ role_id: number }>();
    return rows.results.map((row) => row.role_id);
  }

  const holders = [
    {
      kind: 'user' as const,
      create: async () => (await createUser('Viewer')).id,
      rows: roleRows,
    },
    {
      kind: 'group' as const,
      create: async () =>
        (await bodyOf<{ id: number }>(await call('POST', '/api/admin/groups', { body: { name: unique('pa-group') } }))).id,
      rows: groupRoleRows,
    },
  ];

  for (const holder of holders) {
    it(`a ${holder.kind}: a role deleted after the checks leaves the old roles, grants nothing and records nothing`, async () => {
      const project = await createProject();
      const id = await holder.create();
      expect((await call('PUT', `/api/admin/projects/${project}/${holder.kind}s/${id}/roles`, { body: { roles: [4] } })).status).toBe(200);
      const role = await createProjectRole([{ name: 'UPDATE_FEATURE' }]);
      const db = getDb(env);
      const actor = { kind: 'user', actorName: 'test', userId: -42 } as never;
      // The statements the PUT runs, built after its checks; the role goes away before they run.
      const statements = replaceRolesStatements(db, actor, holder.kind, project, id, [5, role], [4]);
      expect((await call('DELETE', `/api/admin/roles/${role}`)).status).toBe(200);
      const events = () =>
        count('SELECT count(*) AS n FROM events WHERE type = ? AND project = ?', `project-access-${holder.kind}-roles-updated`, project);
      const recorded = await events();
      await runBatch(db, statements);
      expect(await holder.rows(project, id)).toEqual([4]);
      expect(await events()).toBe(recorded);
    });

    it(`a ${holder.kind}: refuses roles the caller could not grant (403) and changes nothing`, async () => {
      const project = await createProject();
      const id = await holder.create();
      expect((await call('PUT', `/api/admin/projects/${project}/${holder.kind}s/${id}/roles`, { body: { roles: [5] } })).status).toBe(200);
      // Someone who may manage the project's access but holds none of the Owner's other permissions.
      const manager = await signedInUser('Viewer');
      const managing = await createProjectRole([{ name: 'PROJECT_USER_ACCESS_WRITE' }]);
      const grant = { body: { roles: [managing] } };
      expect((await call('PUT', `/api/admin/projects/${project}/users/${manager.id}/roles`, grant)).status).toBe(200);
      const refused = await call(
        'PUT',
        `/api/admin/projects/${project}/${holder.kind}s/${id}/roles`,
        withSession(manager.cookie, { body: { roles: [4] } }),
      );
      const error = await expectError(refused, 403, 'NoAccessError');
      expect(error.message).toBe('User tried to assign a role they did not have access to');
      expect(await holder.rows(project, id)).toEqual([5]);
    });
  }
});

describe('POST /api/admin/projects', () => {
  it('does not make an admin API token an owner (it is nobody)', async () => {
    const project = await createProject();
    const owners = await env.DB.prepare('SELECT COUNT(*) AS n FROM role_user WHERE project = ?').bind(project).first<{ n: number }>();
    expect(owners?.n).toBe(0);
  });
});

describe('GET /api/admin/user-admin/:id/permissions', () => {
  it('answers the access overview of a user in a project and environment', async () => {
    const project = await createProject();
    const user = (await createUser('Viewer')).id;
    const role = await createProjectRole([{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }]);
    await call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [role], users: [user] } });
    const response = await call('GET', `/api/admin/user-admin/${user}/permissions?project=${project}&environment=production`);
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['overview', 'user', 'rootRole', 'projectRoles']);
    expect(Object.keys(body.overview)).toEqual(['root', 'project', 'environment']);
    expect(body.overview.root[0]).toEqual({ id: 1, name: 'ADMIN', displayName: 'Admin', type: 'root', hasPermission: false });
    const toggle = body.overview.environment.find((entry: { name: string }) => entry.name === 'UPDATE_FEATURE_ENVIRONMENT');
    expect(toggle).toEqual({
      environment: 'production',
      id: 28,
      name: 'UPDATE_FEATURE_ENVIRONMENT',
      displayName: 'Enable/disable flags',
      type: 'environment',
      hasPermission: true,
    });
    expect(body.overview.project.find((entry: { name: string }) => entry.name === 'UPDATE_FEATURE').hasPermission).toBe(false);
    expect(body.user).toMatchObject({ id: user, rootRole: 3 });
    expect(body.rootRole).toEqual({ id: 3, name: 'Viewer', type: 'root', description: expect.any(String) });
    expect(body.projectRoles.map((entry: { id: number }) => entry.id)).toEqual([role]);
    expect(body.projectRoles[0].permissions).toEqual([
      expect.objectContaining({ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }),
    ]);
  });

  it("counts a group's project role in hasPermission but lists only the person's own roles in projectRoles, as Unleash", async () => {
    // Unleash 6.10.1 and 8.2.0: getAccessOverviewForUser reads getPermissionsForUser (own and
    // group roles), while projectRoles comes from getProjectRolesForUser (role_user only).
    const project = await createProject();
    const user = (await createUser('Viewer')).id;
    const own = await createProjectRole([{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }]);
    const viaGroup = await createProjectRole([{ name: 'CREATE_FEATURE' }]);
    const group = await bodyOf(
      await call('POST', '/api/admin/groups', { body: { name: unique('overview'), users: [{ user: { id: user } }] } }),
    );
    expect((await call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [own], users: [user] } })).status).toBe(200);
    expect((await call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [viaGroup], groups: [group.id] } })).status).toBe(
      200,
    );
    const body = await bodyOf(await call('GET', `/api/admin/user-admin/${user}/permissions?project=${project}`));
    expect(body.overview.project.find((entry: { name: string }) => entry.name === 'CREATE_FEATURE').hasPermission).toBe(true);
    expect(body.projectRoles.map((entry: { id: number }) => entry.id)).toEqual([own]);
  });

  it('has an empty environment list without an environment', async () => {
    const body = await bodyOf(await call('GET', '/api/admin/user-admin/1/permissions'));
    expect(body.overview.environment).toEqual([]);
    expect(body.overview.root[0].hasPermission).toBe(true); // user 1 is the seeded admin
  });
});

describe('GET /api/admin/user-admin/access', () => {
  it('lists the people who can be given access, and the groups', async () => {
    const { id: user } = await postUser({ email: `${unique('u')}@example.com`, rootRole: 'Viewer' });
    const body = await bodyOf(await call('GET', '/api/admin/user-admin/access'));
    expect(Object.keys(body)).toEqual(['users', 'groups']);
    expect(Array.isArray(body.groups)).toBe(true);
    const listed = body.users.find((entry: { id: number }) => entry.id === user);
    expect(Object.keys(listed)).toEqual(['id', 'email', 'accountType']);
    expect(listed.accountType).toBe('User');
  });
});
