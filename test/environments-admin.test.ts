/**
 * Environments created, changed and deleted, beyond the open-source build, as Unleash
 * Enterprise has them (Unleash 6.10.1 OSS answers these paths 404).
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError } from './support/http';
import { unique } from './support/names';
import { signInAs } from './support/users';
import { count, lastEvent } from './support/db';

let editor: string;

beforeAll(async () => {
  editor = await signInAs('Editor');
});

/** Everything an environment write could touch, and the event count. */
async function stored(): Promise<string> {
  const tables = ['environments', 'project_environments', 'feature_environments', 'feature_strategies', 'role_permission'];
  const dumps = [];
  for (const table of tables) dumps.push((await env.DB.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all()).results);
  return JSON.stringify(dumps) + (await count('SELECT count(*) AS n FROM events'));
}

function envName(): string {
  return unique('env').replace(/[^a-zA-Z0-9~_.-]/g, '-');
}

async function createEnvironment(body: Record<string, unknown>) {
  const response = await call('POST', '/api/admin/environments', { body });
  if (response.status !== 201) throw new Error(`environment creation failed: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

describe('POST /api/admin/environments', () => {
  it('201 with the environment, its location and the environment-created event; attached to no project', async () => {
    const name = envName();
    const response = await call('POST', '/api/admin/environments', { body: { name, type: 'test', sortOrder: 7 } });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/api/admin/environments/${name}`);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['name', 'type', 'sortOrder', 'enabled', 'protected', 'requiredApprovals']);
    expect(body).toEqual({ name, type: 'test', sortOrder: 7, enabled: true, protected: false, requiredApprovals: null });
    expect(await bodyOf(await call('GET', `/api/admin/environments/${name}`))).toEqual(body);
    expect(await count('SELECT count(*) AS n FROM project_environments WHERE environment_name = ?', name)).toBe(0);
    const event = await lastEvent('environment-created');
    expect(event!.environment).toBe(name);
    expect(JSON.parse(event!.data!)).toEqual(body);
  });

  it('takes enabled: false, and puts an environment without a sort order last (9999)', async () => {
    const name = envName();
    const body = await createEnvironment({ name, type: 'development', enabled: false });
    expect(body).toMatchObject({ enabled: false, sortOrder: 9999 });
    const { environments } = await bodyOf(await call('GET', '/api/admin/environments'));
    expect(environments.find((e: { name: string }) => e.name === name)).toMatchObject({ enabled: false, projectCount: 0 });
  });

  it('400 for a name that is not URL friendly, a missing or blank type; nothing written', async () => {
    const before = await stored();
    for (const body of [
      { name: 'has space', type: 'test' },
      { name: 'slash/name', type: 'test' },
      { name: '', type: 'test' },
      { name: envName() },
      { name: envName(), type: '  ' },
      { name: envName(), type: 'test', sortOrder: 1.5 },
      { type: 'test' },
    ]) {
      const error = await expectError(await call('POST', '/api/admin/environments', { body }), 400, 'ValidationError');
      expect(error.details[0]!.path).toMatch(/^\/body\/(name|type|sortOrder)$/);
    }
    expect(await stored()).toBe(before);
  });

  it('409 for a name that exists; nothing written', async () => {
    const before = await stored();
    const error = await expectError(
      await call('POST', '/api/admin/environments', { body: { name: 'development', type: 'production' } }),
      409,
      'NameExistsError',
    );
    expect(error.message).toBe('Environment with name development already exists');
    expect(await stored()).toBe(before);
    expect((await bodyOf(await call('GET', '/api/admin/environments/development'))).type).toBe('development');
  });

  it('403 for an Editor, 401 without a key; nothing written', async () => {
    const before = await stored();
    const body = { name: envName(), type: 'test' };
    const error = await expectError(await call('POST', '/api/admin/environments', { token: editor, body }), 403, 'NoAccessError');
    expect(error.message).toContain('ADMIN');
    await expectError(await call('POST', '/api/admin/environments', { token: null, body }), 401, 'AuthenticationRequired');
    expect(await stored()).toBe(before);
  });
});

describe('POST /api/admin/environments/validate', () => {
  it('200 without a body for a free name; 409 for a taken one, 400 for a bad one, 403 for an Editor; nothing written', async () => {
    const before = await stored();
    const free = await call('POST', '/api/admin/environments/validate', { body: { name: envName() } });
    expect(free.status).toBe(200);
    expect(await free.text()).toBe('');
    const taken = await expectError(
      await call('POST', '/api/admin/environments/validate', { body: { name: 'production' } }),
      409,
      'NameExistsError',
    );
    expect(taken.message).toBe('Environment with name production already exists');
    await expectError(await call('POST', '/api/admin/environments/validate', { body: { name: 'a b' } }), 400, 'ValidationError');
    await expectError(await call('POST', '/api/admin/environments/validate', { body: {} }), 400, 'ValidationError');
    await expectError(
      await call('POST', '/api/admin/environments/validate', { token: editor, body: { name: envName() } }),
      403,
      'NoAccessError',
    );
    expect(await stored()).toBe(before);
  });
});

