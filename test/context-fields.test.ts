import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { signInAs } from './support/users';
import { count, lastEvent, parsedEvent } from './support/db';

const BASE = '/api/admin/context';
let viewer: string;

beforeAll(async () => {
  viewer = await signInAs('Viewer');
});

async function stored(): Promise<string> {
  const fields = await env.DB.prepare('SELECT * FROM context_fields ORDER BY name').all();
  return JSON.stringify(fields.results) + (await count('SELECT count(*) AS n FROM events'));
}

async function createField(body: Record<string, unknown>) {
  const response = await call('POST', BASE, { body });
  expect(response.status, await response.clone().text()).toBe(201);
  return bodyOf(response);
}

async function getField(name: string) {
  return bodyOf(await call('GET', `${BASE}/${name}`));
}

describe('POST /api/admin/context/validate', () => {
  it('answers 200 with no body for a free, URL-friendly name and writes nothing', async () => {
    const before = await stored();
    const response = await call('POST', `${BASE}/validate`, { body: { name: 'tier' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(await stored()).toBe(before);
  });

  it('answers 409 NameExistsError for a taken name', async () => {
    const error = await expectError(await call('POST', `${BASE}/validate`, { body: { name: 'userId' } }), 409, 'NameExistsError');
    expect(error.message).toBe('A context field with that name already exist');
  });

  it('answers 400 for a missing, empty or not URL-friendly name', async () => {
    for (const body of [{}, { name: '' }, { name: 'has space' }, { name: 'x'.repeat(101) }]) {
      await expectError(await call('POST', `${BASE}/validate`, { body }), 400, 'ValidationError');
    }
  });

  it('refuses a caller without UPDATE_CONTEXT_FIELD', async () => {
    await expectError(await call('POST', `${BASE}/validate`, { body: { name: 'tier' }, token: viewer }), 403, 'NoAccessError');
  });
});

describe('POST /api/admin/context', () => {
  it('creates the field and answers 201 with its shape, key order and location, recording the event', async () => {
    const response = await call('POST', BASE, {
      body: {
        name: 'tier',
        description: 'Plan',
        stickiness: true,
        sortOrder: 4,
        legalValues: [{ value: 'gold' }, { value: 'free', description: 'No plan' }],
      },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe('context/tier');
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['name', 'description', 'stickiness', 'sortOrder', 'legalValues', 'createdAt']);
    expect(body).toMatchObject({
      name: 'tier',
      description: 'Plan',
      stickiness: true,
      sortOrder: 4,
      legalValues: [{ value: 'gold' }, { value: 'free', description: 'No plan' }],
    });
    expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt);
    expect(await getField('tier')).toEqual(body);
    expect(parsedEvent(await lastEvent('context-field-created'))).toMatchObject({
      data: {
        name: 'tier',
        description: 'Plan',
        stickiness: true,
        legalValues: [{ value: 'gold' }, { value: 'free', description: 'No plan' }],
      },
    });
    const listed = await bodyOf(await call('GET', BASE));
    expect(listed.map((field: { name: string }) => field.name)).toContain('tier');
  });

  it('defaults what the body leaves out', async () => {
    const body = await createField({ name: 'bare' });
    expect(body).toMatchObject({ name: 'bare', description: null, stickiness: false, sortOrder: 0, legalValues: [] });
  });

  it('answers 409 for a taken name and writes nothing', async () => {
    await createField({ name: 'taken' });
    const before = await stored();
    await expectError(await call('POST', BASE, { body: { name: 'taken' } }), 409, 'NameExistsError');
    expect(await stored()).toBe(before);
  });

  it('answers 400 for a bad name, duplicate or empty legal values, a long description, and writes nothing', async () => {
    const before = await stored();
    const bad = [
      { name: 'a b' },
      { description: 'no name' },
      { name: 'dup', legalValues: [{ value: 'a' }, { value: 'a' }] },
      { name: 'empty', legalValues: [{ value: '' }] },
      { name: 'long', description: 'x'.repeat(251) },
      { name: 'sticky', stickiness: 'yes' },
    ];
    for (const body of bad) {
      await expectError(await call('POST', BASE, { body }), 400, 'ValidationError');
    }
    const error = await expectError(
      await call('POST', BASE, { body: { name: 'dup', legalValues: [{ value: 'a' }, { value: 'a' }] } }),
      400,
      'ValidationError',
    );
    expect(error.details).toEqual([{ path: '/body/legalValues/1', message: '"legalValues[1]" contains a duplicate value: "a".' }]);
    expect(await stored()).toBe(before);
  });

  it('refuses a caller without CREATE_CONTEXT_FIELD and writes nothing', async () => {
    const before = await stored();
    await expectError(await call('POST', BASE, { body: { name: 'nope' }, token: viewer }), 403, 'NoAccessError');
    await expectError(await call('POST', BASE, { body: { name: 'nope' }, token: null }), 401, 'AuthenticationRequired');
    expect(await stored()).toBe(before);
  });
});

describe('PUT /api/admin/context/:name', () => {
  it('replaces the definition (not the name), answers 200 with no body and records the event', async () => {
    await createField({ name: 'plan', description: 'Old', stickiness: true, sortOrder: 2, legalValues: [{ value: 'a' }] });
    const response = await call('PUT', `${BASE}/plan`, { body: { name: 'renamed', description: 'New', legalValues: [{ value: 'b' }] } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(await getField('plan')).toMatchObject({
      name: 'plan',
      description: 'New',
      stickiness: false,
      sortOrder: 2,
      legalValues: [{ value: 'b' }],
    });
    expect((await call('GET', `${BASE}/renamed`)).status).toBe(404);
    expect(parsedEvent(await lastEvent('context-field-updated'))).toMatchObject({
      preData: { name: 'plan', description: 'Old', stickiness: true, legalValues: [{ value: 'a' }] },
      data: { name: 'plan', description: 'New', stickiness: false, legalValues: [{ value: 'b' }] },
    });
  });

  it('keeps the description when the body leaves it out, as Unleash does', async () => {
    await createField({ name: 'keepdesc', description: 'Kept', legalValues: [{ value: 'a' }] });
    expect((await call('PUT', `${BASE}/keepdesc`, { body: {} })).status).toBe(200);
    expect(await getField('keepdesc')).toMatchObject({ description: 'Kept', legalValues: [] });
  });

  it('answers 404 for an unknown field, 400 for bad input, 403 without the permission, writing nothing', async () => {
    await createField({ name: 'guarded' });
    const before = await stored();
    const missing = await expectError(await call('PUT', `${BASE}/nosuch`, { body: {} }), 404, 'NotFoundError');
    expect(missing.message).toBe('Could not find Context field with name nosuch');
    await expectError(
      await call('PUT', `${BASE}/guarded`, { body: { legalValues: [{ value: 'a' }, { value: 'a' }] } }),
      400,
      'ValidationError',
    );
    await expectError(await call('PUT', `${BASE}/guarded`, { body: { stickiness: 1 } }), 400, 'ValidationError');
    await expectError(await call('PUT', `${BASE}/guarded`, { body: {}, token: viewer }), 403, 'NoAccessError');
    expect(await stored()).toBe(before);
  });
});

describe('POST /api/admin/context/:name/legal-values', () => {
  it('adds a value, or replaces the one with the same value, recording the event', async () => {
    await createField({ name: 'region', legalValues: [{ value: 'eu' }] });
    expect((await call('POST', `${BASE}/region/legal-values`, { body: { value: 'us', description: 'America' } })).status).toBe(200);
    expect((await getField('region')).legalValues).toEqual([{ value: 'eu' }, { value: 'us', description: 'America' }]);
    const response = await call('POST', `${BASE}/region/legal-values`, { body: { value: 'eu', description: 'Europe' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect((await getField('region')).legalValues).toEqual([
      { value: 'eu', description: 'Europe' },
      { value: 'us', description: 'America' },
    ]);
    expect(parsedEvent(await lastEvent('context-field-updated'))).toMatchObject({
      preData: { name: 'region', legalValues: [{ value: 'eu' }, { value: 'us', description: 'America' }] },
      data: {
        name: 'region',
        legalValues: [
          { value: 'eu', description: 'Europe' },
          { value: 'us', description: 'America' },
        ],
      },
    });
  });

  it('answers 404, 400 and 403 without writing', async () => {
    await createField({ name: 'zone' });
    const before = await stored();
    const missing = await expectError(await call('POST', `${BASE}/nosuch/legal-values`, { body: { value: 'x' } }), 404, 'NotFoundError');
    expect(missing.message).toBe('Could not find Context field with name nosuch');
    const error = await expectError(
      await call('POST', `${BASE}/zone/legal-values`, { body: { description: 'x' } }),
      400,
      'ValidationError',
    );
    expect(error.details[0]!.path).toBe('/body/value');
    await expectError(await call('POST', `${BASE}/zone/legal-values`, { body: { value: 'x'.repeat(101) } }), 400, 'ValidationError');
    await expectError(await call('POST', `${BASE}/zone/legal-values`, { body: { value: 'x' }, token: viewer }), 403, 'NoAccessError');
    expect(await stored()).toBe(before);
  });
});

describe('DELETE /api/admin/context/:name/legal-values/:legalValue', () => {
  it('removes the value (percent-decoded) and records the event; an absent value answers 200 too', async () => {
    await createField({ name: 'city', legalValues: [{ value: 'Oslo' }, { value: 'São Paulo' }] });
    const response = await call('DELETE', `${BASE}/city/legal-values/${encodeURIComponent('São Paulo')}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect((await getField('city')).legalValues).toEqual([{ value: 'Oslo' }]);
    expect(parsedEvent(await lastEvent('context-field-updated'))).toMatchObject({
      preData: { legalValues: [{ value: 'Oslo' }, { value: 'São Paulo' }] },
      data: { legalValues: [{ value: 'Oslo' }] },
    });
    expect((await call('DELETE', `${BASE}/city/legal-values/Bergen`)).status).toBe(200);
  });

  it('answers 404 for an unknown field and 403 without the permission, writing nothing', async () => {
    await createField({ name: 'town', legalValues: [{ value: 'a' }] });
    const before = await stored();
    await expectError(await call('DELETE', `${BASE}/nosuch/legal-values/a`), 404, 'NotFoundError');
    await expectError(await call('DELETE', `${BASE}/town/legal-values/a`, { token: viewer }), 403, 'NoAccessError');
    expect(await stored()).toBe(before);
  });
});

describe('GET /api/admin/context/:name/strategies', () => {
  it('lists the strategies constraining on the field, and none for an unused or unknown one', async () => {
    await createField({ name: 'country' });
    expect((await call('POST', '/api/admin/projects/default/features', { body: { name: 'by-country' } })).status).toBe(201);
    const strategy = await bodyOf(
      await call('POST', '/api/admin/projects/default/features/by-country/environments/development/strategies', {
        body: { name: 'default', constraints: [{ contextName: 'country', operator: 'IN', values: ['NO'] }] },
      }),
    );
    const response = await call('GET', `${BASE}/country/strategies`, { token: viewer });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body).toEqual({
      strategies: [
        { id: strategy.id, projectId: 'default', featureName: 'by-country', strategyName: 'default', environment: 'development' },
      ],
    });
    expect(Object.keys(body.strategies[0])).toEqual(['id', 'projectId', 'featureName', 'strategyName', 'environment']);
    expect(await bodyOf(await call('GET', `${BASE}/nosuch/strategies`))).toEqual({ strategies: [] });
  });
});

describe('DELETE /api/admin/context/:name', () => {
  it('refuses a field that an active flag uses (409, as 8.2.0), writing nothing; once the flag is archived, its usage is empty and the field is deleted (200, no body, its event); the constraints stay', async () => {
    await createField({ name: 'device', description: 'Kind', legalValues: [{ value: 'phone' }] });
    expect((await call('POST', '/api/admin/projects/default/features', { body: { name: 'by-device' } })).status).toBe(201);
    await call('POST', '/api/admin/projects/default/features/by-device/environments/development/strategies', {
      body: { name: 'default', constraints: [{ contextName: 'device', operator: 'IN', values: ['phone'] }] },
    });
    const before = await stored();
    const inUse = await expectError(await call('DELETE', `${BASE}/device`), 409, 'ConflictError');
    expect(inUse.message).toBe('This context field is in use by existing flags. To delete it, first remove its usage from all flags.');
    expect(inUse.details).toEqual([{ message: inUse.message }]);
    expect(await stored()).toBe(before);
    expect((await call('DELETE', '/api/admin/projects/default/features/by-device')).status).toBe(202);
    expect(await bodyOf(await call('GET', `${BASE}/device/strategies`))).toEqual({ strategies: [] });
    const response = await call('DELETE', `${BASE}/device`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect((await call('GET', `${BASE}/device`)).status).toBe(404);
    expect(parsedEvent(await lastEvent('context-field-deleted'))).toMatchObject({
      data: null,
      preData: { name: 'device', description: 'Kind', legalValues: [{ value: 'phone' }], stickiness: false },
    });
    expect(
      await count(`SELECT count(*) AS n FROM feature_strategies WHERE feature_name = 'by-device' AND constraints LIKE '%device%'`),
    ).toBe(1);
  });

  it('answers 404 for an unknown field and 403 without the permission, writing nothing', async () => {
    await createField({ name: 'kept' });
    const before = await stored();
    const error = await expectError(await call('DELETE', `${BASE}/nosuch`), 404, 'NotFoundError');
    expect(error.message).toBe('Could not find Context field with name nosuch');
    await expectError(await call('DELETE', `${BASE}/kept`, { token: viewer }), 403, 'NoAccessError');
    expect(await stored()).toBe(before);
  });
});
