/** Strategy definitions: custom ones defined, edited, deprecated and deleted; built-ins kept as Unleash ships them. */
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError } from './support/http';
import { signInAs } from './support/users';
import { count, eventsSince, parsedEvent } from './support/db';
import { maxEventId } from './support/import';
import { unique } from './support/names';

let viewer: string;

const PARAMETERS = [{ name: 'tenant', type: 'string', description: 'Which tenant', required: true }];

async function define(name: string, extra: Record<string, unknown> = {}) {
  const response = await call('POST', '/api/admin/strategies', { body: { name, description: 'd', parameters: PARAMETERS, ...extra } });
  if (response.status !== 201) throw new Error(`define ${name}: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

beforeAll(async () => {
  viewer = await signInAs('Viewer');
});

describe('POST /api/admin/strategies', () => {
  it('defines a custom strategy (201, its location, Unleash’s shape) with strategy-created', async () => {
    const name = unique('custom');
    const before = await maxEventId();
    const response = await call('POST', '/api/admin/strategies', {
      body: { name, description: 'd', parameters: PARAMETERS, unknownField: 1 },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`strategies/${name}`);
    const body = await bodyOf(response);
    expect(body).toEqual({
      displayName: null,
      name,
      editable: true,
      description: 'd',
      parameters: PARAMETERS,
      deprecated: false,
      title: null,
    });
    expect(Object.keys(body)).toEqual(['displayName', 'name', 'editable', 'description', 'parameters', 'deprecated', 'title']);
    expect((await eventsSince(before)).map((event) => [event.type, parsedEvent(event)!.data])).toEqual([
      ['strategy-created', { name, description: 'd', parameters: PARAMETERS, editable: true, deprecated: false }],
    ]);
    const listed = (await bodyOf(await call('GET', '/api/admin/strategies'))).strategies.map((s: { name: string }) => s.name);
    expect(listed).toContain(name);
  });

  it('refuses a taken name (409), missing parameters or a bad name (400) and a viewer (403), writing nothing', async () => {
    const name = unique('taken');
    await define(name);
    const before = await maxEventId();
    const taken = await expectError(
      await call('POST', '/api/admin/strategies', { body: { name, parameters: [] } }),
      409,
      'NameExistsError',
    );
    expect(taken.message).toBe(`Strategy with name ${name} already exist!`);
    const builtIn = await expectError(
      await call('POST', '/api/admin/strategies', { body: { name: 'default', parameters: [] } }),
      409,
      'NameExistsError',
    );
    expect(builtIn.message).toBe('Strategy with name default already exist!');
    await expectError(await call('POST', '/api/admin/strategies', { body: { name: 'no-params' } }), 400, 'ValidationError');
    await expectError(await call('POST', '/api/admin/strategies', { body: { name: 'a b', parameters: [] } }), 400, 'ValidationError');
    await expectError(
      await call('POST', '/api/admin/strategies', { body: { name: 'p-no-type', parameters: [{ name: 'p' }] } }),
      400,
      'ValidationError',
    );
    await expectError(
      await call('POST', '/api/admin/strategies', { token: viewer, body: { name: 'by-viewer', parameters: [] } }),
      403,
      'NoAccessError',
    );
    expect(await maxEventId()).toBe(before);
    expect(await count("SELECT count(*) AS n FROM strategies WHERE name IN ('no-params', 'p-no-type', 'by-viewer')")).toBe(0);
  });
});

describe('PUT /api/admin/strategies/:name', () => {
  it('replaces title, description and parameters of a custom strategy, with strategy-updated', async () => {
    const name = unique('edit');
    await define(name);
    const before = await maxEventId();
    const response = await call('PUT', `/api/admin/strategies/${name}`, {
      body: { name: 'ignored', title: 'T', description: 'd2', parameters: [] },
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(await bodyOf(await call('GET', `/api/admin/strategies/${name}`))).toMatchObject({
      name,
      title: 'T',
      description: 'd2',
      parameters: [],
    });
    expect((await eventsSince(before)).map((event) => [event.type, parsedEvent(event)!.data])).toEqual([
      ['strategy-updated', { name, title: 'T', description: 'd2', parameters: [], editable: true, deprecated: false }],
    ]);
  });

  it('refuses a built-in (400), an unknown one (404) and a viewer (403), writing nothing', async () => {
    const name = unique('edit-bad');
    await define(name);
    const before = await maxEventId();
    const builtIn = await expectError(
      await call('PUT', '/api/admin/strategies/default', { body: { name: 'default', parameters: [] } }),
      400,
      'ValidationError',
    );
    expect(builtIn.details[0]!.message).toBe('Cannot edit strategy default');
    const missing = await expectError(
      await call('PUT', '/api/admin/strategies/no-such', { body: { parameters: [] } }),
      404,
      'NotFoundError',
    );
    expect(missing.message).toBe('No strategy found');
    await expectError(
      await call('PUT', `/api/admin/strategies/${name}`, { token: viewer, body: { parameters: [] } }),
      403,
      'NoAccessError',
    );
    expect(await maxEventId()).toBe(before);
    expect((await bodyOf(await call('GET', `/api/admin/strategies/${name}`))).parameters).toEqual(PARAMETERS);
  });
});

describe('DELETE /api/admin/strategies/:name', () => {
  it('deletes a custom strategy with strategy-deleted', async () => {
    const name = unique('gone');
    await define(name);
    const before = await maxEventId();
    expect((await call('DELETE', `/api/admin/strategies/${name}`)).status).toBe(200);
    expect((await call('GET', `/api/admin/strategies/${name}`)).status).toBe(404);
    expect((await eventsSince(before)).map((event) => [event.type, parsedEvent(event)!.data])).toEqual([['strategy-deleted', { name }]]);
  });

  it('refuses a built-in (400), an unknown one (404) and a viewer (403)', async () => {
    const name = unique('stay');
    await define(name);
    const before = await maxEventId();
    await expectError(await call('DELETE', '/api/admin/strategies/flexibleRollout'), 400, 'ValidationError');
    await expectError(await call('DELETE', '/api/admin/strategies/no-such'), 404, 'NotFoundError');
    await expectError(await call('DELETE', `/api/admin/strategies/${name}`, { token: viewer }), 403, 'NoAccessError');
    expect(await maxEventId()).toBe(before);
    expect(await count('SELECT count(*) AS n FROM strategies WHERE name = ?', name)).toBe(1);
  });
});

describe('POST /api/admin/strategies/:strategyName/deprecate', () => {
  it('deprecates custom and built-in strategies alike, with strategy-deprecated', async () => {
    const name = unique('old');
    await define(name);
    const before = await maxEventId();
    expect((await call('POST', `/api/admin/strategies/${name}/deprecate`)).status).toBe(200);
    expect((await call('POST', '/api/admin/strategies/applicationHostname/deprecate')).status).toBe(200);
    expect((await bodyOf(await call('GET', `/api/admin/strategies/${name}`))).deprecated).toBe(true);
    expect((await bodyOf(await call('GET', '/api/admin/strategies/applicationHostname'))).deprecated).toBe(true);
    expect((await eventsSince(before)).map((event) => [event.type, parsedEvent(event)!.data])).toEqual([
      ['strategy-deprecated', { name }],
      ['strategy-deprecated', { name: 'applicationHostname' }],
    ]);
    expect((await call('POST', '/api/admin/strategies/applicationHostname/reactivate')).status).toBe(200);
  });

  it('refuses an unknown strategy (404, Unleash’s message) and a viewer (403)', async () => {
    const missing = await expectError(await call('POST', '/api/admin/strategies/no-such/deprecate'), 404, 'NotFoundError');
    expect(missing.message).toBe('Could not find strategy with name no-such');
    const before = await maxEventId();
    await expectError(await call('POST', '/api/admin/strategies/default/deprecate', { token: viewer }), 403, 'NoAccessError');
    expect(await maxEventId()).toBe(before);
    expect((await bodyOf(await call('GET', '/api/admin/strategies/default'))).deprecated).toBe(false);
  });
});

describe('POST /api/admin/strategies/:strategyName/reactivate', () => {
  it('takes a strategy out of deprecation, with strategy-reactivated', async () => {
    const name = unique('back');
    await define(name);
    await call('POST', `/api/admin/strategies/${name}/deprecate`);
    const before = await maxEventId();
    expect((await call('POST', `/api/admin/strategies/${name}/reactivate`)).status).toBe(200);
    expect((await bodyOf(await call('GET', `/api/admin/strategies/${name}`))).deprecated).toBe(false);
    expect((await eventsSince(before)).map((event) => [event.type, parsedEvent(event)!.data])).toEqual([
      ['strategy-reactivated', { name }],
    ]);
  });

  it('refuses an unknown strategy (404) and a viewer (403)', async () => {
    const missing = await expectError(await call('POST', '/api/admin/strategies/no-such/reactivate'), 404, 'NotFoundError');
    expect(missing.message).toBe('No strategy found');
    await expectError(await call('POST', '/api/admin/strategies/default/reactivate', { token: viewer }), 403, 'NoAccessError');
  });
});

describe('a custom strategy on a flag', () => {
  it('can be added to a flag and is served to SDKs with its parameters', async () => {
    const name = unique('tenantStrategy');
    const flag = unique('custom-flag');
    await define(name);
    expect((await call('POST', '/api/admin/projects/default/features', { body: { name: flag } })).status).toBe(201);
    const added = await call('POST', `/api/admin/projects/default/features/${flag}/environments/development/strategies`, {
      body: { name, parameters: { tenant: 'acme' } },
    });
    expect(added.status).toBe(200);
    await call('POST', `/api/admin/projects/default/features/${flag}/environments/development/on`);
    const token = await createToken({ tokenName: unique('custom-sdk'), type: 'client', environment: 'development' });
    const served = await bodyOf(await call('GET', '/api/client/features', { token }));
    const feature = served.features.find((f: { name: string }) => f.name === flag);
    expect(feature.enabled).toBe(true);
    expect(feature.strategies).toEqual([expect.objectContaining({ name, parameters: { tenant: 'acme' } })]);
  });
});
