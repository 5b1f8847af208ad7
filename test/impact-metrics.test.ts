/**
 * Unleash 8's impact metrics and the frontend API's client registration, with the 8.2.0
 * oracle's answers (recorded 2026-11-29): impact metrics are taken on `/api/client/metrics`,
 * `/api/client/metrics/bulk` and `/api/frontend/client/metrics`; only the bulk post checks
 * them (400 with the path of the bad part), the others accept anything there, as 8.2.0
 * drops what its check refuses. What is kept is served at `GET /internal-backstage/impact/metrics`
 * in the Prometheus text 8.2.0 prints (test/fixtures/impact-metrics-8.2.0.json, recorded by
 * scripts/parity/impact-metrics.mjs). `/api/frontend/client/register` checks its body as an SDK
 * registration (400 `BadDataError`, as 6.10.1 and 8.2.0) and keeps nothing.
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { expireImpactMetrics, runScheduledJobs } from '../src/scheduled';
import recorded from './fixtures/impact-metrics-8.2.0.json';
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
    impact: await count('SELECT count(*) AS n FROM impact_metrics'),
    series: await count('SELECT count(*) AS n FROM impact_metric_series'),
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

let serial = 0;
/** A metric name prefix of this run and test (impact metric names keep `[a-zA-Z0-9_]` only). */
const prefixOf = () => `impact_${Date.now().toString(36)}_${++serial}_`;

async function impactText(): Promise<Response> {
  return call('GET', '/internal-backstage/impact/metrics', { token: null });
}

/** The blocks of the served text about metrics under `prefix`, the prefix put back to `PREFIX_`. */
async function served(prefix: string): Promise<string> {
  await settleMetrics();
  const text = await (await impactText()).text();
  const blocks = text.split('\n\n').filter((block) => block.includes(prefix));
  return blocks
    .map((block) => (block.endsWith('\n') ? block : `${block}\n`))
    .join('\n')
    .replaceAll(prefix, 'PREFIX_');
}

const sdkPost = (impactMetrics: unknown) =>
  call('POST', '/api/client/metrics', { token: clientToken, body: { appName: 'impact-app', impactMetrics } });

