import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../src/index';
import { flushTrafficCounts } from '../src/admin/traffic-usage/counter';
import type { Env } from '../src/env';
import { BASE, bodyOf, call, createToken, envWith, expectError } from './support/http';
import { signInAs } from './support/users';
import { expireTrafficUsage } from '../src/scheduled';

const SEARCH = '/api/admin/metrics/traffic-search';
const today = () => new Date().toISOString().slice(0, 10);

interface TrafficUsage {
  grouping: string;
  dateRange: { from: string; to: string };
  apiData: { apiPath: string; dataPoints: { period: string; trafficTypes: { group: string; count: number }[] }[] }[];
}

/** The successful requests of each path group in `period`, as the page reads them. */
function countsIn(usage: TrafficUsage, period: string): Record<string, number> {
  return Object.fromEntries(
    usage.apiData.map(({ apiPath, dataPoints }) => [
      apiPath,
      dataPoints.filter((point) => point.period === period).reduce((sum, point) => sum + point.trafficTypes[0]!.count, 0),
    ]),
  );
}

/** Today's counts once everything counted so far is in D1 (the read itself is counted, then written). */
async function todaysCounts(): Promise<Record<string, number>> {
  await flushTrafficCounts(env as unknown as Env);
  const response = await call('GET', `${SEARCH}?grouping=daily&from=${today()}&to=${today()}`);
  expect(response.status).toBe(200);
  const counts = countsIn(await bodyOf<TrafficUsage>(response), today());
  await flushTrafficCounts(env as unknown as Env);
  return counts;
}

async function rowCount(): Promise<number> {
  return (await env.DB.prepare('SELECT count(*) AS n FROM stat_traffic_usage').first<{ n: number }>())!.n;
}

let clientKey: string;
let frontendKey: string;

beforeAll(async () => {
  clientKey = await createToken({ tokenName: 'traffic-client', type: 'client', environment: 'development' });
  frontendKey = await createToken({ tokenName: 'traffic-frontend', type: 'frontend', environment: 'development' });
});

const sdkHeaders = { 'unleash-appname': 'traffic-app', 'unleash-instanceid': 'traffic-1', 'unleash-sdk': 'unleash-client-node:6.6.0' };

