/**
 * The permission matrix: each kind of caller against a representative route of every admin
 * family. Callers are real people signed in through the real runtime (personal access tokens
 * created with a session), plus an SDK token. Allowed -> 2xx; refused -> 403 NoAccessError and
 * nothing written (read back from D1).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, createToken } from './support/http';
import { signInAs } from './support/users';
import { count } from './support/db';
import { adminOk } from './support/admin';

type Who = 'admin' | 'editor' | 'viewer' | 'custom' | 'projectEnv' | 'sdk';
const PEOPLE: Who[] = ['admin', 'editor', 'viewer', 'custom', 'projectEnv'];
// Refused callers go first: a route whose write is the same whoever calls it (a toggle) is
// then read back before an allowed caller makes it.
const EVERYONE: Who[] = ['sdk', 'viewer', 'custom', 'projectEnv', 'editor', 'admin'];

const run = Date.now().toString(36);
const P = `perm-${run}`;
const F_DEFAULT = `perm-default-${run}`;
const F_P = `perm-p-${run}`;
const credentials = {} as Record<Who, string>;

beforeAll(async () => {
  await adminOk('POST', '/api/admin/projects', { id: P, name: P, environments: ['development', 'production'] });
  await adminOk('POST', '/api/admin/projects/default/features', { name: F_DEFAULT });
  await adminOk('POST', `/api/admin/projects/${P}/features`, { name: F_P });

  const customRoot = await bodyOf(
    await adminOk('POST', '/api/admin/roles', {
      name: `root-custom-${run}`,
      description: 'segments and client tokens',
      type: 'root-custom',
      permissions: [
        { name: 'CREATE_SEGMENT' },
        { name: 'UPDATE_SEGMENT' },
        { name: 'CREATE_CLIENT_API_TOKEN' },
        { name: 'READ_CLIENT_API_TOKEN' },
      ],
    }),
  );
  const projectEnvRole = await bodyOf(
    await adminOk('POST', '/api/admin/roles', {
      name: `prod-toggler-${run}`,
      description: 'toggles and strategies in production only',
      type: 'custom',
      permissions: [
        { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' },
        { name: 'CREATE_FEATURE_STRATEGY', environment: 'production' },
      ],
    }),
  );

  credentials.admin = await signInAs('Admin');
  credentials.editor = await signInAs('Editor');
  credentials.viewer = await signInAs('Viewer');
  credentials.custom = await signInAs(customRoot.id);
  credentials.projectEnv = await signInAs('Viewer', async (userId) => {
    await adminOk('POST', `/api/admin/projects/${P}/access`, { roles: [projectEnvRole.id], users: [userId] });
  });
  credentials.sdk = await createToken({ tokenName: `sdk-${run}`, type: 'client', environment: 'development' });
});

interface Case {
  family: string;
  method: string;
  path: (who: Who) => string;
  body?: (who: Who) => unknown;
  allowed: readonly Who[];
  /** Whether the call wrote what it asks for; checked after every call. */
  written?: (who: Who) => Promise<boolean>;
}

const strategy = { name: 'default', parameters: {}, constraints: [] };