describe('PUT /api/admin/environments/update/:name', () => {
  it('changes the type and sort order, not the name or enabled; the environment-updated event has both sides', async () => {
    const name = envName();
    const created = await createEnvironment({ name, type: 'test', sortOrder: 5, enabled: false });
    const response = await call('PUT', `/api/admin/environments/update/${name}`, {
      body: { type: 'preproduction', sortOrder: 6, name: 'renamed', enabled: true },
    });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['name', 'type', 'sortOrder', 'enabled', 'protected', 'requiredApprovals']);
    expect(body).toEqual({ ...created, type: 'preproduction', sortOrder: 6 });
    expect(await bodyOf(await call('GET', `/api/admin/environments/${name}`))).toEqual(body);
    const event = await lastEvent('environment-updated');
    expect(event!.environment).toBe(name);
    expect(JSON.parse(event!.data!)).toEqual(body);
    expect(JSON.parse(event!.pre_data!)).toEqual(created);

    // Only what is sent changes.
    const again = await bodyOf(await call('PUT', `/api/admin/environments/update/${name}`, { body: { sortOrder: 2 } }));
    expect(again).toEqual({ ...body, sortOrder: 2 });
  });

  it('404 for an unknown environment, 400 for a protected one or a bad body, 403 for an Editor; nothing written', async () => {
    const name = envName();
    await createEnvironment({ name, type: 'test' });
    const before = await stored();
    const missing = await expectError(
      await call('PUT', '/api/admin/environments/update/nosuch-env', { body: { type: 'test' } }),
      404,
      'NotFoundError',
    );
    expect(missing.message).toBe('Could not find environment with name nosuch-env');
    const guarded = await expectError(
      await call('PUT', '/api/admin/environments/update/default', { body: { type: 'test' } }),
      400,
      'ValidationError',
    );
    expect(guarded.details[0]!.message).toBe('Environment default is protected and cannot be updated');
    await expectError(await call('PUT', `/api/admin/environments/update/${name}`, { body: { type: '' } }), 400, 'ValidationError');
    await expectError(await call('PUT', `/api/admin/environments/update/${name}`, { body: { sortOrder: 'x' } }), 400, 'ValidationError');
    await expectError(
      await call('PUT', `/api/admin/environments/update/${name}`, { token: editor, body: { type: 'production' } }),
      403,
      'NoAccessError',
    );
    expect(await stored()).toBe(before);
  });
});

describe('DELETE /api/admin/environments/:name', () => {
  it('deletes the environment with what flags had there and its project attachments; API keys stay; the environment-deleted event', async () => {
    const name = envName();
    const created = await createEnvironment({ name, type: 'test' });
    const flag = unique('env-del-flag');
    expect((await call('POST', '/api/admin/projects/default/environments', { body: { environment: name } })).status).toBe(200);
    expect((await call('POST', '/api/admin/projects/default/features', { body: { name: flag } })).status).toBe(201);
    const strategy = await call('POST', `/api/admin/projects/default/features/${flag}/environments/${name}/strategies`, {
      body: { name: 'default' },
    });
    expect(strategy.status).toBe(200);
    expect((await call('POST', `/api/admin/projects/default/features/${flag}/environments/${name}/on`)).status).toBe(200);
    const key = await createToken({ tokenName: unique('env-del-key'), type: 'client', environment: name, projects: ['*'] });
    expect((await call('GET', '/api/client/features', { token: key })).status).toBe(200);

    const response = await call('DELETE', `/api/admin/environments/${name}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    await expectError(await call('GET', `/api/admin/environments/${name}`), 404, 'NotFoundError');
    for (const [table, column] of [
      ['project_environments', 'environment_name'],
      ['feature_environments', 'environment'],
      ['feature_strategies', 'environment'],
    ]) {
      expect(await count(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`, name)).toBe(0);
    }
    const feature = await bodyOf(await call('GET', `/api/admin/projects/default/features/${flag}`));
    expect(feature.environments.map((e: { name: string }) => e.name)).not.toContain(name);
    // The key stays, as in Unleash, and now matches no flags of that environment.
    expect(await count('SELECT count(*) AS n FROM api_tokens WHERE environment = ?', name)).toBe(1);
    const served = await bodyOf(await call('GET', '/api/client/features', { token: key }));
    expect(served.features.find((f: { name: string }) => f.name === flag)?.enabled ?? false).toBe(false);

    const event = await lastEvent('environment-deleted');
    expect(event!.environment).toBe(name);
    expect(JSON.parse(event!.pre_data!)).toEqual(created);
  });

  it('400 for a protected environment, 404 for an unknown one, 403 for an Editor; nothing written', async () => {
    const name = envName();
    await createEnvironment({ name, type: 'test' });
    const before = await stored();
    const guarded = await expectError(await call('DELETE', '/api/admin/environments/default'), 400, 'ValidationError');
    expect(guarded.details[0]!.message).toBe('Environment default is protected and cannot be deleted');
    const missing = await expectError(await call('DELETE', '/api/admin/environments/nosuch-env'), 404, 'NotFoundError');
    expect(missing.message).toBe('Could not find environment with name nosuch-env');
    await expectError(await call('DELETE', `/api/admin/environments/${name}`, { token: editor }), 403, 'NoAccessError');
    expect(await stored()).toBe(before);
  });
});
