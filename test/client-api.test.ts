import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, bodyOf, call, createToken, expectError } from './support/http';
import { seedFlag, seedProject, seedSegment, writeWithEvent } from './support/sdk-seed';
import { settleMetrics } from './support/metrics';

let clientToken: string;
let productionToken: string;
let frontendToken: string;
let scopedToken: string;

beforeAll(async () => {
  await seedProject('sdk-other');
  clientToken = await createToken({ tokenName: 'ca-client', type: 'client', environment: 'development' });
  productionToken = await createToken({ tokenName: 'ca-client-prod', type: 'client', environment: 'production' });
  frontendToken = await createToken({ tokenName: 'ca-frontend', type: 'frontend', environment: 'development' });
  scopedToken = await createToken({ tokenName: 'ca-scoped', type: 'client', environment: 'development', projects: ['sdk-other'] });
});

interface ClientFeatures {
  version: number;
  features: Record<string, unknown>[];
  query: Record<string, unknown>;
  segments?: unknown[];
  meta: { revisionId: number; etag: string; queryHash: string };
}

async function fetchFeatures(path: string, token = clientToken, headers: Record<string, string> = {}) {
  const response = await call('GET', path, { token, headers });
  expect(response.status).toBe(200);
  return { response, body: await bodyOf<ClientFeatures>(response) };
}

