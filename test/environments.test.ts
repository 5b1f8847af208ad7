import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError } from './support/http';
import { signInAs } from './support/users';
import { count, lastEvent } from './support/db';

let editor: string;
let viewer: string;

beforeAll(async () => {
  editor = await signInAs('Editor');
  viewer = await signInAs('Viewer');
});

async function stored(): Promise<string> {
  const tables = ['environments', 'project_environments', 'feature_environments'];
  const dumps = [];
  for (const table of tables) dumps.push((await env.DB.prepare(`SELECT * FROM ${table}`).all()).results);
  return JSON.stringify(dumps) + (await count('SELECT count(*) AS n FROM events'));
}

describe('GET /api/admin/environments', () => {
  it('counts the API keys of each environment', async () => {
    await createToken({ tokenName: 'env-count', type: 'client', environment: 'production', projects: ['*'] });
    const { environments } = await bodyOf(await call('GET', '/api/admin/environments'));
    const production = environments.find((environment: { name: string }) => environment.name === 'production');
    expect(Object.keys(production)).toEqual([
      'name',
      'type',
      'sortOrder',
      'enabled',
      'protected',
      'requiredApprovals',
      'projectCount',
      'apiTokenCount',
      'enabledToggleCount',
    ]);
    expect(production.apiTokenCount).toBe(await count("SELECT count(*) AS n FROM api_tokens WHERE environment = 'production'"));
    expect(production.apiTokenCount).toBeGreaterThan(0);
  });
});

describe('GET /api/admin/environments/:name', () => {
  it('answers the environment, or 404', async () => {
    const response = await call('GET', '/api/admin/environments/development', { token: editor });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['name', 'type', 'sortOrder', 'enabled', 'protected', 'requiredApprovals']);
    expect(body).toMatchObject({ name: 'development', type: 'development', enabled: true, requiredApprovals: null });
    const error = await expectError(await call('GET', '/api/admin/environments/nosuch'), 404, 'NotFoundError');
    expect(error.message).toBe('Could not find environment with name: nosuch');
  });
});

describe('GET /api/admin/environments/project/:projectId', () => {
  it('lists every environment with what the project has there, and which it uses', async () => {
    const response = await call('GET', '/api/admin/environments/project/default', { token: editor });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body.version).toBe(1);
    const development = body.environments.find((environment: { name: string }) => environment.name === 'development');
    expect(Object.keys(development)).toEqual([
      'name',
      'type',
      'sortOrder',
      'enabled',
      'protected',
      'requiredApprovals',
      'projectApiTokenCount',
      'projectEnabledToggleCount',
      'visible',
    ]);
    expect(development.visible).toBe(true);
    const unknown = await bodyOf(await call('GET', '/api/admin/environments/project/nosuch'));
    expect(unknown.environments.every((environment: { visible: boolean }) => !environment.visible)).toBe(true);
  });
});

describe('POST /api/admin/environments/:name/on and /off', () => {
  it('turns an environment off and on (204), recording the events', async () => {
    const off = await call('POST', '/api/admin/environments/production/off');
    expect(off.status).toBe(204);
    expect(await off.text()).toBe('');
    expect((await bodyOf(await call('GET', '/api/admin/environments/production'))).enabled).toBe(false);
    const event = await lastEvent('environment-updated');
    expect(JSON.parse(event!.data!)).toMatchObject({ name: 'production', enabled: false });
    expect(JSON.parse(event!.pre_data!)).toMatchObject({ name: 'production', enabled: true });
    expect((await call('POST', '/api/admin/environments/production/on')).status).toBe(204);
    expect((await bodyOf(await call('GET', '/api/admin/environments/production'))).enabled).toBe(true);
  });

  it('answers 404 for an unknown environment and 403 to a non-admin, writing nothing', async () => {
    const before = await stored();
    const error = await expectError(await call('POST', '/api/admin/environments/nosuch/off'), 404, 'NotFoundError');
    expect(error.message).toBe('Could not find environment nosuch');
    await expectError(await call('POST', '/api/admin/environments/production/off', { token: editor }), 403, 'NoAccessError');
    expect(await stored()).toBe(before);
  });
});