const CASES: Case[] = [
  {
    family: 'tokens: POST /api-tokens (client)',
    method: 'POST',
    path: () => '/api/admin/api-tokens',
    body: (who) => ({ tokenName: `tok-${who}-${run}`, type: 'client', environment: 'development' }),
    allowed: ['admin', 'custom'],
    written: async (who) => (await count('SELECT COUNT(*) AS n FROM api_tokens WHERE token_name = ?', `tok-${who}-${run}`)) === 1,
  },
  {
    family: 'tokens: GET /api-tokens',
    method: 'GET',
    path: () => '/api/admin/api-tokens',
    allowed: ['admin', 'editor', 'custom'],
  },
  {
    family: 'project tokens: POST /projects/default/api-tokens',
    method: 'POST',
    path: () => '/api/admin/projects/default/api-tokens',
    body: (who) => ({ tokenName: `ptok-${who}-${run}`, type: 'frontend', environment: 'development' }),
    allowed: ['admin', 'editor'],
    written: async (who) => (await count('SELECT COUNT(*) AS n FROM api_tokens WHERE token_name = ?', `ptok-${who}-${run}`)) === 1,
  },
  {
    family: 'users: POST /user-admin',
    method: 'POST',
    path: () => '/api/admin/user-admin',
    body: (who) => ({ email: `made-by-${who}-${run}@example.com`, rootRole: 3 }),
    allowed: ['admin'],
    written: async (who) => (await count('SELECT COUNT(*) AS n FROM users WHERE email = ?', `made-by-${who}-${run}@example.com`)) === 1,
  },
  {
    family: 'users: GET /user-admin',
    method: 'GET',
    path: () => '/api/admin/user-admin',
    allowed: ['admin'],
  },
  {
    family: 'roles: POST /roles',
    method: 'POST',
    path: () => '/api/admin/roles',
    body: (who) => ({ name: `role-by-${who}-${run}`, description: 'x', type: 'custom', permissions: [{ name: 'UPDATE_FEATURE' }] }),
    allowed: ['admin'],
    written: async (who) => (await count('SELECT COUNT(*) AS n FROM roles WHERE name = ?', `role-by-${who}-${run}`)) === 1,
  },
  {
    family: 'roles: GET /roles',
    method: 'GET',
    path: () => '/api/admin/roles',
    allowed: PEOPLE,
  },
  {
    family: 'invite links: POST /invite-link/tokens',
    method: 'POST',
    path: () => '/api/admin/invite-link/tokens',
    body: (who) => ({ name: `link-${who}-${run}`, expiresAt: '2099-01-01T00:00:00.000Z' }),
    allowed: ['admin'],
    written: async (who) => (await count('SELECT COUNT(*) AS n FROM public_signup_tokens WHERE name = ?', `link-${who}-${run}`)) === 1,
  },
  {
    family: 'projects: POST /projects',
    method: 'POST',
    path: () => '/api/admin/projects',
    body: (who) => ({ id: `proj-${who}-${run}`, name: `proj-${who}` }),
    allowed: ['admin', 'editor'],
    written: async (who) => (await count('SELECT COUNT(*) AS n FROM projects WHERE id = ?', `proj-${who}-${run}`)) === 1,
  },
  {
    family: 'projects: POST /projects/:projectId/access',
    method: 'POST',
    path: () => `/api/admin/projects/${P}/access`,
    body: () => ({ roles: [5], users: [1] }),
    allowed: ['admin'],
    written: async () => (await count('SELECT COUNT(*) AS n FROM role_user WHERE project = ? AND user_id = 1 AND role_id = 5', P)) === 1,
  },
  {
    family: 'features: POST /projects/default/features',
    method: 'POST',
    path: () => '/api/admin/projects/default/features',
    body: (who) => ({ name: `feat-${who}-${run}` }),
    allowed: ['admin', 'editor'],
    written: async (who) => (await count('SELECT COUNT(*) AS n FROM features WHERE name = ?', `feat-${who}-${run}`)) === 1,
  },
  {
    family: 'features: toggle on in project P, production',
    method: 'POST',
    path: () => `/api/admin/projects/${P}/features/${F_P}/environments/production/on`,
    allowed: ['admin', 'projectEnv'],
  },
  {
    family: 'features: toggle on in project P, development (outside the role’s environment)',
    method: 'POST',
    path: () => `/api/admin/projects/${P}/features/${F_P}/environments/development/on`,
    allowed: ['admin'],
    written: async () =>
      (await count(
        "SELECT COUNT(*) AS n FROM feature_environments WHERE feature_name = ? AND environment = 'development' AND enabled = 1",
        F_P,
      )) === 1,
  },
  {
    family: 'features: toggle on in project default, development',
    method: 'POST',
    path: () => `/api/admin/projects/default/features/${F_DEFAULT}/environments/development/on`,
    allowed: ['admin', 'editor'],
  },
  {
    family: 'strategies: POST in project P, production',
    method: 'POST',
    path: () => `/api/admin/projects/${P}/features/${F_P}/environments/production/strategies`,
    body: (who) => ({ ...strategy, title: `by-${who}` }),
    allowed: ['admin', 'projectEnv'],
    written: async (who) =>
      (await count('SELECT COUNT(*) AS n FROM feature_strategies WHERE feature_name = ? AND title = ?', F_P, `by-${who}`)) === 1,
  },
  {
    family: 'variants: PUT variants-batch in default, development (checked per environment)',
    method: 'PUT',
    path: () => `/api/admin/projects/default/features/${F_DEFAULT}/variants-batch`,
    body: (who) => ({
      environments: ['development'],
      variants: [{ name: `v-${who}`, weight: 1000, weightType: 'variable', stickiness: 'default' }],
    }),
    allowed: ['admin', 'editor'],
    written: async (who) =>
      (await count(
        "SELECT COUNT(*) AS n FROM feature_environments WHERE feature_name = ? AND environment = 'development' AND instr(variants, ?) > 0",
        F_DEFAULT,
        `"v-${who}"`,
      )) === 1,
  },
  {
    family: 'tags: POST /features/:featureName/tags (project resolved from the feature)',
    method: 'POST',
    path: () => `/api/admin/features/${F_DEFAULT}/tags`,
    body: (who) => ({ type: 'simple', value: `tag-${who}` }),
    allowed: ['admin', 'editor'],
    written: async (who) =>
      (await count('SELECT COUNT(*) AS n FROM feature_tag WHERE feature_name = ? AND tag_value = ?', F_DEFAULT, `tag-${who}`)) === 1,
  },
  {
    family: 'tags: POST /features/:featureName/tags in project P',
    method: 'POST',
    path: () => `/api/admin/features/${F_P}/tags`,
    body: (who) => ({ type: 'simple', value: `ptag-${who}` }),
    allowed: ['admin'],
    written: async (who) =>
      (await count('SELECT COUNT(*) AS n FROM feature_tag WHERE feature_name = ? AND tag_value = ?', F_P, `ptag-${who}`)) === 1,
  },
  {
    family: 'segments: POST /segments',
    method: 'POST',
    path: () => '/api/admin/segments',
    body: (who) => ({ name: `seg-${who}-${run}`, constraints: [] }),
    allowed: ['admin', 'editor', 'custom'],
    written: async (who) => (await count('SELECT COUNT(*) AS n FROM segments WHERE name = ?', `seg-${who}-${run}`)) === 1,
  },
  {
    family: 'search: GET /search/features',
    method: 'GET',
    path: () => '/api/admin/search/features',
    allowed: PEOPLE,
  },
  {
    family: 'search: GET /search/events',
    method: 'GET',
    path: () => `/api/admin/search/events?feature=IS:${F_P}`,
    allowed: PEOPLE,
  },
  {
    family: 'events: GET /events',
    method: 'GET',
    path: () => '/api/admin/events',
    allowed: ['admin'],
  },
  {
    family: 'import: POST /features-batch/import',
    method: 'POST',
    path: () => '/api/admin/features-batch/import',
    body: (who) => ({
      project: 'default',
      environment: 'development',
      data: { features: [{ name: `imp-${who}-${run}`, type: 'release', project: 'default' }], featureStrategies: [], tagTypes: [] },
    }),
    allowed: ['admin', 'editor'],
    written: async (who) => (await count('SELECT COUNT(*) AS n FROM features WHERE name = ?', `imp-${who}-${run}`)) === 1,
  },
  {
    family: 'export: POST /features-batch/export',
    method: 'POST',
    path: () => '/api/admin/features-batch/export',
    body: () => ({ features: [F_DEFAULT], environment: 'development' }),
    allowed: PEOPLE,
  },
];

