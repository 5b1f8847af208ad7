import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError } from './support/http';
import { count } from './support/db';

async function storedRows(): Promise<number> {
  return (
    (await count('SELECT count(*) AS n FROM roles')) +
    (await count('SELECT count(*) AS n FROM role_permission')) +
    (await count('SELECT count(*) AS n FROM events'))
  );
}

async function validate(body: unknown) {
  return call('POST', '/api/admin/roles/validate', { body });
}

async function createRole(body: Record<string, unknown>) {
  const response = await call('POST', '/api/admin/roles', { body });
  if (response.status !== 201) throw new Error(`role creation failed: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

describe('POST /api/admin/roles/validate', () => {
  it('answers 200 with an empty body for a valid definition of either variant, and stores nothing', async () => {
    const before = await storedRows();
    const valid = [
      {
        name: 'Release managers',
        description: 'Ship things',
        type: 'custom',
        permissions: [{ name: 'UPDATE_FEATURE' }, { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }],
      },
      { name: 'Auditors', type: 'root-custom', permissions: [{ name: 'READ_ROLE' }, { name: 'CREATE_SEGMENT', environment: '' }] },
      {
        name: 'By id',
        type: 'custom',
        permissions: [{ id: 7 }, { id: 28, environment: 'development' }, { id: 2, name: 'CREATE_FEATURE' }],
      },
      { name: 'Bare' },
      { name: 'Null lists', description: null, permissions: null },
      { name: 'Empty list', permissions: [] },
    ];
    for (const body of valid) {
      const response = await validate(body);
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(await response.text()).toBe('');
    }
    expect(await storedRows()).toBe(before);
  });

  it('reports a name taken by any role, built-in or custom, after trimming', async () => {
    await createRole({ name: 'Existing custom', type: 'custom' });
    for (const name of ['Admin', 'Editor', 'Viewer', 'Owner', 'Member', '  Editor ', 'Existing custom']) {
      const error = await expectError(await validate({ name }), 400, 'ValidationError');
      expect(error.details).toEqual([{ path: '/body/name', message: `There already exists a role with the name ${name.trim()}` }]);
    }
    // Names are compared exactly: another case is another name.
    expect((await validate({ name: 'editor' })).status).toBe(200);
  });

  it('reports every problem at once, each at its field', async () => {
    const before = await storedRows();
    const response = await validate({
      name: 'Viewer',
      type: 'custom',
      permissions: [
        { name: 'NO_SUCH_PERMISSION' },
        { id: 9999 },
        { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'staging' },
        { name: 'UPDATE_FEATURE_ENVIRONMENT' },
        { name: 'CREATE_PROJECT' },
        { name: 'UPDATE_FEATURE', environment: 'production' },
        { id: 7, name: 'CREATE_FEATURE' },
        {},
      ],
    });
    const error = await expectError(response, 400, 'ValidationError');
    expect(error.message).toBe(
      'Request validation failed: your request body or params contain invalid data. Refer to the `details` list for more information.',
    );
    expect(error.details).toEqual([
      { path: '/body/name', message: 'There already exists a role with the name Viewer' },
      { path: '/body/permissions/0/name', message: 'The permission "NO_SUCH_PERMISSION" does not exist.' },
      { path: '/body/permissions/1/id', message: 'No permission has the id 9999.' },
      { path: '/body/permissions/2/environment', message: 'The environment "staging" does not exist.' },
      {
        path: '/body/permissions/3/environment',
        message: '"UPDATE_FEATURE_ENVIRONMENT" is an environment permission: name the environment it applies to.',
      },
      {
        path: '/body/permissions/4/name',
        message: '"CREATE_PROJECT" is a root permission, but a `custom` (project) role takes only project and environment permissions.',
      },
      { path: '/body/permissions/5/environment', message: '"UPDATE_FEATURE" is not an environment permission: it takes no environment.' },
      { path: '/body/permissions/6', message: 'Permission id 7 is "UPDATE_FEATURE", not "CREATE_FEATURE".' },
      { path: '/body/permissions/7', message: 'The `/body/permissions/7` item must name a permission by `name` or `id`.' },
    ]);
    expect(await storedRows()).toBe(before);
  });

  it('keeps root-custom roles to root permissions named by name (variant B is custom only)', async () => {
    const error = await expectError(
      await validate({
        name: 'Root mix',
        type: 'root-custom',
        permissions: [{ name: 'UPDATE_FEATURE' }, { id: 20 }, { name: 'CREATE_FEATURE_STRATEGY', environment: 'development' }],
      }),
      400,
      'ValidationError',
    );
    expect(error.details).toEqual([
      {
        path: '/body/permissions/0/name',
        message: '"UPDATE_FEATURE" is a project permission, but a `root-custom` role takes only root permissions.',
      },
      {
        path: '/body/permissions/1/id',
        message: 'Permissions given by `id` are only accepted for `custom` roles; name them with `name` in a `root-custom` role.',
      },
      {
        path: '/body/permissions/2/name',
        message: '"CREATE_FEATURE_STRATEGY" is an environment permission, but a `root-custom` role takes only root permissions.',
      },
    ]);
  });

  it('answers 400 for schema problems: missing or blank name, wrong types, a bad type', async () => {
    const cases: [unknown, { path: string; message: string }[]][] = [
      [{}, [{ path: '/body/name', message: 'The `/body/name` property is required. It was not present on the data you sent.' }]],
      [{ name: '   ' }, [{ path: '/body/name', message: 'The `/body/name` property must not be empty. You sent "".' }]],
      [
        { name: 'T', type: 'root' },
        [{ path: '/body/type', message: 'The `/body/type` property must be one of "root-custom", "custom". You sent "root".' }],
      ],
      [{ name: 'T', type: 7 }, [{ path: '/body/type', message: 'The `/body/type` property must be string. You sent 7.' }]],
      [
        { name: 'T', permissions: {} },
        [{ path: '/body/permissions', message: 'The `/body/permissions` property must be array. You sent {}.' }],
      ],
      [
        { name: 'T', permissions: [{ id: 1.5 }] },
        [{ path: '/body/permissions/0/id', message: 'The `/body/permissions/0/id` property must be integer. You sent 1.5.' }],
      ],
      [
        { name: 'T', permissions: [{ id: 2 ** 63 }] },
        [
          {
            path: '/body/permissions/0/id',
            message: 'The `/body/permissions/0/id` property must be <= 2147483647. You sent 9223372036854776000.',
          },
        ],
      ],
      [
        { name: 'x'.repeat(256) },
        [
          {
            path: '/body/name',
            message: `The \`/body/name\` property must be at most 255 characters long. You sent "${'x'.repeat(96)}....`,
          },
        ],
      ],
      [
        { name: '__proto__', permissions: [{ name: '__proto__' }, { name: 'constructor' }] },
        [
          { path: '/body/permissions/0/name', message: 'The permission "__proto__" does not exist.' },
          { path: '/body/permissions/1/name', message: 'The permission "constructor" does not exist.' },
        ],
      ],
    ];
    for (const [body, details] of cases) {
      const error = await expectError(await validate(body), 400, 'ValidationError');
      expect(error.details, JSON.stringify(body).slice(0, 80)).toEqual(details);
    }
    const deep = `${'['.repeat(10000)}${']'.repeat(10000)}`;
    for (const raw of [`{"name":${deep}}`, `{"name":"x","permissions":[{"environment":${deep}}]}`]) {
      const error = await expectError(await call('POST', '/api/admin/roles/validate', { rawBody: raw }), 400, 'ValidationError');
      expect(error.details.length).toBe(1);
    }
    // Unknown keys are dropped, as Unleash does, however deep they are.
    expect((await call('POST', '/api/admin/roles/validate', { rawBody: `{"name":"Deep extra","extra":${deep}}` })).status).toBe(200);
    for (const raw of ['[]', 'null', '42', '[[[['.repeat(3000)]) {
      await expectError(await call('POST', '/api/admin/roles/validate', { rawBody: raw }), 400, 'ValidationError');
    }
  });

  it('answers 401 without a valid key, 403 for client keys, 415 for non-JSON', async () => {
    await expectError(await call('POST', '/api/admin/roles/validate', { token: null, body: { name: 'x' } }), 401, 'AuthenticationRequired');
    await expectError(
      await call('POST', '/api/admin/roles/validate', { token: 'nope', body: { name: 'x' } }),
      401,
      'AuthenticationRequired',
    );
    const client = await createToken({ tokenName: 'roles-client', type: 'client', environment: 'development' });
    await expectError(await call('POST', '/api/admin/roles/validate', { token: client, body: { name: 'x' } }), 403, 'NoAccessError');
    await expectError(
      await call('POST', '/api/admin/roles/validate', { rawBody: 'name=x', contentType: 'text/plain' }),
      415,
      'ContentTypeerror',
    );
  });
});