describe('GET /api/client/features', () => {
  it('needs a key: 401 without one or with an unknown one', async () => {
    await expectError(await call('GET', '/api/client/features', { token: null }), 401, 'AuthenticationRequired');
    await expectError(await call('GET', '/api/client/features', { token: '*:development.nope' }), 401, 'AuthenticationRequired');
  });

  it('refuses frontend keys with 403', async () => {
    const body = await expectError(await call('GET', '/api/client/features', { token: frontendToken }), 403, 'NoAccessError');
    expect(body.message).toBe('invalid token: expected a different token type for this endpoint');
  });

  it('serves a flag in exactly the client shape, with dependencies and without ids', async () => {
    await seedFlag({ name: 'shape.parent', environments: { development: { enabled: true } } });
    await seedFlag({
      name: 'shape.child',
      description: 'described',
      impressionData: true,
      environments: {
        development: {
          enabled: true,
          variants: [
            {
              name: 'blue',
              weight: 1000,
              weightType: 'variable',
              stickiness: 'default',
              overrides: [{ contextName: 'userId', values: ['7'] }],
            },
          ],
          strategies: [
            {
              name: 'flexibleRollout',
              parameters: { rollout: '50', stickiness: 'default', groupId: 'shape.child' },
              constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '2'], caseInsensitive: false, inverted: false }],
              variants: [
                { name: 'v1', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'x' } },
              ],
            },
          ],
        },
      },
      dependencies: [{ parent: 'shape.parent', enabled: true, variants: ['a'] }],
    });
    const { response, body } = await fetchFeatures('/api/client/features?namePrefix=shape.');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Object.keys(body)).toEqual(['version', 'features', 'query', 'meta']);
    expect(body.version).toBe(2);
    expect(body.query).toEqual({ namePrefix: 'shape.', environment: 'development', inlineSegmentConstraints: true });
    expect(body.features.map((feature) => feature.name)).toEqual(['shape.parent', 'shape.child']);
    const child = body.features[1]!;
    expect(Object.keys(child)).toEqual([
      'name',
      'type',
      'enabled',
      'project',
      'stale',
      'strategies',
      'variants',
      'description',
      'impressionData',
      'dependencies',
    ]);
    expect(child).toEqual({
      name: 'shape.child',
      type: 'release',
      enabled: true,
      project: 'default',
      stale: false,
      strategies: [
        {
          name: 'flexibleRollout',
          constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '2'], caseInsensitive: false, inverted: false }],
          parameters: { rollout: '50', stickiness: 'default', groupId: 'shape.child' },
          variants: [{ name: 'v1', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'x' } }],
        },
      ],
      variants: [
        {
          name: 'blue',
          weight: 1000,
          weightType: 'variable',
          stickiness: 'default',
          overrides: [{ contextName: 'userId', values: ['7'] }],
        },
      ],
      description: 'described',
      impressionData: true,
      dependencies: [{ feature: 'shape.parent', enabled: true, variants: ['a'] }],
    });
    expect(body.features[0]).toEqual({
      name: 'shape.parent',
      type: 'release',
      enabled: true,
      project: 'default',
      stale: false,
      strategies: [],
      variants: [],
      description: null,
      impressionData: false,
    });
    expect(body.meta).toEqual({
      revisionId: expect.any(Number),
      etag: response.headers.get('etag'),
      queryHash: expect.stringMatching(/^[0-9a-f]{8}$/),
    });
    expect(response.headers.get('etag')).toBe(`"${body.meta.queryHash}:${body.meta.revisionId}"`);
  });

  it('sorts strategies, leaves out disabled ones, archived flags, and turns parameters into strings', async () => {
    await seedFlag({
      name: 'order.flag',
      environments: {
        development: {
          enabled: true,
          strategies: [
            { name: 'userWithId', parameters: { userIds: '1' }, sortOrder: 5 },
            { name: 'default', sortOrder: 1 },
            { name: 'remoteAddress', parameters: { IPs: '10.0.0.1' }, sortOrder: 3, disabled: true },
          ],
        },
      },
    });
    await seedFlag({ name: 'order.archived', archived: true, environments: { development: { enabled: true } } });
    await writeWithEvent(
      `UPDATE feature_strategies SET parameters = '{"rollout":50,"flag":true}' WHERE feature_name = 'order.flag' AND strategy_name = 'userWithId'`,
    );
    const { body } = await fetchFeatures('/api/client/features?namePrefix=order.');
    expect(body.features).toHaveLength(1);
    const strategies = body.features[0]!.strategies as { name: string; parameters: unknown }[];
    expect(strategies.map((strategy) => strategy.name)).toEqual(['default', 'userWithId']);
    expect(strategies[1]!.parameters).toEqual({ rollout: '50', flag: 'true' });
    expect(Object.keys(strategies[0]!)).toEqual(['name', 'constraints', 'parameters', 'variants']);
  });

  it('reports a flag with no row for the environment as disabled with no strategies', async () => {
    await seedFlag({ name: 'norow.flag', environments: { production: { enabled: true, strategies: [{ name: 'default' }] } } });
    const { body } = await fetchFeatures('/api/client/features?namePrefix=norow.');
    expect(body.features).toEqual([expect.objectContaining({ name: 'norow.flag', enabled: false, strategies: [], variants: [] })]);
  });

  it("lets the token's environment and projects win over query parameters", async () => {
    await seedFlag({ name: 'scope.default', environments: { development: { enabled: true }, production: { enabled: false } } });
    await seedFlag({ name: 'scope.other', project: 'sdk-other', environments: { development: { enabled: true } } });
    const dev = await fetchFeatures('/api/client/features?namePrefix=scope.&environment=production&project=sdk-other');
    expect(dev.body.query).toEqual({
      project: ['sdk-other'],
      namePrefix: 'scope.',
      environment: 'development',
      inlineSegmentConstraints: true,
    });
    expect(dev.body.features.map((feature) => feature.name)).toEqual(['scope.other']);

    const scoped = await fetchFeatures('/api/client/features?namePrefix=scope.&project=default', scopedToken);
    expect(scoped.body.query.project).toEqual(['sdk-other']);
    expect(scoped.body.features.map((feature) => feature.name)).toEqual(['scope.other']);

    const prod = await fetchFeatures('/api/client/features?namePrefix=scope.', productionToken);
    expect(prod.body.features.map((feature) => [feature.name, feature.enabled])).toEqual([
      ['scope.default', false],
      ['scope.other', false],
    ]);
  });

  it('refuses admin keys with 403, as the SDK protocol reference says', async () => {
    for (const path of ['/api/client/features', '/api/client/features/any']) {
      const body = await expectError(await call('GET', path, { token: ADMIN_TOKEN }), 403, 'NoAccessError');
      expect(body.message).toBe('invalid token: expected a different token type for this endpoint');
    }
    const register = { appName: 'a', instanceId: 'i', interval: 1000, started: new Date().toISOString(), strategies: [] };
    await expectError(await call('POST', '/api/client/register', { token: ADMIN_TOKEN, body: register }), 403, 'NoAccessError');
  });

  it('filters by name prefix case-sensitively and literally', async () => {
    await seedFlag({ name: 'Prefix.Upper', environments: { development: { enabled: true } } });
    await seedFlag({ name: 'prefix.lower', environments: { development: { enabled: true } } });
    await seedFlag({ name: 'prefixXlower', environments: { development: { enabled: true } } });
    const { body } = await fetchFeatures('/api/client/features?namePrefix=prefix.');
    expect(body.features.map((feature) => feature.name)).toEqual(['prefix.lower']);
    const underscore = await fetchFeatures('/api/client/features?namePrefix=prefix_');
    expect(underscore.body.features).toEqual([]);
  });

  it('filters by tags (any of them) and rejects malformed tags', async () => {
    await seedFlag({ name: 'tagged.one', tags: [['simple', 'alpha']], environments: { development: { enabled: true } } });
    await seedFlag({ name: 'tagged.two', tags: [['simple', 'beta']], environments: { development: { enabled: true } } });
    await seedFlag({ name: 'tagged.none', environments: { development: { enabled: true } } });
    const { body } = await fetchFeatures('/api/client/features?tag=simple:alpha&tag=simple:beta');
    expect(body.features.map((feature) => feature.name)).toEqual(['tagged.one', 'tagged.two']);
    expect(body.query.tag).toEqual([
      ['simple', 'alpha'],
      ['simple', 'beta'],
    ]);
    const bad = await expectError(
      await call('GET', '/api/client/features?tag=simple:alpha&tag=oops', { token: clientToken }),
      400,
      'ValidationError',
    );
    expect(bad.details[0]!.message).toBe('"tag[1]" with value "oops" fails to match the tag pattern. You provided "oops".');
  });

  describe('segments and the Unleash-Client-Spec header', () => {
    it('inlines segment constraints for old SDKs and lists segments for spec >= 4.2.0', async () => {
      const segment = await seedSegment('beta-users', [{ contextName: 'region', operator: 'IN', values: ['eu'] }]);
      await seedFlag({
        name: 'seg.flag',
        environments: {
          development: {
            enabled: true,
            strategies: [{ name: 'default', constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }], segments: [segment] }],
          },
        },
      });
      const old = await fetchFeatures('/api/client/features?namePrefix=seg.');
      expect(old.body.segments).toBeUndefined();
      expect(old.body.features[0]!.strategies).toEqual([
        {
          name: 'default',
          constraints: [
            { contextName: 'userId', operator: 'IN', values: ['1'] },
            { contextName: 'region', operator: 'IN', values: ['eu'] },
          ],
          parameters: {},
          variants: [],
        },
      ]);

      const modern = await fetchFeatures('/api/client/features?namePrefix=seg.', clientToken, { 'Unleash-Client-Spec': '5.2.0' });
      expect(Object.keys(modern.body)).toEqual(['version', 'features', 'query', 'segments', 'meta']);
      expect(modern.body.query.inlineSegmentConstraints).toBe(false);
      expect(modern.body.segments).toEqual([
        { id: segment, name: 'beta-users', constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }] },
      ]);
      expect(modern.body.features[0]!.strategies).toEqual([
        {
          name: 'default',
          constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }],
          parameters: {},
          variants: [],
          segments: [segment],
        },
      ]);
      const older = await fetchFeatures('/api/client/features?namePrefix=seg.', clientToken, { 'Unleash-Client-Spec': '4.1.9' });
      expect(older.body.segments).toBeUndefined();
    });

    it('answers 400 to a malformed header', async () => {
      const body = await expectError(
        await call('GET', '/api/client/features', { token: clientToken, headers: { 'Unleash-Client-Spec': 'v4.2.0' } }),
        400,
        'ValidationError',
      );
      expect(body.message).toBe(
        'Request validation failed: your request body or params contain invalid data: Invalid prefix in the Unleash-Client-Spec header: "v4.2.0".',
      );
    });
  });

  describe('ETag and If-None-Match', () => {
    it('answers 304 with no body while nothing changed, and 200 with a new ETag after a write', async () => {
      await seedFlag({ name: 'etag.flag', environments: { development: { enabled: true } } });
      const first = await fetchFeatures('/api/client/features?namePrefix=etag.');
      const etag = first.response.headers.get('etag')!;
      expect(etag).toMatch(/^"[0-9a-f]{8}:\d+"$/);

      const again = await call('GET', '/api/client/features?namePrefix=etag.', { token: clientToken, headers: { 'If-None-Match': etag } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
      // RFC 9110 15.4.5: a 304 carries the ETag the 200 would have, and nothing else here.
      expect([...again.headers]).toEqual([['etag', etag]]);

      const weak = await call('GET', '/api/client/features?namePrefix=etag.', {
        token: clientToken,
        headers: { 'If-None-Match': `"x", W/${etag}` },
      });
      expect(weak.status).toBe(304);

      const otherQuery = await call('GET', '/api/client/features?namePrefix=etag', {
        token: clientToken,
        headers: { 'If-None-Match': etag },
      });
      expect(otherQuery.status).toBe(200);

      await writeWithEvent(`UPDATE feature_environments SET enabled = 0 WHERE feature_name = 'etag.flag'`);
      const changed = await call('GET', '/api/client/features?namePrefix=etag.', {
        token: clientToken,
        headers: { 'If-None-Match': etag },
      });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('etag')).not.toBe(etag);
      expect((await bodyOf<ClientFeatures>(changed)).features[0]).toMatchObject({ name: 'etag.flag', enabled: false });
    });

    it('keeps the ETag through audited writes SDKs cannot see (tokens, users, projects), as Unleash does', async () => {
      await seedFlag({ name: 'etag.quiet', environments: { development: { enabled: true } } });
      const path = '/api/client/features?namePrefix=etag.quiet';
      const etag = (await fetchFeatures(path)).response.headers.get('etag')!;
      const eventsBefore = (await env.DB.prepare('SELECT max(id) AS id FROM events').first<{ id: number }>())!.id;

      await createToken({ tokenName: 'etag-quiet', type: 'backend', environment: 'development' });
      const user = await call('POST', '/api/admin/user-admin', { body: { email: 'etag-quiet@example.com', rootRole: 3 } });
      expect(user.status).toBe(201);
      const project = await call('POST', '/api/admin/projects', { body: { id: 'etag-quiet', name: 'etag quiet' } });
      expect(project.status).toBe(201);
      // Each was audited (the revision used to be the newest event of any kind).
      const eventsAfter = (await env.DB.prepare('SELECT max(id) AS id FROM events').first<{ id: number }>())!.id;
      expect(eventsAfter).toBeGreaterThanOrEqual(eventsBefore + 3);

      const again = await call('GET', path, { token: clientToken, headers: { 'If-None-Match': etag } });
      expect(again.status).toBe(304);

      const toggled = await call('POST', '/api/admin/projects/default/features/etag.quiet/environments/development/off');
      expect(toggled.status).toBe(200);
      const changed = await call('GET', path, { token: clientToken, headers: { 'If-None-Match': etag } });
      expect(changed.status).toBe(200);
      const body = await bodyOf<ClientFeatures>(changed);
      expect(body.features[0]).toMatchObject({ name: 'etag.quiet', enabled: false });
      // The revision is the id of the flag's own audit event.
      const toggleEvent = (await env.DB.prepare("SELECT max(id) AS id FROM events WHERE feature_name = 'etag.quiet'").first<{
        id: number;
      }>())!.id;
      expect(body.meta.revisionId).toBe(toggleEvent);
    });
  });
});

