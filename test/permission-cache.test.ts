/**
 * A person's grants and their `GET /api/admin/user` permission list are kept per isolate
 * (src/auth/user-principal.ts, src/identity/users/service.ts): each write that changes
 * someone's rights must reach their very next request, both the checks and the listed
 * permissions. Every case first reads the list (so that it is kept), then writes through one
 * path, then checks the next request.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, expectError, type CallOptions } from './support/http';
import { createProject } from './support/admin';
import { unique } from './support/names';
import { createPersonalToken, createUser, loginAs, signedInUser, withSession } from './support/auth';
import { enableScim, oktaUser, PATCH_OP, scim, SCIM_GROUP } from './support/scim';

const MEMBER = 5;

interface Person {
  id: number;
  as: (options?: CallOptions) => CallOptions;
}

async function person(rootRole: number | string = 'Viewer'): Promise<Person> {
  const user = await signedInUser(rootRole);
  return { id: user.id, as: (options = {}) => withSession(user.cookie, options) };
}

type Listed = { permission: string; project?: string; environment?: string };

async function listed(who: Person): Promise<Listed[]> {
  const response = await call('GET', '/api/admin/user', who.as());
  expect(response.status).toBe(200);
  return (await bodyOf<{ permissions: Listed[] }>(response)).permissions;
}

const createFlag = (who: Person, project: string) =>
  call('POST', `/api/admin/projects/${project}/features`, who.as({ body: { name: unique('pc-flag') } }));

/** The person may create flags in the project, and their list says so (and is now kept). */
async function expectMayCreateFlags(who: Person, project: string) {
  expect(await listed(who)).toContainEqual({ permission: 'CREATE_FEATURE', project });
  expect((await createFlag(who, project)).status).toBe(201);
  expect(await listed(who)).toContainEqual({ permission: 'CREATE_FEATURE', project });
}

async function expectMayNotCreateFlags(who: Person, project: string) {
  expect(await listed(who)).not.toContainEqual({ permission: 'CREATE_FEATURE', project });
  await expectError(await createFlag(who, project), 403, 'NoAccessError');
}

async function ok(method: string, path: string, body?: unknown, status = 200): Promise<any> {
  const response = await call(method, path, body === undefined ? {} : { body });
  expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBe(status);
  return response.headers.get('content-type')?.includes('json') ? bodyOf(response) : undefined;
}

async function groupOf(who: Person, extra: Record<string, unknown> = {}): Promise<{ id: number; name: string }> {
  return ok('POST', '/api/admin/groups', { name: unique('pc-group'), users: [{ user: { id: who.id } }], ...extra }, 201);
}

describe("a person's own roles", () => {
  it('a root role change reaches the check and the list on the next request', async () => {
    const editor = await person('Editor');
    expect(await listed(editor)).toContainEqual({ permission: 'CREATE_PROJECT' });
    await ok('PUT', `/api/admin/user-admin/${editor.id}`, { rootRole: 3 });
    expect(await listed(editor)).not.toContainEqual({ permission: 'CREATE_PROJECT' });
    await expectError(
      await call('POST', '/api/admin/projects', editor.as({ body: { id: unique('pc'), name: 'pc' } })),
      403,
      'NoAccessError',
    );
  });

  it('access given with POST /projects/:p/access is gained on the next request', async () => {
    const project = await createProject();
    const viewer = await person();
    await expectMayNotCreateFlags(viewer, project);
    await ok('POST', `/api/admin/projects/${project}/access`, { roles: [MEMBER], users: [viewer.id], groups: [] });
    await expectMayCreateFlags(viewer, project);
  });

  it('project roles replaced with PUT and removed with DELETE /projects/:p/users/:id/roles', async () => {
    const project = await createProject();
    const viewer = await person();
    await ok('PUT', `/api/admin/projects/${project}/users/${viewer.id}/roles`, { roles: [MEMBER] });
    await expectMayCreateFlags(viewer, project);
    await ok('DELETE', `/api/admin/projects/${project}/users/${viewer.id}/roles`);
    await expectMayNotCreateFlags(viewer, project);
  });

  it("a role's permissions edited: every holder's next request follows", async () => {
    const project = await createProject();
    const viewer = await person();
    const role = await ok(
      'POST',
      '/api/admin/roles',
      { name: unique('pc-role'), description: 'pc', type: 'custom', permissions: [{ name: 'CREATE_FEATURE' }] },
      201,
    );
    await ok('PUT', `/api/admin/projects/${project}/users/${viewer.id}/roles`, { roles: [role.id] });
    await expectMayCreateFlags(viewer, project);
    await ok('PUT', `/api/admin/roles/${role.id}`, {
      name: role.name,
      description: 'pc',
      type: 'custom',
      permissions: [{ name: 'UPDATE_FEATURE' }],
    });
    await expectMayNotCreateFlags(viewer, project);
    expect(await listed(viewer)).toContainEqual({ permission: 'UPDATE_FEATURE', project });
  });
});