describe('GET /api/admin/metrics/traffic-search', () => {
  it('shows the requests SDKs made, per day and path group, once the isolate has flushed its counts', async () => {
    const before = await todaysCounts();
    // Backend SDK polls: the first answered 200, the repeats (If-None-Match) 304 — both answers.
    const first = await call('GET', '/api/client/features', { token: clientKey, headers: sdkHeaders });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    for (let poll = 0; poll < 3; poll++) {
      const repeat = await call('GET', '/api/client/features', { token: clientKey, headers: { ...sdkHeaders, 'if-none-match': etag } });
      expect(repeat.status).toBe(304);
    }
    const registered = await call('POST', '/api/client/register', {
      token: clientKey,
      headers: sdkHeaders,
      body: {
        appName: 'traffic-app',
        instanceId: 'traffic-1',
        sdkVersion: 'unleash-client-node:6.6.0',
        strategies: ['default'],
        started: new Date().toISOString(),
        interval: 15000,
      },
    });
    expect(registered.status).toBe(202);
    // A browser SDK's polls.
    for (let poll = 0; poll < 2; poll++) {
      expect((await call('GET', '/api/frontend?userId=7', { token: frontendKey })).status).toBe(200);
    }
    // Refused requests are not successful requests.
    expect((await call('GET', '/api/client/features', { token: 'default:development.not-a-key' })).status).toBe(401);

    const after = await todaysCounts();
    expect(after['/api/client']! - before['/api/client']!).toBe(5);
    expect(after['/api/frontend']! - before['/api/frontend']!).toBe(2);
    // Only the read of `before` (each read is counted after its answer).
    expect(after['/api/admin']! - before['/api/admin']!).toBe(1);
    expect(after['/edge']).toBe(before['/edge']);
    // The refusal is kept in its own status series, as Unleash keeps it.
    const refused = await env.DB.prepare(
      "SELECT count FROM stat_traffic_usage WHERE day = ? AND traffic_group = '/api/client' AND status_code_series = 400",
    )
      .bind(today())
      .first<{ count: number }>();
    expect(refused?.count).toBeGreaterThanOrEqual(1);
  });

  it("answers Unleash's shape: every path group, a data point per day with requests, the range asked", async () => {
    await env.DB.prepare(
      `INSERT INTO stat_traffic_usage (day, traffic_group, status_code_series, count) VALUES
       ('2025-03-01', '/api/client', 200, 10), ('2025-03-01', '/api/client', 300, 5), ('2025-03-02', '/api/admin', 200, 3),
       ('2025-03-02', '/api/frontend', 500, 9), ('2025-02-28', '/api/client', 200, 100), ('2025-04-01', '/api/client', 200, 100)`,
    ).run();
    const response = await call('GET', `${SEARCH}?grouping=daily&from=2025-03-01&to=2025-03-31`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      grouping: 'daily',
      dateRange: { from: '2025-03-01', to: '2025-03-31' },
      apiData: [
        { apiPath: '/api/admin', dataPoints: [{ period: '2025-03-02', trafficTypes: [{ group: 'successful-requests', count: 3 }] }] },
        { apiPath: '/api/client', dataPoints: [{ period: '2025-03-01', trafficTypes: [{ group: 'successful-requests', count: 15 }] }] },
        { apiPath: '/api/frontend', dataPoints: [] },
        { apiPath: '/edge', dataPoints: [] },
      ],
    });
  });

  it('groups by month with grouping=monthly', async () => {
    await env.DB.prepare(
      `INSERT INTO stat_traffic_usage (day, traffic_group, status_code_series, count) VALUES
       ('2024-01-05', '/api/client', 200, 1), ('2024-01-31', '/api/client', 200, 2), ('2024-02-01', '/api/client', 200, 4),
       ('2024-02-29', '/api/frontend', 200, 8), ('2023-12-31', '/api/client', 200, 16), ('2024-03-01', '/api/client', 200, 32)`,
    ).run();
    const response = await call('GET', `${SEARCH}?grouping=monthly&from=2024-01-01&to=2024-02-29`);
    expect(response.status).toBe(200);
    const usage = await bodyOf<TrafficUsage>(response);
    expect(usage.grouping).toBe('monthly');
    expect(usage.apiData.find((api) => api.apiPath === '/api/client')!.dataPoints).toEqual([
      { period: '2024-01', trafficTypes: [{ group: 'successful-requests', count: 3 }] },
      { period: '2024-02', trafficTypes: [{ group: 'successful-requests', count: 4 }] },
    ]);
    expect(usage.apiData.find((api) => api.apiPath === '/api/frontend')!.dataPoints).toEqual([
      { period: '2024-02', trafficTypes: [{ group: 'successful-requests', count: 8 }] },
    ]);
  });

  it.each([
    ['grouping=weekly&from=2025-01-01&to=2025-01-31', '/query/grouping'],
    ['from=2025-01-01&to=2025-01-31', '/query/grouping'],
    ['grouping=daily&from=2025-02-30&to=2025-03-31', '/query/from'],
    ['grouping=daily&from=2025-01-01&to=tomorrow', '/query/to'],
    ['grouping=daily&from=2025-01-01T00:00:00Z&to=2025-01-31', '/query/from'],
    ['grouping=daily&to=2025-01-31', '/query/from'],
    ['grouping=daily&from=2025-02-01&to=2025-01-31', '/query/to'],
    ['grouping=daily&from=2025-01-01&from=2025-01-02&to=2025-01-31', '/query/from'],
  ])('refuses %s with a 400 naming %s', async (query, path) => {
    const body = await expectError(await call('GET', `${SEARCH}?${query}`), 400, 'ValidationError');
    expect(body.details.map((detail) => detail.path)).toContain(path);
  });

  it('is for admins only: an editor and a viewer get 403, a client key 403, no key 401', async () => {
    const query = `${SEARCH}?grouping=daily&from=2025-01-01&to=2025-01-31`;
    for (const rootRole of [2, 3]) {
      const person = await signInAs(rootRole);
      const body = await expectError(await call('GET', query, { token: person }), 403, 'NoAccessError');
      expect(body.message).toContain('ADMIN');
    }
    await expectError(await call('GET', query, { token: clientKey }), 403, 'NoAccessError');
    await expectError(await call('GET', query, { token: null }), 401, 'AuthenticationRequired');
  });
});