describe('GET /api/client/features/:featureName', () => {
  it('returns one flag in the list shape, and 404 outside the scope or when unknown', async () => {
    await seedFlag({ name: 'single.flag', environments: { development: { enabled: true, strategies: [{ name: 'default' }] } } });
    await seedFlag({ name: 'single.other', project: 'sdk-other', environments: { development: { enabled: true } } });
    const response = await call('GET', '/api/client/features/single.flag', { token: clientToken });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({
      name: 'single.flag',
      type: 'release',
      enabled: true,
      project: 'default',
      stale: false,
      strategies: [{ name: 'default', constraints: [], parameters: {}, variants: [] }],
      variants: [],
      description: null,
      impressionData: false,
    });
    const missing = await expectError(await call('GET', '/api/client/features/single.nope', { token: clientToken }), 404, 'NotFoundError');
    expect(missing.message).toBe('Could not find feature flag single.nope');
    await expectError(await call('GET', '/api/client/features/single.flag', { token: scopedToken }), 404, 'NotFoundError');
  });
});

describe('POST /api/client/register', () => {
  const registration = {
    appName: 'register-app',
    instanceId: 'instance-1',
    sdkVersion: 'unleash-node-sdk:6.12.1',
    strategies: ['default', 'flexibleRollout'],
    started: '2026-11-20T10:00:00.000Z',
    interval: 10000,
  };

  it('answers 202 with no body and records the application and instance', async () => {
    const response = await call('POST', '/api/client/register', {
      token: clientToken,
      body: registration,
      headers: { 'cf-connecting-ip': '192.0.2.10' },
    });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
    const app = await env.DB.prepare('SELECT strategies FROM client_applications WHERE app_name = ?')
      .bind('register-app')
      .first<{ strategies: string }>();
    expect(JSON.parse(app!.strategies)).toEqual(['default', 'flexibleRollout']);
    const instance = await env.DB.prepare('SELECT environment, sdk_version, client_ip, interval FROM client_instances WHERE app_name = ?')
      .bind('register-app')
      .first();
    expect(instance).toEqual({
      environment: 'development',
      sdk_version: 'unleash-node-sdk:6.12.1',
      client_ip: '192.0.2.10',
      interval: 10000,
    });
  });

  it('accepts `started` as unix seconds', async () => {
    const response = await call('POST', '/api/client/register', { token: clientToken, body: { ...registration, started: 1763632800 } });
    expect(response.status).toBe(202);
  });

  it('rejects bodies without the required fields (400), non-JSON (415) and wrong keys (403)', async () => {
    const body = await expectError(
      await call('POST', '/api/client/register', { token: clientToken, body: { appName: 'x' } }),
      400,
      'ValidationError',
    );
    expect(body.details.map((detail) => detail.path)).toEqual(['/body/strategies', '/body/started', '/body/interval']);
    expect(body.details[2]!.message).toBe('The `/body/interval` property is required. It was not present on the data you sent.');
    await expectError(
      await call('POST', '/api/client/register', { token: clientToken, rawBody: 'x', contentType: 'text/plain' }),
      415,
      'ContentTypeerror',
    );
    await expectError(await call('POST', '/api/client/register', { token: frontendToken, body: registration }), 403, 'NoAccessError');
    await expectError(await call('POST', '/api/client/register', { token: null, body: registration }), 401, 'AuthenticationRequired');
  });
});

