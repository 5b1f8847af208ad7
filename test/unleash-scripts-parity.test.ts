/**
 * Unleash's answers where admin scripts and SDKs meet them (issue 44), each measured on the
 * oracles (6.10.1 on :4243, 8.2.0 on :4242) with the same request: SDK metrics with epoch
 * millisecond timestamps, constraint values, the segment limits, revive, a deleted flag's name.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { count, rows } from './support/db';
import { bodyOf, call, createToken, expectError } from './support/http';
import { settleMetrics } from './support/metrics';
import { unique } from './support/names';

const P = '/api/admin/projects/default/features';
const PREFIX = 'Request validation failed: your request body or params contain invalid data';
let clientToken: string;

beforeAll(async () => {
  clientToken = await createToken({ tokenName: unique('scripts-client'), type: 'client', environment: 'development' });
});

async function createFlag(name: string): Promise<void> {
  expect((await call('POST', P, { body: { name } })).status).toBe(201);
}

async function cells(appName: string) {
  return rows<{ feature_name: string; timestamp: string; yes: number; no: number }>(
    'SELECT feature_name, timestamp, yes, no FROM client_metrics_env WHERE app_name = ? ORDER BY feature_name',
    appName,
  );
}

describe('SDK metrics with epoch-millisecond timestamps (6.10.1 and 8.2.0: 202)', () => {
  it('accepts a bucket whose start and stop are epoch milliseconds and counts it in the hour they name', async () => {
    await createFlag('ms-flag');
    const start = Date.UTC(2026, 10, 20, 10, 15);
    const response = await call('POST', '/api/client/metrics', {
      token: clientToken,
      body: { appName: 'ms-app', instanceId: 'i-1', bucket: { start, stop: start + 60_000, toggles: { 'ms-flag': { yes: 3, no: 1 } } } },
    });
    expect(response.status).toBe(202);
    await settleMetrics();
    expect(await cells('ms-app')).toEqual([{ feature_name: 'ms-flag', timestamp: '2026-11-20T10:00:00.000Z', yes: 3, no: 1 }]);
  });

  it("accepts epoch milliseconds as a bulk metric's timestamp (Edge)", async () => {
    await createFlag('ms-bulk-flag');
    const timestamp = Date.UTC(2026, 10, 21, 7, 45);
    const response = await call('POST', '/api/client/metrics/bulk', {
      token: clientToken,
      body: {
        applications: [],
        metrics: [{ featureName: 'ms-bulk-flag', appName: 'ms-bulk-app', environment: 'development', timestamp, yes: 2, no: 5 }],
      },
    });
    expect(response.status).toBe(202);
    await settleMetrics();
    expect(await cells('ms-bulk-app')).toEqual([{ feature_name: 'ms-bulk-flag', timestamp: '2026-11-21T07:00:00.000Z', yes: 2, no: 5 }]);
  });

  it('still refuses a timestamp that is neither a date-time nor epoch milliseconds, counting nothing', async () => {
    const before = await count('SELECT count(*) AS n FROM client_metrics_env');
    for (const start of [-1, 1.5, 'yesterday', true]) {
      const error = await expectError(
        await call('POST', '/api/client/metrics', {
          token: clientToken,
          body: { appName: 'ms-bad', bucket: { start, stop: '2026-11-20T10:30:00.000Z', toggles: { 'ms-flag': { yes: 1, no: 0 } } } },
        }),
        400,
        'ValidationError',
      );
      expect(error.details.map((detail) => detail.path)).toEqual(['/body/bucket/start']);
    }
    await settleMetrics();
    expect(await count('SELECT count(*) AS n FROM client_metrics_env')).toBe(before);
  });
});

describe('constraint values (6.10.1 and 8.2.0 on strategies, 8.2.0 on segments)', () => {
  const strategies = `${P}/constrained/environments/development/strategies`;
  beforeAll(() => createFlag('constrained'));

  const cases = [
    {
      constraint: { contextName: 'appName', operator: 'SEMVER_EQ', value: '1.2' },
      message: `${PREFIX}: the provided value is not a valid semver format. The value provided was: 1.2`,
      detail: 'the provided value is not a valid semver format. The value provided was: 1.2',
    },
    {
      constraint: { contextName: 'appName', operator: 'SEMVER_GT', value: 'v1.2.3' },
      message: `${PREFIX}: the provided value is not a valid semver format. The value provided was: v1.2.3`,
      detail: 'the provided value is not a valid semver format. The value provided was: v1.2.3',
    },
    {
      constraint: { contextName: 'appName', operator: 'NUM_EQ', value: 'abc' },
      message: `${PREFIX}. Refer to the \`details\` list for more information.`,
      detail: '"value" must be a number. You provided "abc".',
    },
    {
      constraint: { contextName: 'appName', operator: 'DATE_AFTER', value: 'notadate' },
      message: `${PREFIX}. Refer to the \`details\` list for more information.`,
      detail: '"value" must be a valid date. You provided "notadate".',
    },
  ];

  it("refuses a value its operator cannot read, in the oracle's words, on strategies and segments; nothing written", async () => {
    for (const { constraint, message, detail } of cases) {
      const strategiesBefore = await count('SELECT count(*) AS n FROM feature_strategies');
      const segmentsBefore = await count('SELECT count(*) AS n FROM segments');
      const events = await count('SELECT count(*) AS n FROM events');
      for (const response of [
        await call('POST', strategies, { body: { name: 'default', constraints: [constraint] } }),
        await call('POST', '/api/admin/segments', { body: { name: unique('bad-values'), constraints: [constraint] } }),
      ]) {
        const error = await expectError(response, 400, 'BadDataError');
        expect(error.message).toBe(message);
        expect(error.details).toEqual([{ message: detail }]);
      }
      expect(await count('SELECT count(*) AS n FROM feature_strategies')).toBe(strategiesBefore);
      expect(await count('SELECT count(*) AS n FROM segments')).toBe(segmentsBefore);
      expect(await count('SELECT count(*) AS n FROM events')).toBe(events);
    }
  });

  it('refuses them on a strategy update and a segment update too', async () => {
    const strategy = await bodyOf(await call('POST', strategies, { body: { name: 'default' } }));
    const segment = await bodyOf(await call('POST', '/api/admin/segments', { body: { name: unique('seg-upd'), constraints: [] } }));
    const bad = cases[2]!.constraint;
    await expectError(
      await call('PUT', `${strategies}/${strategy.id}`, { body: { name: 'default', constraints: [bad] } }),
      400,
      'BadDataError',
    );
    await expectError(
      await call('PUT', `/api/admin/segments/${segment.id}`, { body: { name: segment.name, constraints: [bad] } }),
      400,
      'BadDataError',
    );
  });

  it('accepts what the oracles accept: numbers as Number reads them, strict semver, date-times', async () => {
    const response = await call('POST', strategies, {
      body: {
        name: 'default',
        constraints: [
          { contextName: 'appName', operator: 'NUM_EQ', value: '1e3' },
          { contextName: 'appName', operator: 'NUM_LT', value: ' -2.5 ' },
          { contextName: 'appName', operator: 'SEMVER_LT', value: '1.2.3-beta.1+build.5' },
          { contextName: 'currentTime', operator: 'DATE_AFTER', value: '2026-01-01T00:00:00.000Z' },
        ],
      },
    });
    expect(response.status).toBe(200);
    const segment = await call('POST', '/api/admin/segments', {
      body: { name: unique('good-values'), constraints: [{ contextName: 'appName', operator: 'SEMVER_GTE', value: '2.0.0' }] },
    });
    expect(segment.status).toBe(201);
  });
});

describe("the segment limits in Unleash's words (6.10.1 and 8.2.0: 400 BadDataError)", () => {
  it('refuses a strategy with more than 5 segments, on create and update, writing nothing', async () => {
    await createFlag('many-segments');
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) {
      const created = await bodyOf(await call('POST', '/api/admin/segments', { body: { name: unique('limit-seg'), constraints: [] } }));
      ids.push(created.id);
    }
    const path = `${P}/many-segments/environments/development/strategies`;
    const before = await count('SELECT count(*) AS n FROM feature_strategy_segment');
    const limit = 'Strategies may not have more than 5 segments';
    const refused = await expectError(await call('POST', path, { body: { name: 'default', segments: ids } }), 400, 'BadDataError');
    expect(refused.message).toBe(`${PREFIX}: ${limit}`);
    expect(refused.details).toEqual([{ message: limit }]);
    expect(await count("SELECT count(*) AS n FROM feature_strategies WHERE feature_name = 'many-segments'")).toBe(0);
    const five = await bodyOf(await call('POST', path, { body: { name: 'default', segments: ids.slice(0, 5) } }));
    expect(five.segments).toEqual(ids.slice(0, 5));
    await expectError(await call('PUT', `${path}/${five.id}`, { body: { name: 'default', segments: ids } }), 400, 'BadDataError');
    expect(await count('SELECT count(*) AS n FROM feature_strategy_segment')).toBe(before + 5);
  });
});

describe('revive (8.2.0)', () => {
  it('revives an archived flag with every environment disabled', async () => {
    await createFlag('revive-on');
    for (const environment of ['development', 'production'])
      expect((await call('POST', `${P}/revive-on/environments/${environment}/on`)).status).toBe(200);
    expect((await call('DELETE', `${P}/revive-on`)).status).toBe(202);
    expect((await call('POST', '/api/admin/archive/revive/revive-on')).status).toBe(200);
    const flag = await bodyOf(await call('GET', `${P}/revive-on`));
    expect(flag.environments.map(({ name, enabled }: { name: string; enabled: boolean }) => [name, enabled])).toEqual([
      ['development', false],
      ['production', false],
    ]);
  });

  it('a bulk revive revives the archived flags and leaves a live one and an unknown name alone (200)', async () => {
    await createFlag('revive-archived');
    await createFlag('revive-live');
    expect((await call('POST', `${P}/revive-live/environments/development/on`)).status).toBe(200);
    expect((await call('DELETE', `${P}/revive-archived`)).status).toBe(202);
    const events = await count("SELECT count(*) AS n FROM events WHERE feature_name = 'revive-live'");
    const response = await call('POST', '/api/admin/projects/default/revive', {
      body: { features: ['revive-archived', 'revive-live', 'revive-nothing'] },
    });
    expect(response.status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM features WHERE name = 'revive-archived' AND archived_at IS NULL")).toBe(1);
    expect(
      await count(
        "SELECT count(*) AS n FROM feature_environments WHERE feature_name = 'revive-live' AND environment = 'development' AND enabled = 1",
      ),
    ).toBe(1);
    expect(await count("SELECT count(*) AS n FROM events WHERE feature_name = 'revive-live'")).toBe(events);
  });
});

describe("a deleted flag's name (6.10.1 and 8.2.0: reusable)", () => {
  it('can be used again once the archived flag is deleted for good', async () => {
    await createFlag('reused-name');
    expect((await call('DELETE', `${P}/reused-name`)).status).toBe(202);
    const taken = await expectError(await call('POST', P, { body: { name: 'reused-name' } }), 409, 'NameExistsError');
    expect(taken.message).toBe('An archived flag with that name already exists');
    expect((await call('DELETE', '/api/admin/archive/reused-name')).status).toBe(200);
    expect((await call('POST', '/api/admin/features/validate', { body: { name: 'reused-name' } })).status).toBe(200);
    await createFlag('reused-name');
  });
});

describe('API tokens made without project or environment (6.10.1)', () => {
  it('get every project (`*`) and the default environment, for client and backend keys', async () => {
    for (const type of ['client', 'backend']) {
      const token = await bodyOf(await call('POST', '/api/admin/api-tokens', { body: { tokenName: unique(`no-scope-${type}`), type } }));
      expect(token).toMatchObject({ type, project: '*', projects: ['*'], environment: 'default' });
      expect(token.secret).toMatch(/^\*:default\./);
    }
  });
});