describe('POST /api/admin/roles', () => {
  it('creates a custom role with its permissions: 201, a location, an audit event', async () => {
    const response = await call('POST', '/api/admin/roles', {
      body: {
        name: ' Flag editors ',
        description: 'Edit flags',
        permissions: [{ name: 'UPDATE_FEATURE' }, { id: 28, environment: 'production' }, { name: 'UPDATE_FEATURE' }],
      },
    });
    expect(response.status).toBe(201);
    const role = await bodyOf(response);
    expect(role).toEqual({
      id: role.id,
      type: 'custom',
      name: 'Flag editors',
      description: 'Edit flags',
      project: null,
      permissions: [
        { id: 7, name: 'UPDATE_FEATURE', displayName: 'Update feature flags', type: 'project' },
        { id: 28, name: 'UPDATE_FEATURE_ENVIRONMENT', displayName: 'Enable/disable flags', type: 'environment', environment: 'production' },
      ],
    });
    expect(role.id).toBeGreaterThan(5);
    expect(response.headers.get('location')).toBe(`/api/admin/roles/${role.id}`);
    const event = await env.DB.prepare("SELECT data FROM events WHERE type = 'role-created' ORDER BY id DESC LIMIT 1").first<{
      data: string;
    }>();
    expect(JSON.parse(event!.data)).toEqual({
      id: role.id,
      type: 'custom',
      name: 'Flag editors',
      description: 'Edit flags',
      project: null,
      permissions: [{ name: 'UPDATE_FEATURE' }, { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }],
    });
    expect(await bodyOf(await call('GET', `/api/admin/roles/${role.id}`))).toEqual(role);
  });

  it('answers 409 NameExistsError for a taken name and 400 for other problems, storing nothing', async () => {
    const before = await storedRows();
    const taken = await expectError(await call('POST', '/api/admin/roles', { body: { name: 'Admin' } }), 409, 'NameExistsError');
    expect(taken.message).toBe('There already exists a role with the name Admin');
    await expectError(
      await call('POST', '/api/admin/roles', { body: { name: 'Bad perms', permissions: [{ name: 'NOPE' }] } }),
      400,
      'ValidationError',
    );
    expect(await storedRows()).toBe(before);
  });
});