describe('POST /api/client/metrics', () => {
  function report(toggles: Record<string, unknown>, stop = new Date().toISOString()) {
    return { appName: 'metrics-app', instanceId: 'i-1', bucket: { start: stop, stop, toggles } };
  }

  async function metricRows(featureName: string) {
    const { results } = await env.DB.prepare(
      'SELECT app_name, environment, timestamp, yes, no, variants FROM client_metrics_env WHERE feature_name = ? ORDER BY environment, timestamp',
    )
      .bind(featureName)
      .all<{ app_name: string; environment: string; timestamp: string; yes: number; no: number; variants: string }>();
    return results.map((row) => ({ ...row, variants: JSON.parse(row.variants) as unknown }));
  }

  async function stages(featureName: string) {
    const { results } = await env.DB.prepare('SELECT stage FROM feature_lifecycles WHERE feature = ? ORDER BY created_at')
      .bind(featureName)
      .all<{ stage: string }>();
    return results.map((row) => row.stage);
  }

  it('adds counts into hourly buckets per environment, drops empty flags and keeps those of unknown flags (as Unleash does)', async () => {
    await seedFlag({ name: 'metric.flag', environments: { development: { enabled: true }, production: { enabled: true } } });
    await seedFlag({ name: 'metric.quiet', environments: { development: { enabled: true } } });
    const stop = '2026-11-20T10:42:13.000Z';
    const first = await call('POST', '/api/client/metrics', {
      token: clientToken,
      body: report(
        {
          'metric.flag': { yes: 3, no: 1, variants: { red: 2, blue: 1 } },
          'metric.quiet': { yes: 0, no: 0 },
          'metric.unknown': { yes: 5, no: 0 },
        },
        stop,
      ),
    });
    expect(first.status).toBe(202);
    expect(await first.text()).toBe('');
    await call('POST', '/api/client/metrics', {
      token: clientToken,
      body: report({ 'metric.flag': { yes: 1, no: 4, variants: { red: 1, green: 3 } } }, '2026-11-20T10:59:59.999Z'),
    });
    await call('POST', '/api/client/metrics', {
      token: clientToken,
      body: report({ 'metric.flag': { yes: 7, no: 0 } }, '2026-11-20T11:00:00.000Z'),
    });
    await call('POST', '/api/client/metrics', { token: productionToken, body: report({ 'metric.flag': { yes: 2, no: 2 } }, stop) });
    await settleMetrics();

    expect(await metricRows('metric.flag')).toEqual([
      {
        app_name: 'metrics-app',
        environment: 'development',
        timestamp: '2026-11-20T10:00:00.000Z',
        yes: 4,
        no: 5,
        variants: { red: 3, blue: 1, green: 3 },
      },
      { app_name: 'metrics-app', environment: 'development', timestamp: '2026-11-20T11:00:00.000Z', yes: 7, no: 0, variants: {} },
      { app_name: 'metrics-app', environment: 'production', timestamp: '2026-11-20T10:00:00.000Z', yes: 2, no: 2, variants: {} },
    ]);
    expect(await metricRows('metric.quiet')).toEqual([]);
    // Unleash keeps counts for flags that do not exist: the application's page lists them as missing.
    expect(await metricRows('metric.unknown')).toEqual([
      { app_name: 'metrics-app', environment: 'development', timestamp: '2026-11-20T10:00:00.000Z', yes: 5, no: 0, variants: {} },
    ]);
  });

  it('marks the flag and its environment as seen and moves the lifecycle to pre-live, then live in production', async () => {
    await seedFlag({ name: 'seen.flag', environments: { development: { enabled: true }, production: { enabled: true } } });
    await seedFlag({ name: 'seen.off', environments: { production: { enabled: false } } });
    const before = Date.now();
    await call('POST', '/api/client/metrics', { token: clientToken, body: report({ 'seen.flag': { yes: 1, no: 0 } }) });
    await settleMetrics();
    const environments = await env.DB.prepare(
      'SELECT environment, last_seen_at FROM feature_environments WHERE feature_name = ? ORDER BY environment',
    )
      .bind('seen.flag')
      .all<{ environment: string; last_seen_at: string | null }>();
    expect(environments.results[0]!.environment).toBe('development');
    expect(Date.parse(environments.results[0]!.last_seen_at!)).toBeGreaterThanOrEqual(before - 5);
    expect(environments.results[1]!.last_seen_at).toBeNull();
    const feature = await env.DB.prepare('SELECT last_seen_at FROM features WHERE name = ?')
      .bind('seen.flag')
      .first<{ last_seen_at: string }>();
    expect(feature!.last_seen_at).toBe(environments.results[0]!.last_seen_at);
    expect(await stages('seen.flag')).toEqual(['pre-live']);

    await call('POST', '/api/client/metrics', {
      token: productionToken,
      body: report({ 'seen.flag': { yes: 0, no: 1 }, 'seen.off': { yes: 0, no: 2 } }),
    });
    await settleMetrics();
    expect(await stages('seen.flag')).toEqual(['pre-live', 'live']);
    // Disabled in production: seen, but not live.
    expect(await stages('seen.off')).toEqual(['pre-live']);
  });

  it('accepts a report without a bucket', async () => {
    const response = await call('POST', '/api/client/metrics', { token: clientToken, body: { appName: 'metrics-app', instanceId: 'x' } });
    expect(response.status).toBe(202);
  });

  it('rejects invalid reports with 400 and writes nothing', async () => {
    await seedFlag({ name: 'invalid.metric', environments: { development: { enabled: true } } });
    const missing = await expectError(
      await call('POST', '/api/client/metrics', { token: clientToken, body: { instanceId: 'x' } }),
      400,
      'ValidationError',
    );
    expect(missing.details).toEqual([
      { path: '/body/appName', message: 'The `/body/appName` property is required. It was not present on the data you sent.' },
    ]);
    for (const counts of [
      { yes: -1, no: 0 },
      { yes: 1.5, no: 0 },
      { yes: '1', no: 0 },
      { yes: 2 ** 53, no: 0 },
    ]) {
      const response = await call('POST', '/api/client/metrics', { token: clientToken, body: report({ 'invalid.metric': counts }) });
      await expectError(response, 400, 'ValidationError');
    }
    const badDate = await call('POST', '/api/client/metrics', {
      token: clientToken,
      body: { appName: 'a', bucket: { start: 'yesterday', stop: 'now', toggles: { 'invalid.metric': { yes: 1, no: 1 } } } },
    });
    await expectError(badDate, 400, 'ValidationError');
    await settleMetrics();
    expect(await metricRows('invalid.metric')).toEqual([]);
  });

  it('skips names with lone surrogates or NUL instead of storing them', async () => {
    await seedFlag({ name: 'odd.names', environments: { development: { enabled: true } } });
    const response = await call('POST', '/api/client/metrics', {
      token: clientToken,
      rawBody:
        '{"appName":"a","bucket":{"start":"2026-11-20T10:00:00Z","stop":"2026-11-20T10:00:00Z","toggles":{"\\ud800":{"yes":1,"no":0},"x\\u0000":{"yes":1,"no":0},"odd.names":{"yes":1,"no":0,"variants":{"\\udfff":2,"ok":1}}}}}',
    });
    expect(response.status).toBe(202);
    await settleMetrics();
    expect(await metricRows('odd.names')).toEqual([
      { app_name: 'a', environment: 'development', timestamp: '2026-11-20T10:00:00.000Z', yes: 1, no: 0, variants: { ok: 1 } },
    ]);
  });

  it('answers 400 (or ignores the key) for 10,000-level nested JSON, never 500', async () => {
    const deep = `${'['.repeat(10_000)}1${']'.repeat(10_000)}`;
    for (const rawBody of [
      `{"appName":"a","bucket":{"start":"2026-11-20T10:00:00Z","stop":"2026-11-20T10:00:00Z","toggles":{"x":{"yes":1,"no":0,"variants":{"v":${deep}}}}}}`,
      `{"appName":"a","extra":${deep}}`,
      deep,
    ]) {
      const response = await call('POST', '/api/client/metrics', { token: clientToken, rawBody });
      expect([202, 400]).toContain(response.status);
    }
    const frontend = await call('POST', '/api/frontend', { token: frontendToken, rawBody: `{"context":{"userId":${deep}}}` });
    expect(frontend.status).toBe(200);
  });

  it('treats flag names like __proto__ as plain names', async () => {
    const response = await call('POST', '/api/client/metrics', {
      token: clientToken,
      rawBody:
        '{"appName":"a","bucket":{"start":"2026-11-20T10:00:00Z","stop":"2026-11-20T10:00:00Z","toggles":{"__proto__":{"yes":1,"no":0},"constructor":{"yes":1,"no":0}}}}',
    });
    expect(response.status).toBe(202);
  });
});