describe('permission matrix', () => {
  for (const route of CASES) {
    describe(route.family, () => {
      for (const who of EVERYONE) {
        const allowed = route.allowed.includes(who);
        it(`${who}: ${allowed ? 'allowed' : 'refused, nothing written'}`, async () => {
          const response = await call(route.method, route.path(who), { token: credentials[who], body: route.body?.(who) });
          if (allowed) {
            expect(response.status, await response.clone().text()).toBeLessThan(300);
            expect(response.status).toBeGreaterThanOrEqual(200);
          } else {
            expect(response.status, await response.clone().text()).toBe(403);
            const body = await bodyOf(response);
            expect(body.name).toBe('NoAccessError');
            if (who !== 'sdk') expect(body.message).toMatch(/permission|access/);
          }
          if (route.written) expect(await route.written(who)).toBe(allowed);
        });
      }
    });
  }
});

describe('what a refusal says', () => {
  it('names the permission a viewer lacks, in Unleash’s words', async () => {
    const response = await call('POST', '/api/admin/projects/default/features', { token: credentials.viewer, body: { name: `x-${run}` } });
    const body = await bodyOf(response);
    expect(response.status).toBe(403);
    expect(body.message).toBe(
      'You don\'t have the required permissions to perform this operation. To perform this action, you need the "CREATE_FEATURE" permission.',
    );
    expect(body.permissions).toEqual(['CREATE_FEATURE']);
  });

  it('lists what an import needs and a viewer lacks in validate’s permissions', async () => {
    const response = await call('POST', '/api/admin/features-batch/validate', {
      token: credentials.viewer,
      body: {
        project: 'default',
        environment: 'development',
        data: { features: [{ name: `val-${run}`, project: 'default' }], featureStrategies: [], tagTypes: [] },
      },
    });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body.permissions[0].affectedItems).toEqual(['Create feature flags', 'Update feature flags']);
  });

  it('checks import permissions in the target project: an Editor may import into default, not into P', async () => {
    const response = await call('POST', '/api/admin/features-batch/validate', {
      token: credentials.editor,
      body: {
        project: P,
        environment: 'development',
        data: { features: [{ name: `val2-${run}`, project: P }], featureStrategies: [], tagTypes: [] },
      },
    });
    const body = await bodyOf(response);
    expect(body.permissions[0].affectedItems).toEqual(['Create feature flags', 'Update feature flags']);
  });
});