describe('PUT /api/admin/environments/sort-order', () => {
  it('reorders the named environments (200, no body), skipping unknown names, and records the event', async () => {
    const response = await call('PUT', '/api/admin/environments/sort-order', { body: { production: 1, development: 5, nosuch: 2 } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    const { environments } = await bodyOf(await call('GET', '/api/admin/environments'));
    expect(environments.find((environment: { name: string }) => environment.name === 'production').sortOrder).toBe(1);
    expect(environments.find((environment: { name: string }) => environment.name === 'development').sortOrder).toBe(5);
    expect(JSON.parse((await lastEvent('environment-updated'))!.data!)).toEqual({
      sortOrder: { production: 1, development: 5, nosuch: 2 },
    });
  });

  it('answers 400 for a value that is not an integer and 403 to a non-admin, writing nothing', async () => {
    const before = await stored();
    const error = await expectError(
      await call('PUT', '/api/admin/environments/sort-order', { body: { development: 'x' } }),
      400,
      'ValidationError',
    );
    expect(error.details[0]!.path).toBe('/body/development');
    await expectError(
      await call('PUT', '/api/admin/environments/sort-order', { body: { development: 1 }, token: editor }),
      403,
      'NoAccessError',
    );
    expect(await stored()).toBe(before);
  });
});

describe('POST /api/admin/projects/:projectId/environments/:environment/default-strategy', () => {
  it('stores the default strategy (200 with it), which a flag then gets when first enabled there', async () => {
    const strategy = {
      name: 'flexibleRollout',
      parameters: { rollout: '40', stickiness: 'default', groupId: '' },
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }],
    };
    const response = await call('POST', '/api/admin/projects/default/environments/development/default-strategy', { body: strategy });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['name', 'parameters', 'constraints']);
    expect(body).toMatchObject(strategy);
    const event = await lastEvent('default-strategy-updated');
    expect(event).toMatchObject({ project: 'default', environment: 'development' });
    expect(JSON.parse(event!.data!)).toMatchObject(strategy);

    const listed = await bodyOf(await call('GET', '/api/admin/environments/project/default'));
    expect(listed.environments.find((environment: { name: string }) => environment.name === 'development').defaultStrategy).toMatchObject(
      strategy,
    );

    expect((await call('POST', '/api/admin/projects/default/features', { body: { name: 'gets-default' } })).status).toBe(201);
    expect((await call('POST', '/api/admin/projects/default/features/gets-default/environments/development/on')).status).toBe(200);
    const strategies = await bodyOf(
      await call('GET', '/api/admin/projects/default/features/gets-default/environments/development/strategies'),
    );
    expect(strategies).toHaveLength(1);
    expect(strategies[0]).toMatchObject({ name: 'flexibleRollout', parameters: { rollout: '40' } });
  });

  it("gives a flag first enabled there the default strategy's title, variants and segments, grouped by the flag (as 6.10.1)", async () => {
    const segment = await bodyOf(
      await call('POST', '/api/admin/segments', { body: { name: 'default-strategy-segment', constraints: [] } }),
    );
    const strategy = {
      name: 'flexibleRollout',
      title: 'dflt',
      parameters: { rollout: '50', stickiness: 'default', groupId: '' },
      constraints: [],
      variants: [{ name: 'v', weight: 1000, weightType: 'variable', stickiness: 'default' }],
      segments: [segment.id],
    };
    const saved = await call('POST', '/api/admin/projects/default/environments/production/default-strategy', { body: strategy });
    expect(saved.status).toBe(200);
    // Answered in the key order of Unleash's jsonb column, as 6.10.1 answers the same body.
    expect(Object.keys(await bodyOf(saved))).toEqual(['name', 'title', 'segments', 'variants', 'parameters', 'constraints']);
    expect((await call('POST', '/api/admin/projects/default/features', { body: { name: 'gets-default-segments' } })).status).toBe(201);
    expect((await call('POST', '/api/admin/projects/default/features/gets-default-segments/environments/production/on')).status).toBe(200);
    const [added] = await bodyOf(
      await call('GET', '/api/admin/projects/default/features/gets-default-segments/environments/production/strategies'),
    );
    expect(added).toMatchObject({
      name: 'flexibleRollout',
      title: 'dflt',
      parameters: { groupId: 'gets-default-segments', rollout: '50', stickiness: 'default' },
      variants: [{ name: 'v', weight: 1000, weightType: 'variable', stickiness: 'default' }],
      segments: [segment.id],
    });
  });

  it('refuses another strategy (400), an environment the project does not use (404), a caller without access (403), writing nothing', async () => {
    const before = await stored();
    const other = await expectError(
      await call('POST', '/api/admin/projects/default/environments/development/default-strategy', { body: { name: 'default' } }),
      400,
      'BadDataError',
    );
    expect(other.details).toEqual([{ message: 'Only "flexibleRollout" strategy can be used as a default strategy for an environment' }]);
    await expectError(
      await call('POST', '/api/admin/projects/default/environments/nosuch/default-strategy', { body: { name: 'flexibleRollout' } }),
      404,
      'NotFoundError',
    );
    await expectError(
      await call('POST', '/api/admin/projects/default/environments/development/default-strategy', {
        body: { name: 'flexibleRollout' },
        token: viewer,
      }),
      403,
      'NoAccessError',
    );
    expect(await stored()).toBe(before);
  });
});

describe('DELETE /api/admin/projects/:projectId/environments/:environment', () => {
  it('removes the environment from the project and its flags (200), recording the event', async () => {
    expect((await call('POST', '/api/admin/projects', { body: { id: 'envproj', name: 'Env project' } })).status).toBe(201);
    expect((await call('POST', '/api/admin/projects/envproj/features', { body: { name: 'envproj-flag' } })).status).toBe(201);
    expect(
      await count("SELECT count(*) AS n FROM feature_environments WHERE feature_name = 'envproj-flag' AND environment = 'production'"),
    ).toBe(1);
    const response = await call('DELETE', '/api/admin/projects/envproj/environments/production');
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(
      await count("SELECT count(*) AS n FROM project_environments WHERE project_id = 'envproj' AND environment_name = 'production'"),
    ).toBe(0);
    expect(
      await count("SELECT count(*) AS n FROM feature_environments WHERE feature_name = 'envproj-flag' AND environment = 'production'"),
    ).toBe(0);
    expect(await lastEvent('project-environment-removed')).toMatchObject({ project: 'envproj', environment: 'production' });
    const listed = await bodyOf(await call('GET', '/api/admin/environments/project/envproj'));
    expect(listed.environments.find((environment: { name: string }) => environment.name === 'production').visible).toBe(false);
    // Removing it again changes nothing and answers 200, as Unleash does.
    const before = await stored();
    expect((await call('DELETE', '/api/admin/projects/envproj/environments/production')).status).toBe(200);
    expect(await stored()).toBe(before);
  });

  it('refuses a caller without UPDATE_PROJECT in the project, writing nothing', async () => {
    const before = await stored();
    await expectError(await call('DELETE', '/api/admin/projects/default/environments/production', { token: viewer }), 403, 'NoAccessError');
    expect(await stored()).toBe(before);
  });
});
