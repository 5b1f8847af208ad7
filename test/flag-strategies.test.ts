/** Strategies on a flag: changed with a JSON Patch, and reordered as the UI's drag and drop does. */
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { signInAs } from './support/users';
import { maxEventId } from './support/import';
import { rows } from './support/db';
import { unique } from './support/names';

const P = '/api/admin/projects/default/features';
let viewer: string;

async function flagWithStrategies(count: number) {
  const flag = unique('fs');
  expect((await call('POST', P, { body: { name: flag } })).status).toBe(201);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await call('POST', `${P}/${flag}/environments/development/strategies`, {
      body: { name: 'flexibleRollout', title: `s${i}`, parameters: { rollout: '50', stickiness: 'default', groupId: flag } },
    });
    expect(response.status).toBe(200);
    ids.push((await bodyOf(response)).id);
  }
  return { flag, ids };
}

async function order(flag: string): Promise<string[]> {
  return (await bodyOf(await call('GET', `${P}/${flag}/environments/development/strategies`))).map((s: { id: string }) => s.id);
}

beforeAll(async () => {
  viewer = await signInAs('Viewer');
});

describe('PATCH …/environments/:environment/strategies/:strategyId', () => {
  it('applies the patch to the strategy and answers it, with feature-strategy-update', async () => {
    const { flag, ids } = await flagWithStrategies(1);
    const before = await maxEventId();
    const response = await call('PATCH', `${P}/${flag}/environments/development/strategies/${ids[0]}`, {
      body: [
        { op: 'replace', path: '/parameters/rollout', value: '75' },
        { op: 'replace', path: '/title', value: 'patched' },
        { op: 'add', path: '/constraints/-', value: { contextName: 'userId', operator: 'IN', values: ['1'] } },
      ],
    });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body).toMatchObject({
      id: ids[0],
      name: 'flexibleRollout',
      title: 'patched',
      parameters: { rollout: '75', stickiness: 'default', groupId: flag },
    });
    expect(body.constraints).toEqual([expect.objectContaining({ contextName: 'userId', operator: 'IN', values: ['1'] })]);
    const events = await rows<{ type: string }>('SELECT type FROM events WHERE id > ? ORDER BY id', before);
    expect(events.map((event) => event.type)).toEqual(['feature-strategy-update']);
  });

  it('refuses a patch that fails or leaves an invalid strategy (400), an unknown strategy (404) and a viewer (403), writing nothing', async () => {
    const { flag, ids } = await flagWithStrategies(1);
    const path = `${P}/${flag}/environments/development/strategies/${ids[0]}`;
    const before = await maxEventId();
    const failed = await expectError(
      await call('PATCH', path, { body: [{ op: 'test', path: '/title', value: 'nope' }] }),
      400,
      'BadDataError',
    );
    expect(failed.message).toContain('Could not apply provided patch');
    await expectError(await call('PATCH', path, { body: [{ op: 'remove', path: '/name' }] }), 400, 'BadDataError');
    await expectError(
      await call('PATCH', `${P}/${flag}/environments/development/strategies/no-such-id`, { body: [] }),
      404,
      'NotFoundError',
    );
    await expectError(
      await call('PATCH', path, { token: viewer, body: [{ op: 'replace', path: '/title', value: 'v' }] }),
      403,
      'NoAccessError',
    );
    expect(await maxEventId()).toBe(before);
    expect((await bodyOf(await call('GET', path))).title).toBe('s0');
  });
});

describe('POST …/environments/:environment/strategies/set-sort-order', () => {
  it('reorders the strategies, with strategy-order-changed naming both orders', async () => {
    const { flag, ids } = await flagWithStrategies(2);
    expect(await order(flag)).toEqual(ids);
    const before = await maxEventId();
    const response = await call('POST', `${P}/${flag}/environments/development/strategies/set-sort-order`, {
      body: [
        { id: ids[1], sortOrder: 0 },
        { id: ids[0], sortOrder: 1 },
      ],
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(await order(flag)).toEqual([ids[1], ids[0]]);
    const events = await rows<{ type: string; data: string; pre_data: string }>(
      'SELECT type, data, pre_data FROM events WHERE id > ? ORDER BY id',
      before,
    );
    expect(events.map((event) => [event.type, JSON.parse(event.pre_data), JSON.parse(event.data)])).toEqual([
      ['strategy-order-changed', { strategyIds: ids }, { strategyIds: [ids[1], ids[0]] }],
    ]);
  });

  it('refuses another flag’s strategy or a bad body (400) and a viewer (403), writing nothing', async () => {
    const { flag, ids } = await flagWithStrategies(2);
    const other = await flagWithStrategies(1);
    const path = `${P}/${flag}/environments/development/strategies/set-sort-order`;
    const before = await maxEventId();
    await expectError(await call('POST', path, { body: [{ id: other.ids[0], sortOrder: 0 }] }), 400, 'BadDataError');
    await expectError(await call('POST', path, { body: [{ id: ids[0] }] }), 400, 'BadDataError');
    await expectError(await call('POST', path, { token: viewer, body: [{ id: ids[1], sortOrder: 0 }] }), 403, 'NoAccessError');
    await expectError(
      await call('POST', `${P}/no-such-flag/environments/development/strategies/set-sort-order`, { body: [] }),
      404,
      'NotFoundError',
    );
    expect(await maxEventId()).toBe(before);
    expect(await order(flag)).toEqual(ids);
  });
});

describe('GET /api/admin/projects/:projectId/features/:featureName/environments/:environment', () => {
  it('answers the environment with its strategies in Unleash’s shape and key order', async () => {
    const { flag, ids } = await flagWithStrategies(1);
    const response = await call('GET', `${P}/${flag}/environments/development`);
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['name', 'environment', 'enabled', 'strategies']);
    expect(body).toMatchObject({ name: flag, environment: 'development', enabled: false });
    expect(body.strategies).toHaveLength(1);
    expect(Object.keys(body.strategies[0])).toEqual([
      'id',
      'featureName',
      'title',
      'parameters',
      'constraints',
      'variants',
      'sortOrder',
      'disabled',
      'name',
    ]);
    expect(body.strategies[0]).toMatchObject({ id: ids[0], featureName: flag, name: 'flexibleRollout', title: 's0' });
  });

  it('answers 404 with Unleash’s message for an unknown environment or flag, and 401 without a credential', async () => {
    const { flag } = await flagWithStrategies(0);
    const missing = await expectError(await call('GET', `${P}/${flag}/environments/nowhere`), 404, 'NotFoundError');
    expect(missing.message).toBe(`Could not find ${flag} in nowhere`);
    await expectError(await call('GET', `${P}/no-such-flag/environments/development`), 404, 'NotFoundError');
    await expectError(await call('GET', `${P}/${flag}/environments/development`, { token: null }), 401, 'AuthenticationRequired');
  });
});