describe('project roles', () => {
  it('makes the Editor who creates a project its Owner, able to work in it', async () => {
    const id = `owned-${run}`;
    expect((await call('POST', '/api/admin/projects', { token: credentials.editor, body: { id, name: id } })).status).toBe(201);
    expect(
      (await call('POST', `/api/admin/projects/${id}/features`, { token: credentials.editor, body: { name: `owned-f-${run}` } })).status,
    ).toBe(201);
    const access = await bodyOf(await call('GET', `/api/admin/projects/${id}/access`, { token: credentials.editor }));
    expect(access.users).toHaveLength(1);
    expect(access.users[0].roles).toEqual([4]);
  });

  it('lets a project Owner grant Member, and refuses a member granting Owner', async () => {
    const id = `grant-${run}`;
    await call('POST', '/api/admin/projects', { token: credentials.editor, body: { id, name: id } });
    const viewerId = (await bodyOf(await call('GET', '/api/admin/user', { token: credentials.viewer }))).user.id as number;
    expect(
      (await call('POST', `/api/admin/projects/${id}/access`, { token: credentials.editor, body: { roles: [5], users: [viewerId] } }))
        .status,
    ).toBe(200);
    const refused = await call('POST', `/api/admin/projects/${id}/access`, {
      token: credentials.viewer,
      body: { roles: [4], users: [viewerId] },
    });
    expect(refused.status).toBe(403);
    expect(await count('SELECT COUNT(*) AS n FROM role_user WHERE project = ? AND user_id = ? AND role_id = 4', id, viewerId)).toBe(0);
  });
});

describe('turning a flag on where it has no strategy', () => {
  // Unleash adds the default strategy then, so it also asks for CREATE_FEATURE_STRATEGY there.
  let toggler: string;
  beforeAll(async () => {
    const role = await bodyOf(
      await adminOk('POST', '/api/admin/roles', {
        name: `prod-toggle-only-${run}`,
        type: 'custom',
        permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }],
      }),
    );
    toggler = await signInAs('Viewer', async (userId) => {
      await adminOk('POST', `/api/admin/projects/${P}/access`, { roles: [role.id], users: [userId] });
    });
  });

  async function newFlag(): Promise<string> {
    const name = `no-strategy-${crypto.randomUUID().slice(0, 8)}`;
    await adminOk('POST', `/api/admin/projects/${P}/features`, { name });
    return name;
  }

  const strategies = (name: string) =>
    count("SELECT COUNT(*) AS n FROM feature_strategies WHERE feature_name = ? AND environment = 'production'", name);
  const enabled = (name: string) =>
    count("SELECT COUNT(*) AS n FROM feature_environments WHERE feature_name = ? AND environment = 'production' AND enabled = 1", name);

  it('403 naming CREATE_FEATURE_STRATEGY for a holder of only UPDATE_FEATURE_ENVIRONMENT; nothing written', async () => {
    const name = await newFlag();
    const response = await call('POST', `/api/admin/projects/${P}/features/${name}/environments/production/on`, { token: toggler });
    expect(response.status).toBe(403);
    const body = await bodyOf(response);
    expect(body).toMatchObject({ name: 'NoAccessError', permissions: ['CREATE_FEATURE_STRATEGY'] });
    expect(body.message).toBe(
      'You don\'t have the required permissions to perform this operation. To perform this action, you need the "CREATE_FEATURE_STRATEGY" permission.',
    );
    expect(await strategies(name)).toBe(0);
    expect(await enabled(name)).toBe(0);
  });

  it('the same person may turn it on once it has a strategy, and off in any case', async () => {
    const name = await newFlag();
    await adminOk('POST', `/api/admin/projects/${P}/features/${name}/environments/production/strategies`, strategy);
    const on = await call('POST', `/api/admin/projects/${P}/features/${name}/environments/production/on`, { token: toggler });
    expect(on.status).toBe(200);
    expect(await enabled(name)).toBe(1);
    expect(await strategies(name)).toBe(1);
    const off = await call('POST', `/api/admin/projects/${P}/features/${name}/environments/production/off`, { token: toggler });
    expect(off.status).toBe(200);
    expect(await enabled(name)).toBe(0);
  });

  it('with CREATE_FEATURE_STRATEGY there too, it is turned on with the default strategy added', async () => {
    const name = await newFlag();
    const response = await call('POST', `/api/admin/projects/${P}/features/${name}/environments/production/on`, {
      token: credentials.projectEnv,
    });
    expect(response.status).toBe(200);
    expect(await strategies(name)).toBe(1);
    expect(await enabled(name)).toBe(1);
  });
});

