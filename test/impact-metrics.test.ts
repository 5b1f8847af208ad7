/**
 * Unleash 8's impact metrics and the frontend API's client registration, with the 8.2.0
 * oracle's answers (recorded 2026-11-29): impact metrics are taken on `/api/client/metrics`,
 * `/api/client/metrics/bulk` and `/api/frontend/client/metrics`; only the bulk post checks
 * them (400 with the path of the bad part), the others accept anything there, as 8.2.0
 * drops what its check refuses. `/api/frontend/client/register` checks its body as an SDK
 * registration (400 `BadDataError`, as 6.10.1 and 8.2.0) and keeps nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { count } from './support/db';
import { call, createToken, expectError } from './support/http';
import { settleMetrics } from './support/metrics';
import { unique } from './support/names';

let clientToken: string;
let frontendToken: string;

beforeAll(async () => {
  clientToken = await createToken({ tokenName: unique('impact-client'), type: 'client', environment: 'development' });
  frontendToken = await createToken({ tokenName: unique('impact-frontend'), type: 'frontend', environment: 'development' });
});

const IMPACT = [
  { name: 'checkout_clicks', help: 'Clicks', type: 'counter', samples: [{ value: 3, labels: { appName: 'shop', tier: 2 } }] },
  { name: 'queue-depth', help: 'Depth', type: 'gauge', samples: [{ value: 7 }] },
  {
    name: 'latency',
    help: 'Latency',
    type: 'histogram',
    samples: [
      {
        count: 3,
        sum: 1.5,
        buckets: [
          { le: 0.5, count: 2 },
          { le: '+Inf', count: 3 },
        ],
      },
    ],
  },
];

async function footprint() {
  return {
    instances: await count('SELECT count(*) AS n FROM client_instances'),
    usage: await count('SELECT count(*) AS n FROM client_metrics_env'),
  };
}

describe('impact metrics (Unleash 8)', () => {
  it('are accepted in bulk metrics (202), beside the counts', async () => {
    const app = unique('impact-bulk-app');
    const response = await call('POST', '/api/client/metrics/bulk', {
      token: clientToken,
      body: { applications: [{ appName: app, environment: 'development', instanceId: 'i1' }], metrics: [], impactMetrics: IMPACT },
    });
    expect(response.status).toBe(202);
    await settleMetrics();
    expect(await count('SELECT count(*) AS n FROM client_instances WHERE app_name = ?', app)).toBe(1);
  });

  it('are accepted on the SDK and frontend metrics posts, even where 8.2.0 would drop them', async () => {
    for (const impactMetrics of [IMPACT, [{ name: 'no_help' }], 'x']) {
      const sdk = await call('POST', '/api/client/metrics', { token: clientToken, body: { appName: unique('impact-sdk'), impactMetrics } });
      expect(sdk.status).toBe(202);
      const frontend = await call('POST', '/api/frontend/client/metrics', {
        token: frontendToken,
        body: { appName: 'impact-fe', impactMetrics },
      });
      expect(frontend.status).toBe(200);
      expect(await frontend.text()).toBe('OK');
    }
  });

  it('400 in bulk metrics for what 8.2.0 refuses there, with nothing written', async () => {
    const refused: [unknown, string, string][] = [
      [{ a: 1 }, '/body/impactMetrics', 'The `/body/impactMetrics` property must be array. You sent {"a":1}.'],
      [
        [{ name: 'x' }],
        '/body/impactMetrics/0/type',
        'The `/body/impactMetrics/0/type` property is required. It was not present on the data you sent.',
      ],
      [[{ name: 'x', help: 'h', type: 'summary', samples: [{ value: 1 }] }], '/body/impactMetrics/0/type', ''],
      [[{ name: 'x', type: 'counter', samples: [{ value: 1 }] }], '/body/impactMetrics/0/help', ''],
      [[{ name: 'x', help: 'h', type: 'gauge', samples: [{ value: 'high' }] }], '/body/impactMetrics/0/samples/0/value', ''],
      [[{ name: 'x', help: 'h', type: 'histogram', samples: [{ value: 1 }] }], '/body/impactMetrics/0/samples/0/count', ''],
      [
        [{ name: 'x', help: 'h', type: 'histogram', samples: [{ count: 1, sum: 1, buckets: [{ le: 'inf', count: 1 }] }] }],
        '/body/impactMetrics/0/samples/0/buckets/0/le',
        '',
      ],
    ];
    for (const [impactMetrics, path, message] of refused) {
      const app = unique('impact-refused');
      await settleMetrics();
      const before = await footprint();
      const response = await call('POST', '/api/client/metrics/bulk', {
        token: clientToken,
        body: { applications: [{ appName: app, environment: 'development' }], metrics: [], impactMetrics },
      });
      const error = await expectError(response, 400, 'ValidationError');
      expect(error.details[0]?.path).toBe(path);
      if (message !== '') expect(error.details[0]?.message).toBe(message);
      await settleMetrics();
      expect(await footprint()).toEqual(before);
    }
  });
});

describe('frontend API client registration', () => {
  const registration = { appName: 'impact-fe', interval: 10, started: '2026-01-01T00:00:00Z', strategies: [] };

  it('200 "OK" for a registration, as 8.2.0 (which keeps nothing)', async () => {
    const before = await footprint();
    const response = await call('POST', '/api/frontend/client/register', { token: frontendToken, body: registration });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('OK');
    expect(await footprint()).toEqual(before);
  });

  it("400 BadDataError for a body that is no registration, in 8.2.0's words", async () => {
    const cases: [unknown, string, string][] = [
      [{}, '/body/appName', 'The `/body/appName` property is required. It was not present on the data you sent.'],
      [[], '/body', 'The `/body` property must be object. You sent [].'],
      [{ ...registration, interval: 'x' }, '/body/interval', 'The `/body/interval` property must be number. You sent "x".'],
    ];
    for (const [body, path, message] of cases) {
      const error = await expectError(
        await call('POST', '/api/frontend/client/register', { token: frontendToken, body }),
        400,
        'BadDataError',
      );
      expect(error.message).toBe(
        'Request validation failed: your request body or params contain invalid data. Refer to the `details` list for more information.',
      );
      expect(error.details[0]).toEqual({ path, message });
    }
  });

  it('401 without a key and 403 with a client key, as the frontend API answers', async () => {
    expect((await call('POST', '/api/frontend/client/register', { token: null, body: registration })).status).toBe(401);
    expect((await call('POST', '/api/frontend/client/register', { token: clientToken, body: registration })).status).toBe(403);
  });
});