describe('counting', () => {
  it('writes an isolate’s counts once its window is due, after the answer, in one upsert', async () => {
    await flushTrafficCounts(env as unknown as Env);
    const rowsBefore = await rowCount();
    const before = await env.DB.prepare(
      "SELECT coalesce(sum(count), 0) AS n FROM stat_traffic_usage WHERE traffic_group = '/api/frontend'",
    ).first<{ n: number }>();
    const ctx = createExecutionContext();
    const request = new Request(`${BASE}/api/frontend?userId=1`, { headers: { authorization: frontendKey } });
    const response = await worker.fetch(
      request as Request<unknown, IncomingRequestCfProperties>,
      envWith({ TRAFFIC_FLUSH_INTERVAL_MS: '0' }),
      ctx,
    );
    expect(response.status).toBe(200);
    await waitOnExecutionContext(ctx);
    const after = await env.DB.prepare(
      "SELECT coalesce(sum(count), 0) AS n FROM stat_traffic_usage WHERE traffic_group = '/api/frontend'",
    ).first<{ n: number }>();
    expect(after!.n - before!.n).toBe(1);
    // Today's frontend 200 cell existed already: no new row.
    expect(await rowCount()).toBe(rowsBefore);
  });

  it('keeps counting while the window is not due: nothing is written per request', async () => {
    await flushTrafficCounts(env as unknown as Env);
    const total = async () =>
      (await env.DB.prepare('SELECT coalesce(sum(count), 0) AS n FROM stat_traffic_usage').first<{ n: number }>())!.n;
    const written = await total();
    for (let poll = 0; poll < 5; poll++) expect((await call('GET', '/api/client/features', { token: clientKey })).status).toBe(200);
    expect(await total()).toBe(written);
    await flushTrafficCounts(env as unknown as Env);
    expect(await total()).toBe(written + 5);
  });

  it('counts a path with doubled slashes in the group it is answered as (`//api/client/features` is a client poll)', async () => {
    const before = await todaysCounts();
    expect((await call('GET', '//api/client/features', { token: clientKey })).status).toBe(200);
    expect((await call('GET', '/api//client//features', { token: clientKey })).status).toBe(200);
    expect((await call('GET', '//api/admin/projects')).status).toBe(200);
    const after = await todaysCounts();
    // `todaysCounts` reads through /api/admin itself: one read in `before` is counted in `after`.
    expect(after['/api/client']! - before['/api/client']!).toBe(2);
    expect(after['/api/admin']! - before['/api/admin']!).toBe(2);
  });

  it('does not count what is not API traffic', async () => {
    await flushTrafficCounts(env as unknown as Env);
    const rows = await rowCount();
    expect((await call('GET', '/health', { token: null })).status).toBe(200);
    await flushTrafficCounts(env as unknown as Env);
    expect(await rowCount()).toBe(rows);
  });
});

describe('retention', () => {
  it('the cron keeps the months the page can show (the current one and the 13 before it) and deletes older days', async () => {
    const days = ['2024-10-31', '2024-11-01', '2025-09-30', '2025-10-01', '2025-10-15', '2026-11-28'];
    const insert = `INSERT INTO stat_traffic_usage (day, traffic_group, status_code_series, count) VALUES (?, '/api/client', 200, 7)
      ON CONFLICT DO NOTHING`;
    await env.DB.batch(days.map((day) => env.DB.prepare(insert).bind(day)));
    // Other tests here stored old months too: every row before the cut goes, none after it.
    const old = await env.DB.prepare("SELECT count(*) AS n FROM stat_traffic_usage WHERE day < '2025-10-01'").first<{ n: number }>();
    expect(old!.n).toBeGreaterThanOrEqual(3);
    const summary = await expireTrafficUsage.run(env as unknown as Env, new Date('2026-11-29T10:00:00Z'));
    expect(summary).toEqual({ deleted: old!.n, before: '2025-10-01' });
    const placeholders = days.map(() => '?').join(', ');
    const { results } = await env.DB.prepare(`SELECT DISTINCT day FROM stat_traffic_usage WHERE day IN (${placeholders}) ORDER BY day`)
      .bind(...days)
      .all<{ day: string }>();
    expect(results.map((row) => row.day)).toEqual(['2025-10-01', '2025-10-15', '2026-11-28']);
  });
});

describe('GET /api/instance/trafficBundles', () => {
  it('answers that no plan includes or bought any traffic (this service sells none)', async () => {
    const response = await call('GET', '/api/instance/trafficBundles');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ includedTraffic: 0, purchasedTraffic: 0 });
  });

  it('is for admins only', async () => {
    await expectError(await call('GET', '/api/instance/trafficBundles', { token: await signInAs(3) }), 403, 'NoAccessError');
    await expectError(await call('GET', '/api/instance/trafficBundles', { token: null }), 401, 'AuthenticationRequired');
  });
});