describe('impact metrics stored and served as 8.2.0 serves them', () => {
  it("the oracle's text for the same posts, through SDK, bulk and frontend metrics", async () => {
    const prefix = prefixOf();
    const keys = { backend: clientToken, frontend: frontendToken };
    const statuses: number[] = [];
    for (const post of recorded.posts) {
      const body = JSON.parse(JSON.stringify(post.body).replaceAll('PREFIX_', prefix)) as unknown;
      const response = await call('POST', post.path, { token: keys[post.key as keyof typeof keys], body });
      statuses.push(response.status);
      // One flush per post, as the oracle took them one by one (a batch merges them the same way).
      await settleMetrics();
    }
    expect(statuses).toEqual(recorded.statuses);
    const response = await impactText();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await served(prefix)).toBe(recorded.text);
  });

  it('the same text when the posts reach the consumer in one batch', async () => {
    const prefix = prefixOf();
    const keys = { backend: clientToken, frontend: frontendToken };
    await Promise.all(
      recorded.posts.map((post) =>
        call('POST', post.path, {
          token: keys[post.key as keyof typeof keys],
          body: JSON.parse(JSON.stringify(post.body).replaceAll('PREFIX_', prefix)) as unknown,
        }),
      ),
    );
    const text = await served(prefix);
    // Posts sent at once may be counted in any order: the same metrics and values, whatever the order.
    const lines = (t: string) =>
      t
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('# HELP'))
        .sort();
    expect(lines(text)).toEqual(lines(recorded.text));
  });

  it('counters add up, a gauge keeps its last value, histograms add count, sum and buckets', async () => {
    const p = prefixOf();
    const histogram = (sum: number, below: number, total: number) => ({
      name: `${p}h`,
      help: 'H',
      type: 'histogram',
      samples: [
        {
          count: total,
          sum,
          buckets: [
            { le: 1, count: below },
            { le: '+Inf', count: total },
          ],
        },
      ],
    });
    for (const [value, gauge, h] of [
      [1, 10, histogram(0.5, 1, 1)],
      [2, 20, histogram(4, 1, 2)],
      [4, 5, histogram(0.25, 1, 1)],
    ] as const) {
      expect(
        (
          await sdkPost([
            { name: `${p}c`, help: 'C', type: 'counter', samples: [{ value }] },
            { name: `${p}g`, help: 'G', type: 'gauge', samples: [{ value: gauge }] },
            h,
          ])
        ).status,
      ).toBe(202);
      await settleMetrics();
    }
    expect(await served(p)).toBe(
      [
        '# HELP PREFIX_c C\n# TYPE PREFIX_c counter\nPREFIX_c{origin="sdk",metric_type="counter"} 7\n',
        '# HELP PREFIX_g G\n# TYPE PREFIX_g gauge\nPREFIX_g{origin="sdk",metric_type="gauge"} 5\n',
        '# HELP PREFIX_h H\n# TYPE PREFIX_h histogram\n' +
          'PREFIX_h_bucket{metric_type="histogram",origin="sdk",le="1"} 3\nPREFIX_h_bucket{metric_type="histogram",origin="sdk",le="+Inf"} 4\n' +
          'PREFIX_h_sum{metric_type="histogram",origin="sdk"} 4.75\nPREFIX_h_count{metric_type="histogram",origin="sdk"} 4\n',
      ].join('\n'),
    );
  });

  it('where we differ from 8.2.0 on purpose: a type change, new labels, a negative counter, new buckets', async () => {
    const p = prefixOf();
    await sdkPost([
      { name: `${p}c`, help: 'C', type: 'counter', samples: [{ value: 2, labels: { a: 'x' } }] },
      {
        name: `${p}h`,
        help: 'H',
        type: 'histogram',
        samples: [
          {
            count: 1,
            sum: 1,
            buckets: [
              { le: 1, count: 1 },
              { le: '+Inf', count: 1 },
            ],
          },
        ],
      },
    ]);
    await settleMetrics();
    await sdkPost([
      // 8.2.0 refuses the type change and drops the rest of the post: only this metric is left out.
      { name: `${p}c`, help: 'G', type: 'gauge', samples: [{ value: 9 }] },
      // A new label: 8.2.0 starts the metric again and loses its series; ours adds a series.
      {
        name: `${p}c`,
        help: 'C',
        type: 'counter',
        samples: [
          { value: 3, labels: { b: 'y' } },
          { value: -5, labels: { a: 'x' } },
        ],
      },
      // New bucket bounds: the series starts again from these (8.2.0 starts the whole metric again).
      {
        name: `${p}h`,
        help: 'H',
        type: 'histogram',
        samples: [
          {
            count: 2,
            sum: 3,
            buckets: [
              { le: 2, count: 2 },
              { le: '+Inf', count: 2 },
            ],
          },
        ],
      },
      { name: `${p}after`, help: 'A', type: 'gauge', samples: [{ value: 1 }] },
    ]);
    expect(await served(p)).toBe(
      [
        '# HELP PREFIX_c C\n# TYPE PREFIX_c counter\nPREFIX_c{origin="sdk",metric_type="counter",a="x"} 2\nPREFIX_c{origin="sdk",metric_type="counter",b="y"} 3\n',
        '# HELP PREFIX_h H\n# TYPE PREFIX_h histogram\n' +
          'PREFIX_h_bucket{metric_type="histogram",origin="sdk",le="2"} 2\nPREFIX_h_bucket{metric_type="histogram",origin="sdk",le="+Inf"} 2\n' +
          'PREFIX_h_sum{metric_type="histogram",origin="sdk"} 3\nPREFIX_h_count{metric_type="histogram",origin="sdk"} 2\n',
        '# HELP PREFIX_after A\n# TYPE PREFIX_after gauge\nPREFIX_after{origin="sdk",metric_type="gauge"} 1\n',
      ].join('\n'),
    );
  });

  it('labels are limited: a sample with more than 10 labels or a label value over 255 characters is left out', async () => {
    const p = prefixOf();
    const many = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`l${i}`, 'v']));
    const ten = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`l${i}`, 'v']));
    await sdkPost([
      {
        name: `${p}c`,
        help: 'C',
        type: 'counter',
        samples: [
          { value: 1, labels: many },
          { value: 1, labels: { long: 'x'.repeat(256) } },
          { value: 1, labels: ten },
        ],
      },
    ]);
    await settleMetrics();
    const series = await count('SELECT count(*) AS n FROM impact_metric_series WHERE name = ?', `${p}c`);
    expect(series).toBe(1);
  });

  it('a post too large for one Queue message is cut into parts, every sample kept counted once', async () => {
    const p = prefixOf();
    // About 300 kB of samples (Edge's bulk post takes up to 1 MB), three times a message's budget;
    // a metric keeps at most 1000 samples of a post.
    const samples = Array.from({ length: 1200 }, (_, i) => ({ value: 1, labels: { id: `${i}`.padStart(200, 'x') } }));
    const body = { applications: [], metrics: [], impactMetrics: [{ name: `${p}c`, help: 'C', type: 'counter', samples }] };
    expect((await call('POST', '/api/client/metrics/bulk', { token: clientToken, body })).status).toBe(202);
    await settleMetrics();
    expect(await count('SELECT count(*) AS n FROM impact_metric_series WHERE name = ?', `${p}c`)).toBe(1000);
    expect(await count('SELECT sum(value) AS n FROM impact_metric_series WHERE name = ?', `${p}c`)).toBe(1000);
  });

  it('a frontend key writes them as the frontend API allows: not with a client key, not without a key', async () => {
    const p = prefixOf();
    const body = { appName: 'impact-fe', impactMetrics: [{ name: `${p}g`, help: 'G', type: 'gauge', samples: [{ value: 1 }] }] };
    expect((await call('POST', '/api/frontend/client/metrics', { token: null, body })).status).toBe(401);
    expect((await call('POST', '/api/frontend/client/metrics', { token: clientToken, body })).status).toBe(403);
    expect(await served(p)).toBe('');
  });

  it('the read needs no key, as Unleash serves it, and is rate limited per address', async () => {
    const address = { 'cf-connecting-ip': '10.200.0.1' };
    const first = await call('GET', '/internal-backstage/impact/metrics', { token: null, headers: address });
    expect(first.status).toBe(200);
    let last = first;
    for (let i = 0; i < 70 && last.status === 200; i++)
      last = await call('GET', '/internal-backstage/impact/metrics', { token: null, headers: address });
    expect(last.status).toBe(429);
  });

  it('series not updated for a week are pruned by the cron, then metrics left without series', async () => {
    const p = prefixOf();
    await sdkPost([
      { name: `${p}old`, help: 'O', type: 'counter', samples: [{ value: 1 }] },
      { name: `${p}new`, help: 'N', type: 'counter', samples: [{ value: 1 }] },
    ]);
    await settleMetrics();
    const eightDaysAgo = new Date(Date.now() - 8 * 24 * 60 * 60 * 1000).toISOString();
    await env.DB.prepare('UPDATE impact_metric_series SET updated_at = ? WHERE name = ?').bind(eightDaysAgo, `${p}old`).run();
    await env.DB.prepare('UPDATE impact_metrics SET seen_at = ? WHERE name = ?').bind(eightDaysAgo, `${p}old`).run();
    const [outcome] = await runScheduledJobs(env, new Date(), [expireImpactMetrics]);
    expect(outcome?.summary).toMatchObject({ series: expect.any(Number), metrics: expect.any(Number) });
    expect(await served(p)).toBe('# HELP PREFIX_new N\n# TYPE PREFIX_new counter\nPREFIX_new{origin="sdk",metric_type="counter"} 1\n');
  });
});