describe('POST /api/client/metrics/bulk', () => {
  it("adds Edge's forwarded counts for the key's environment only, per app and hour", async () => {
    await seedFlag({ name: 'bulk.flag', environments: { development: { enabled: true } } });
    const metric = (
      appName: string,
      environment: string,
      timestamp: string,
      yes: number,
      no: number,
      variants?: Record<string, number>,
    ) => ({
      featureName: 'bulk.flag',
      appName,
      environment,
      timestamp,
      yes,
      no,
      ...(variants ? { variants } : {}),
    });
    const response = await call('POST', '/api/client/metrics/bulk', {
      token: clientToken,
      body: {
        applications: [{ appName: 'edge-app', environment: 'development', instanceId: 'edge-1', sdkVersion: 'unleash-edge:20.4.1' }],
        metrics: [
          metric('edge-app', 'development', '2026-11-20T08:10:00.000Z', 2, 1, { a: 2 }),
          metric('edge-app', 'development', '2026-11-20T08:50:00.000Z', 1, 1, { a: 1, b: 1 }),
          metric('other-app', 'development', '2026-11-20T08:10:00.000Z', 5, 0),
          metric('edge-app', 'production', '2026-11-20T08:10:00.000Z', 100, 100),
          { ...metric('edge-app', 'development', '2026-11-20T08:10:00.000Z', 9, 9), featureName: 'bulk.unknown' },
        ],
      },
    });
    expect(response.status).toBe(202);
    await settleMetrics();
    const { results } = await env.DB.prepare(
      'SELECT app_name, environment, timestamp, yes, no, variants FROM client_metrics_env WHERE feature_name = ? ORDER BY app_name',
    )
      .bind('bulk.flag')
      .all();
    expect(results).toEqual([
      { app_name: 'edge-app', environment: 'development', timestamp: '2026-11-20T08:00:00.000Z', yes: 3, no: 2, variants: '{"a":3,"b":1}' },
      { app_name: 'other-app', environment: 'development', timestamp: '2026-11-20T08:00:00.000Z', yes: 5, no: 0, variants: '{}' },
    ]);
    const instance = await env.DB.prepare('SELECT sdk_version FROM client_instances WHERE app_name = ? AND instance_id = ?')
      .bind('edge-app', 'edge-1')
      .first();
    expect(instance).toEqual({ sdk_version: 'unleash-edge:20.4.1' });
  });

  it('rejects a body without both lists (400) and frontend keys (403)', async () => {
    const body = await expectError(
      await call('POST', '/api/client/metrics/bulk', { token: clientToken, body: { metrics: [] } }),
      400,
      'ValidationError',
    );
    expect(body.details.map((detail) => detail.path)).toEqual(['/body/applications']);
    await expectError(
      await call('POST', '/api/client/metrics/bulk', { token: frontendToken, body: { applications: [], metrics: [] } }),
      403,
      'NoAccessError',
    );
  });
});