describe("a person's groups", () => {
  it("a group's project role set and removed with PUT and DELETE /projects/:p/groups/:id/roles", async () => {
    const project = await createProject();
    const viewer = await person();
    const group = await groupOf(viewer);
    await ok('PUT', `/api/admin/projects/${project}/groups/${group.id}/roles`, { roles: [MEMBER] });
    await expectMayCreateFlags(viewer, project);
    await ok('DELETE', `/api/admin/projects/${project}/groups/${group.id}/roles`);
    await expectMayNotCreateFlags(viewer, project);
  });

  it('leaving a group (PUT /api/admin/groups/:id without them)', async () => {
    const project = await createProject();
    const viewer = await person();
    const group = await groupOf(viewer);
    await ok('POST', `/api/admin/projects/${project}/access`, { roles: [MEMBER], users: [], groups: [group.id] });
    await expectMayCreateFlags(viewer, project);
    await ok('PUT', `/api/admin/groups/${group.id}`, { name: group.name, users: [] });
    await expectMayNotCreateFlags(viewer, project);
  });

  it("a group's root role taken away, and a group deleted", async () => {
    const viewer = await person();
    const withRoot = await groupOf(viewer, { rootRole: 2 });
    expect(await listed(viewer)).toContainEqual({ permission: 'CREATE_PROJECT' });
    await ok('PUT', `/api/admin/groups/${withRoot.id}`, { name: withRoot.name, rootRole: null, users: [{ user: { id: viewer.id } }] });
    expect(await listed(viewer)).not.toContainEqual({ permission: 'CREATE_PROJECT' });

    const project = await createProject();
    const other = await groupOf(viewer);
    await ok('PUT', `/api/admin/projects/${project}/groups/${other.id}/roles`, { roles: [MEMBER] });
    await expectMayCreateFlags(viewer, project);
    await ok('DELETE', `/api/admin/groups/${other.id}`);
    await expectMayNotCreateFlags(viewer, project);
  });
});

describe('the directory (SCIM)', () => {
  let token: string;
  beforeAll(async () => {
    token = await enableScim();
  });

  /** A person the directory took over (so that they hold a personal token to call with). */
  async function provisioned(): Promise<{ who: Person; scimId: string }> {
    const email = `${unique('pc-scim')}@example.com`;
    const user = await createUser('Viewer', { email });
    const pat = await createPersonalToken(await loginAs(email, user.password));
    await ok('POST', '/api/admin/scim-settings', { enabled: true, assumeControlOfExisting: true });
    const taken = await bodyOf<{ id: string }>(await scim(token, 'POST', '/Users', oktaUser(email)));
    await ok('POST', '/api/admin/scim-settings', { enabled: true, assumeControlOfExisting: false });
    return { who: { id: user.id, as: (options = {}) => ({ ...options, token: pat }) }, scimId: taken.id };
  }

  async function group(members: string[]): Promise<{ scimId: string; id: number }> {
    const created = await bodyOf<{ id: string }>(
      await scim(token, 'POST', '/Groups', {
        schemas: [SCIM_GROUP],
        displayName: unique('pc-dir'),
        members: members.map((value) => ({ value })),
      }),
    );
    const groups = await bodyOf<{ groups: { id: number; scimId?: string | null; name: string }[] }>(await call('GET', '/api/admin/groups'));
    return { scimId: created.id, id: groups.groups.find((g) => g.scimId === created.id)!.id };
  }

  it('a member removed by PATCH, and a group deleted by DELETE /scim/v2/Groups/:id', async () => {
    const project = await createProject();
    const { who, scimId } = await provisioned();
    const first = await group([scimId]);
    await ok('PUT', `/api/admin/projects/${project}/groups/${first.id}/roles`, { roles: [MEMBER] });
    await expectMayCreateFlags(who, project);
    const patched = await scim(token, 'PATCH', `/Groups/${first.scimId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Remove', path: 'members', value: [{ value: scimId }] }],
    });
    expect([200, 204]).toContain(patched.status);
    await expectMayNotCreateFlags(who, project);

    const second = await group([scimId]);
    await ok('PUT', `/api/admin/projects/${project}/groups/${second.id}/roles`, { roles: [MEMBER] });
    await expectMayCreateFlags(who, project);
    expect((await scim(token, 'DELETE', `/Groups/${second.scimId}`)).status).toBe(204);
    await expectMayNotCreateFlags(who, project);
  });
});
