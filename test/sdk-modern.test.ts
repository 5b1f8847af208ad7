/** What the newest SDKs and Unleash Edge send: Edge's self-report, spec 6.x headers and bodies, the spec 6.x operators. */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError } from './support/http';
import { settleMetrics } from './support/metrics';

let backendToken: string;
let frontendToken: string;

beforeAll(async () => {
  backendToken = await createToken({ tokenName: 'modern-backend', type: 'backend', environment: 'development' });
  frontendToken = await createToken({ tokenName: 'modern-frontend', type: 'frontend', environment: 'development' });
});

describe('POST /api/client/metrics/edge', () => {
  const report = {
    identifier: 'edge-1',
    appName: 'unleash-edge',
    region: null,
    edgeVersion: '20.4.1',
    processMetrics: null,
    started: '2026-11-23T10:00:00.123456789Z',
    traffic: { get: {}, post: {}, access_denied: {}, no_change: {} },
    latencyUpstream: { features: [], metrics: [], edge: [] },
    requestsSinceLastReport: {},
    connectedStreamingClients: 0,
    connectedEdges: [],
    connectionConsumptionSinceLastReport: {},
    requestConsumptionSinceLastReport: {},
    edgeApiKeyRevisionIds: [],
  };

  it("answers 202 to Edge's report and lists the Edge among its app's instances", async () => {
    const response = await call('POST', '/api/client/metrics/edge', { token: backendToken, body: report });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
    await settleMetrics();
    const row = await env.DB.prepare('SELECT sdk_version, environment FROM client_instances WHERE app_name = ? AND instance_id = ?')
      .bind('unleash-edge', 'edge-1')
      .first();
    expect(row).toEqual({ sdk_version: 'unleash-edge:20.4.1', environment: 'development' });
  });

  it('answers 400 without an identifier, 403 to frontend keys and 401 without a key', async () => {
    await expectError(
      await call('POST', '/api/client/metrics/edge', { token: backendToken, body: { appName: 'x' } }),
      400,
      'ValidationError',
    );
    await expectError(await call('POST', '/api/client/metrics/edge', { token: frontendToken, body: report }), 403, 'NoAccessError');
    await expectError(await call('POST', '/api/client/metrics/edge', { token: null, body: report }), 401, 'AuthenticationRequired');
  });
});

describe('bodies and headers of spec 6.x SDKs', () => {
  it('accepts register and metrics with unknown fields and without environment', async () => {
    const register = await call('POST', '/api/client/register', {
      token: backendToken,
      headers: { 'unleash-client-spec': '6.1.0', 'unleash-connection-id': crypto.randomUUID() },
      body: {
        appName: 'modern-app',
        instanceId: 'modern-1',
        connectionId: crypto.randomUUID(),
        sdkVersion: 'unleash-client-rust:0.9.0',
        strategies: ['default', 'flexibleRollout'],
        started: '2026-11-23T10:00:00.123456789Z',
        interval: 15000,
        platformName: 'rustc',
        platformVersion: '1.90.0',
        yggdrasilVersion: '0.18.0',
        specVersion: '6.1.0',
        somethingNew: { nested: true },
      },
    });
    expect(register.status).toBe(202);
    const now = new Date().toISOString();
    const metrics = await call('POST', '/api/client/metrics', {
      token: backendToken,
      headers: { 'unleash-client-spec': '6.1.0' },
      body: {
        appName: 'modern-app',
        instanceId: 'modern-1',
        connectionId: crypto.randomUUID(),
        platformName: 'node',
        platformVersion: '24.0.0',
        yggdrasilVersion: null,
        specVersion: '6.1.0',
        bucket: { start: now, stop: now, toggles: {} },
        impactMetrics: [{ name: 'checkouts', help: 'n', type: 'counter', samples: [{ labels: { a: 'b' }, value: 3 }] }],
      },
    });
    expect(metrics.status).toBe(202);
  });

  it('serves /api/client/features to Unleash-Client-Spec 6.x with global segments', async () => {
    const response = await call('GET', '/api/client/features', { token: backendToken, headers: { 'unleash-client-spec': '6.1.0' } });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toHaveProperty('segments');
  });
});

describe('spec 6.x constraint operators in the admin API', () => {
  const strategyPath = (flag: string) => `/api/admin/projects/default/features/${flag}/environments/development/strategies`;

  async function flagWith(name: string) {
    expect((await call('POST', '/api/admin/projects/default/features', { body: { name } })).status).toBe(201);
  }

  it('accepts REGEX, SEMVER_GTE and SEMVER_LTE and the frontend API evaluates them', async () => {
    await flagWith('modern.ops');
    const response = await call('POST', strategyPath('modern.ops'), {
      body: {
        name: 'default',
        constraints: [
          { contextName: 'userId', operator: 'REGEX', value: '^user-[0-9]+$', caseInsensitive: true },
          { contextName: 'appVersion', operator: 'SEMVER_GTE', value: '1.2.0' },
          { contextName: 'appVersion', operator: 'SEMVER_LTE', value: '2.0.0' },
        ],
      },
    });
    expect(response.status).toBe(200);
    // Switched on after the strategy exists, so no default strategy is added.
    expect((await call('POST', '/api/admin/projects/default/features/modern.ops/environments/development/on')).status).toBe(200);
    const enabledFor = async (query: string) => {
      const toggles = await bodyOf<{ toggles: { name: string }[] }>(await call('GET', `/api/frontend?${query}`, { token: frontendToken }));
      return toggles.toggles.some((toggle) => toggle.name === 'modern.ops');
    };
    expect(await enabledFor('userId=USER-42&properties[appVersion]=1.2.0')).toBe(true);
    expect(await enabledFor('userId=USER-42&properties[appVersion]=2.0.0')).toBe(true);
    expect(await enabledFor('userId=USER-42&properties[appVersion]=2.0.1'), '2.0.1').toBe(false);
    expect(await enabledFor('userId=guest&properties[appVersion]=1.5.0'), 'guest').toBe(false);
  });

  it('refuses an invalid or inverted REGEX with 400, writing nothing', async () => {
    await flagWith('modern.bad-ops');
    const before = await env.DB.prepare('SELECT count(*) AS n FROM feature_strategies WHERE feature_name = ?')
      .bind('modern.bad-ops')
      .first('n');
    for (const constraint of [
      { contextName: 'userId', operator: 'REGEX', value: '(unclosed' },
      { contextName: 'userId', operator: 'REGEX', value: '^a', inverted: true },
    ]) {
      const error = await expectError(
        await call('POST', strategyPath('modern.bad-ops'), { body: { name: 'default', constraints: [constraint] } }),
        400,
        'BadDataError',
      );
      expect(JSON.stringify(error.details), JSON.stringify(error.details)).toMatch(/regex|inverted/);
    }
    expect(
      await env.DB.prepare('SELECT count(*) AS n FROM feature_strategies WHERE feature_name = ?').bind('modern.bad-ops').first('n'),
    ).toBe(before);
  });
});