describe('GET /api/admin/roles', () => {
  it('lists built-in and custom roles', async () => {
    const created = await createRole({ name: 'Listed role', type: 'root-custom', permissions: [{ name: 'READ_ROLE' }] });
    const response = await call('GET', '/api/admin/roles');
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body.roles.slice(0, 3).map((role: { id: number; name: string; type: string }) => [role.id, role.name, role.type])).toEqual([
      [1, 'Admin', 'root'],
      [2, 'Editor', 'root'],
      [3, 'Viewer', 'root'],
    ]);
    expect(body.roles).toContainEqual({ id: created.id, type: 'root-custom', name: 'Listed role', description: '', project: null });
  });
});

describe('GET /api/admin/roles/:id', () => {
  it('returns a built-in role with its permissions, 404 for an unknown id and 400 for a non-integer', async () => {
    const admin = await bodyOf(await call('GET', '/api/admin/roles/1'));
    expect(admin).toMatchObject({
      id: 1,
      type: 'root',
      name: 'Admin',
      project: null,
      permissions: [{ id: 1, name: 'ADMIN', displayName: 'Admin', type: 'root' }],
    });
    expect((await expectError(await call('GET', '/api/admin/roles/4242'), 404, 'NotFoundError')).message).toBe(
      'Could not find role with id: 4242',
    );
    await expectError(await call('GET', '/api/admin/roles/99999999999'), 404, 'NotFoundError');
    const bad = await expectError(await call('GET', '/api/admin/roles/abc'), 400, 'ValidationError');
    expect(bad.details[0]!.path).toBe('/params/id');
  });
});