describe('segments of a project', () => {
  it('lets a project role with UPDATE_PROJECT_SEGMENT make segments in its project only', async () => {
    const role = await bodyOf(
      await adminOk('POST', '/api/admin/roles', {
        name: `segmenter-${run}`,
        description: 'project segments',
        type: 'custom',
        permissions: [{ name: 'UPDATE_PROJECT_SEGMENT' }],
      }),
    );
    const segmenter = await signInAs('Viewer', async (userId) => {
      await adminOk('POST', `/api/admin/projects/${P}/access`, { roles: [role.id], users: [userId] });
    });
    const inProject = await call('POST', '/api/admin/segments', {
      token: segmenter,
      body: { name: `pseg-${run}`, project: P, constraints: [] },
    });
    expect(inProject.status).toBe(201);
    const global = await call('POST', '/api/admin/segments', { token: segmenter, body: { name: `gseg-${run}`, constraints: [] } });
    expect(global.status).toBe(403);
    const elsewhere = await call('POST', '/api/admin/segments', {
      token: segmenter,
      body: { name: `dseg-${run}`, project: 'default', constraints: [] },
    });
    expect(elsewhere.status).toBe(403);
    expect(await count('SELECT COUNT(*) AS n FROM segments WHERE name IN (?, ?)', `gseg-${run}`, `dseg-${run}`)).toBe(0);
    // The segment's project decides who may change it.
    const id = (await bodyOf(inProject)).id as number;
    expect(
      (await call('PUT', `/api/admin/segments/${id}`, { token: segmenter, body: { name: `pseg-${run}`, project: P, constraints: [] } }))
        .status,
    ).toBe(204);
    expect(
      (await call('PUT', `/api/admin/segments/${id}`, { token: segmenter, body: { name: `pseg-${run}`, constraints: [] } })).status,
    ).toBe(403);
    expect(await count('SELECT COUNT(*) AS n FROM segments WHERE id = ? AND segment_project_id = ?', id, P)).toBe(1);
  });
});

describe('invite links', () => {
  it('only take root roles', async () => {
    const response = await call('POST', '/api/admin/invite-link/tokens', {
      body: { name: `link-project-${run}`, expiresAt: '2099-01-01T00:00:00.000Z', roleId: 4 },
    });
    expect(response.status).toBe(400);
    expect(await count('SELECT COUNT(*) AS n FROM public_signup_tokens WHERE name = ?', `link-project-${run}`)).toBe(0);
  });
});

describe('who acted', () => {
  it('records the person as the actor of an audit event and as the creator of a feature', async () => {
    const name = `actor-${run}`;
    expect((await call('POST', '/api/admin/projects/default/features', { token: credentials.editor, body: { name } })).status).toBe(201);
    const me = (await bodyOf(await call('GET', '/api/admin/user', { token: credentials.editor }))).user;
    const events = await bodyOf(await call('GET', `/api/admin/search/events?feature=IS:${name}`, { token: credentials.viewer }));
    expect(events.events[0]).toMatchObject({ type: 'feature-created', createdByUserId: me.id, createdBy: me.email ?? me.username });
    const feature = await bodyOf(await call('GET', `/api/admin/projects/default/features/${name}`, { token: credentials.viewer }));
    expect(feature.createdBy.id).toBe(me.id);
  });

  it('keeps favourites per person', async () => {
    expect(
      (
        await call('POST', `/api/admin/projects/default/features/${F_DEFAULT}/favorites`, {
          token: credentials.editor,
          contentType: 'application/json',
        })
      ).status,
    ).toBe(200);
    const mine = await bodyOf(await call('GET', `/api/admin/search/features?query=${F_DEFAULT}`, { token: credentials.editor }));
    const theirs = await bodyOf(await call('GET', `/api/admin/search/features?query=${F_DEFAULT}`, { token: credentials.viewer }));
    expect(mine.features.find((f: { name: string }) => f.name === F_DEFAULT).favorite).toBe(true);
    expect(theirs.features.find((f: { name: string }) => f.name === F_DEFAULT).favorite).toBe(false);
  });
});