describe('POST /edge/validate', () => {
  it('returns the valid tokens with their scope, without needing a key', async () => {
    const response = await call('POST', '/edge/validate', {
      token: null,
      body: { tokens: [clientToken, 'default:development.0000', frontendToken, scopedToken, ADMIN_TOKEN] },
    });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({
      tokens: [
        { token: clientToken, type: 'client', projects: ['*'], environment: 'development' },
        { token: frontendToken, type: 'frontend', projects: ['*'], environment: 'development' },
        { token: scopedToken, type: 'client', projects: ['sdk-other'], environment: 'development' },
        { token: ADMIN_TOKEN, type: 'admin', projects: ['*'] },
      ],
    });
  });

  it('answers 400 without a token list', async () => {
    const body = await expectError(await call('POST', '/edge/validate', { token: null, body: { x: 1 } }), 400, 'ValidationError');
    expect(body.details[0]!.message).toBe('The `/body/tokens` property is required. It was not present on the data you sent.');
  });

  it('takes at most 100 tokens per call', async () => {
    const tokens = Array.from({ length: 101 }, (_, i) => `default:development.${i}`);
    const body = await expectError(await call('POST', '/edge/validate', { token: null, body: { tokens } }), 400, 'ValidationError');
    expect(body.details[0]!.path).toBe('/body/tokens');
  });
});