describe('PUT /api/admin/roles/:id', () => {
  it('updates a custom role, replacing its permissions, with before and after in the audit event', async () => {
    const role = await createRole({ name: 'To update', permissions: [{ name: 'CREATE_FEATURE' }] });
    const response = await call('PUT', `/api/admin/roles/${role.id}`, {
      body: { name: 'Updated', description: 'now', permissions: [{ name: 'DELETE_FEATURE' }] },
    });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toMatchObject({
      id: role.id,
      name: 'Updated',
      description: 'now',
      permissions: [{ name: 'DELETE_FEATURE' }],
    });
    const event = await env.DB.prepare("SELECT data, pre_data FROM events WHERE type = 'role-updated' ORDER BY id DESC LIMIT 1").first<{
      data: string;
      pre_data: string;
    }>();
    expect(JSON.parse(event!.pre_data)).toMatchObject({ name: 'To update', permissions: [{ name: 'CREATE_FEATURE' }] });
    expect(JSON.parse(event!.data)).toMatchObject({ name: 'Updated', permissions: [{ name: 'DELETE_FEATURE' }] });
    // Keeping its own name is not a conflict; leaving out permissions keeps them.
    const again = await bodyOf(await call('PUT', `/api/admin/roles/${role.id}`, { body: { name: 'Updated' } }));
    expect(again.permissions).toEqual([{ id: 8, name: 'DELETE_FEATURE', displayName: 'Delete feature flags', type: 'project' }]);
  });

  it('keeps the stored type when the body leaves `type` out, and changes it only when given', async () => {
    const role = await createRole({ name: 'Root auditors', type: 'root-custom', permissions: [{ name: 'READ_ROLE' }] });
    const kept = await call('PUT', `/api/admin/roles/${role.id}`, { body: { name: 'Root auditors', description: 'renamed only' } });
    expect(kept.status).toBe(200);
    expect(await bodyOf(kept)).toMatchObject({ id: role.id, type: 'root-custom', permissions: [{ name: 'READ_ROLE' }] });
    expect((await bodyOf(await call('GET', `/api/admin/roles/${role.id}`))).type).toBe('root-custom');
    // Permissions sent without `type` are checked against the stored type (root permissions only here).
    const mismatch = await expectError(
      await call('PUT', `/api/admin/roles/${role.id}`, { body: { name: 'Root auditors', permissions: [{ name: 'UPDATE_FEATURE' }] } }),
      400,
      'ValidationError',
    );
    expect(mismatch.details).toEqual([
      {
        path: '/body/permissions/0/name',
        message: '"UPDATE_FEATURE" is a project permission, but a `root-custom` role takes only root permissions.',
      },
    ]);
    const changed = await call('PUT', `/api/admin/roles/${role.id}`, { body: { name: 'Root auditors', type: 'custom', permissions: [] } });
    expect(await bodyOf(changed)).toMatchObject({ id: role.id, type: 'custom', permissions: [] });
  });

  it('refuses to change built-in roles and answers 404/409 as it should', async () => {
    const builtIn = await expectError(await call('PUT', '/api/admin/roles/2', { body: { name: 'Editor' } }), 403, 'InvalidOperationError');
    expect(builtIn.message).toBe('You cannot change built in roles.');
    await expectError(await call('PUT', '/api/admin/roles/4242', { body: { name: 'x' } }), 404, 'NotFoundError');
    const role = await createRole({ name: 'Renaming' });
    await expectError(await call('PUT', `/api/admin/roles/${role.id}`, { body: { name: 'Viewer' } }), 409, 'NameExistsError');
  });
});

describe('DELETE /api/admin/roles/:id', () => {
  it('deletes an unused custom role and refuses built-in and used ones', async () => {
    const role = await createRole({ name: 'Short lived', permissions: [{ name: 'CREATE_FEATURE' }] });
    const response = await call('DELETE', `/api/admin/roles/${role.id}`);
    expect(response.status).toBe(200);
    await expectError(await call('GET', `/api/admin/roles/${role.id}`), 404, 'NotFoundError');
    expect(await count('SELECT count(*) AS n FROM role_permission WHERE role_id = ?', role.id)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'role-deleted'")).toBe(1);

    await expectError(await call('DELETE', '/api/admin/roles/3'), 403, 'InvalidOperationError');
    const used = await createRole({ name: 'Held', type: 'root-custom' });
    const user = await bodyOf(await call('POST', '/api/admin/user-admin', { body: { username: 'holder', rootRole: used.id } }));
    expect(user.rootRole).toBe(used.id);
    const inUse = await expectError(await call('DELETE', `/api/admin/roles/${used.id}`), 400, 'RoleInUseError');
    expect(inUse.message).toContain('Role is in use by users(1)');
  });
});

describe('GET /api/admin/permissions', () => {
  it("the role editor's catalogue: root and project permissions, and the environment ones for every environment", async () => {
    const response = await call('GET', '/api/admin/permissions');
    expect(response.status).toBe(200);
    const { permissions, version } = await bodyOf(response);
    expect(version).toBe(1);
    expect(permissions.root).toContainEqual({
      id: expect.any(Number),
      name: 'CREATE_PROJECT',
      displayName: expect.any(String),
      type: 'root',
    });
    expect(permissions.project.map((p: { name: string }) => p.name)).toContain('CREATE_FEATURE');
    const production = permissions.environments.find((e: { name: string }) => e.name === 'production');
    expect(production.permissions.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['UPDATE_FEATURE_ENVIRONMENT', 'APPROVE_CHANGE_REQUEST', 'SKIP_CHANGE_REQUEST']),
    );
    expect(
      production.permissions.every(
        (p: { environment: string; type: string }) => p.environment === 'production' && p.type === 'environment',
      ),
    ).toBe(true);
  });

  it('403 for a client key', async () => {
    await expectError(
      await call('GET', '/api/admin/permissions', { token: await createToken({ tokenName: 'perm-client', type: 'client' }) }),
      403,
      'NoAccessError',
    );
  });
});
