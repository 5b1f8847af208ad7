import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../src/env';
import { strategyBucket } from '../src/sdk/evaluation/murmur';
import type { IRequest } from 'itty-router';
import { preflight, withCors } from '../src/http/cors';
import { ADMIN_TOKEN, bodyOf, call, createToken, expectError } from './support/http';
import { captureLogs } from './support/logs';
import { seedFlag, seedProject, seedSegment, writeWithEvent } from './support/sdk-seed';
import { settleMetrics } from './support/metrics';

let frontendToken: string;
let scopedToken: string;
let clientToken: string;

/** Express's weak ETag (what Unleash sends): byte length in hex, then base64 SHA-1 cut to 27 characters. */
async function expressWeakEtag(body: string): Promise<string> {
  const bytes = new TextEncoder().encode(body);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-1', bytes));
  return `W/"${bytes.byteLength.toString(16)}-${btoa(String.fromCharCode(...digest)).slice(0, 27)}"`;
}

interface Toggle {
  name: string;
  enabled: boolean;
  variant: { name: string; enabled: boolean; payload?: { type: string; value: string }; feature_enabled: boolean; featureEnabled: boolean };
  impressionData: boolean;
}

beforeAll(async () => {
  await seedProject('fe-other');
  frontendToken = await createToken({ tokenName: 'fe', type: 'frontend', environment: 'development' });
  scopedToken = await createToken({ tokenName: 'fe-scoped', type: 'frontend', environment: 'development', projects: ['fe-other'] });
  clientToken = await createToken({ tokenName: 'fe-client', type: 'client', environment: 'development' });

  const segment = await seedSegment('fe-eu', [{ contextName: 'region', operator: 'IN', values: ['eu'] }]);
  await seedFlag({
    name: 'fe.on',
    impressionData: true,
    environments: { development: { enabled: true, strategies: [{ name: 'default' }] } },
  });
  await seedFlag({ name: 'fe.off', environments: { development: { enabled: false, strategies: [{ name: 'default' }] } } });
  await seedFlag({
    name: 'fe.users',
    environments: { development: { enabled: true, strategies: [{ name: 'userWithId', parameters: { userIds: '42, 43' } }] } },
  });
  await seedFlag({
    name: 'fe.region',
    environments: {
      development: {
        enabled: true,
        strategies: [{ name: 'default', constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }] }],
      },
    },
  });
  await seedFlag({
    name: 'fe.segment',
    environments: { development: { enabled: true, strategies: [{ name: 'default', segments: [segment] }] } },
  });
  await seedFlag({
    name: 'fe.variants',
    environments: {
      development: {
        enabled: true,
        strategies: [{ name: 'default' }],
        variants: [
          { name: 'red', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{"color":"red"}' } },
          {
            name: 'blue',
            weight: 500,
            weightType: 'variable',
            stickiness: 'default',
            overrides: [{ contextName: 'userId', values: ['vip'] }],
          },
        ],
      },
    },
  });
  await seedFlag({
    name: 'fe.strategy-variant',
    environments: {
      development: {
        enabled: true,
        strategies: [
          {
            name: 'flexibleRollout',
            parameters: { rollout: '100', stickiness: 'default', groupId: 'fe.strategy-variant' },
            variants: [
              { name: 'only', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'hi' } },
            ],
          },
        ],
      },
    },
  });
  await seedFlag({ name: 'fe.child', environments: { development: { enabled: true } }, dependencies: [{ parent: 'fe.users' }] });
  await seedFlag({
    name: 'fe.rollout',
    environments: {
      development: {
        enabled: true,
        strategies: [{ name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'userId', groupId: 'fe.rollout' } }],
      },
    },
  });
  await seedFlag({
    name: 'fe.ip',
    environments: { development: { enabled: true, strategies: [{ name: 'remoteAddress', parameters: { IPs: '198.51.100.0/24' } }] } },
  });
  await seedFlag({ name: 'fe.scoped', project: 'fe-other', environments: { development: { enabled: true } } });
});

async function toggles(path: string, init: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const response = await call(init.body === undefined ? 'GET' : 'POST', path, {
    token: init.token ?? frontendToken,
    body: init.body,
    headers: init.headers,
  });
  expect(response.status).toBe(200);
  const body = await bodyOf<{ toggles: Toggle[] }>(response);
  return { response, toggles: body.toggles, byName: new Map(body.toggles.map((toggle) => [toggle.name, toggle])) };
}

const ENABLED_NO_VARIANT = { name: 'disabled', enabled: false, feature_enabled: true, featureEnabled: true };

describe('GET /api/frontend', () => {
  it('returns only the enabled flags, each with its variant, in Unleash’s shape', async () => {
    const { response, toggles: list, byName } = await toggles('/api/frontend?userId=1');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(byName.has('fe.off')).toBe(false);
    expect(byName.has('fe.users')).toBe(false);
    expect(byName.has('fe.scoped')).toBe(true);
    const on = list.find((toggle) => toggle.name === 'fe.on')!;
    expect(Object.keys(on)).toEqual(['name', 'enabled', 'variant', 'impressionData']);
    expect(on).toEqual({ name: 'fe.on', enabled: true, variant: ENABLED_NO_VARIANT, impressionData: true });
    expect(list.every((toggle) => toggle.enabled)).toBe(true);
  });

  it('reads the context from query parameters, with properties[...] and other keys as properties', async () => {
    const plain = await toggles('/api/frontend');
    expect(plain.byName.has('fe.region')).toBe(false);
    expect(plain.byName.has('fe.segment')).toBe(false);
    const bracket = await toggles('/api/frontend?userId=42&properties%5Bregion%5D=eu');
    expect(bracket.byName.has('fe.users')).toBe(true);
    expect(bracket.byName.has('fe.region')).toBe(true);
    expect(bracket.byName.has('fe.segment')).toBe(true);
    const moved = await toggles('/api/frontend?region=eu');
    expect(moved.byName.has('fe.region')).toBe(true);
  });

  it('evaluates dependencies on parent flags', async () => {
    expect((await toggles('/api/frontend?userId=42')).byName.has('fe.child')).toBe(true);
    expect((await toggles('/api/frontend?userId=7')).byName.has('fe.child')).toBe(false);
  });

  it('picks variants: overrides, payloads, strategy variants', async () => {
    const vip = await toggles('/api/frontend?userId=vip');
    expect(vip.byName.get('fe.variants')!.variant).toEqual({ name: 'blue', enabled: true, feature_enabled: true, featureEnabled: true });
    const strategy = vip.byName.get('fe.strategy-variant')!;
    expect(Object.keys(strategy.variant)).toEqual(['name', 'enabled', 'payload', 'feature_enabled', 'featureEnabled']);
    expect(strategy.variant).toEqual({
      name: 'only',
      enabled: true,
      payload: { type: 'string', value: 'hi' },
      feature_enabled: true,
      featureEnabled: true,
    });
    // A sticky user gets the same variant every time.
    const picks = new Set<string>();
    for (let i = 0; i < 3; i++) picks.add((await toggles('/api/frontend?userId=user-17')).byName.get('fe.variants')!.variant.name);
    expect(picks.size).toBe(1);
  });

  it('rolls out by MurmurHash3 buckets of the stickiness field', async () => {
    for (const userId of ['1', '2', '3', '4', '5', '6']) {
      const expected = strategyBucket(userId, 'fe.rollout') <= 50;
      expect((await toggles(`/api/frontend?userId=${userId}`)).byName.has('fe.rollout')).toBe(expected);
    }
  });

  it("uses the caller's address as remoteAddress unless the context has one", async () => {
    expect((await toggles('/api/frontend', { headers: { 'cf-connecting-ip': '198.51.100.7' } })).byName.has('fe.ip')).toBe(true);
    expect((await toggles('/api/frontend', { headers: { 'cf-connecting-ip': '203.0.113.1' } })).byName.has('fe.ip')).toBe(false);
    expect(
      (await toggles('/api/frontend?remoteAddress=198.51.100.9', { headers: { 'cf-connecting-ip': '203.0.113.1' } })).byName.has('fe.ip'),
    ).toBe(true);
  });

  it("limits flags to the token's projects", async () => {
    const { toggles: list } = await toggles('/api/frontend', { token: scopedToken });
    expect(list.map((toggle) => toggle.name)).toEqual(['fe.scoped']);
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const first = await toggles('/api/frontend?userId=42');
    const etag = first.response.headers.get('etag')!;
    expect(etag).toBe(await expressWeakEtag(JSON.stringify({ toggles: first.toggles })));
    const again = await call('GET', '/api/frontend?userId=42', {
      token: frontendToken,
      headers: { 'If-None-Match': etag, origin: 'https://app.example' },
    });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('access-control-allow-origin')).toBe('*');
    expect(again.headers.get('access-control-expose-headers')).toBe('ETag');
    // Another context, another body: no 304 for the old tag.
    const other = await call('GET', '/api/frontend?userId=7', { token: frontendToken, headers: { 'If-None-Match': etag } });
    expect(other.status).toBe(200);
    expect(other.headers.get('etag')).not.toBe(etag);
  });

  it('refuses missing keys (401) and client keys (403), with CORS headers on the error', async () => {
    const missing = await call('GET', '/api/frontend', { token: null, headers: { origin: 'https://app.example' } });
    expect(missing.headers.get('access-control-allow-origin')).toBe('*');
    await expectError(missing, 401, 'AuthenticationRequired');
    await expectError(await call('GET', '/api/frontend', { token: clientToken }), 403, 'NoAccessError');
  });

  it('refuses admin keys with 403, as the SDK protocol reference says', async () => {
    const response = await call('GET', '/api/frontend', { token: ADMIN_TOKEN });
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    await expectError(response, 403, 'NoAccessError');
    await expectError(await call('POST', '/api/frontend', { token: ADMIN_TOKEN, body: { context: {} } }), 403, 'NoAccessError');
  });
});

describe('answers kept per context', () => {
  it('serves a repeated context the same answer until a write, then the new one', async () => {
    await seedProject('fe-cache');
    const token = await createToken({ tokenName: 'fe-cache', type: 'frontend', environment: 'development', projects: ['fe-cache'] });
    await seedFlag({
      name: 'fe.cache.users',
      project: 'fe-cache',
      environments: { development: { enabled: true, strategies: [{ name: 'userWithId', parameters: { userIds: '42' } }] } },
    });
    const path = '/api/frontend?userId=42&sessionId=s1';
    const first = await toggles(path, { token });
    expect(first.toggles.map((toggle) => toggle.name)).toEqual(['fe.cache.users']);
    const again = await toggles(path, { token });
    expect(again.response.headers.get('etag')).toBe(first.response.headers.get('etag'));
    expect((await toggles('/api/frontend?userId=7&sessionId=s1', { token })).toggles).toEqual([]);

    await writeWithEvent(`UPDATE feature_environments SET enabled = 0 WHERE feature_name = 'fe.cache.users'`);
    const changed = await call('GET', path, { token, headers: { 'If-None-Match': first.response.headers.get('etag')! } });
    expect(changed.status).toBe(200);
    expect((await bodyOf<{ toggles: Toggle[] }>(changed)).toggles).toEqual([]);
  });

  it("keeps answers for a query with a sessionId apart per caller's address", async () => {
    const path = '/api/frontend?userId=1&sessionId=s-ip';
    for (const [ip, expected] of [
      ['198.51.100.7', true],
      ['203.0.113.1', false],
      ['198.51.100.7', true],
      ['203.0.113.1', false],
    ] as const) {
      expect((await toggles(path, { headers: { 'cf-connecting-ip': ip } })).byName.has('fe.ip')).toBe(expected);
    }
  });

  it('evaluates again every time when a flag reads a random number', async () => {
    await seedProject('fe-random');
    const token = await createToken({ tokenName: 'fe-random', type: 'frontend', environment: 'development', projects: ['fe-random'] });
    await seedFlag({
      name: 'fe.random',
      project: 'fe-random',
      environments: {
        development: {
          enabled: true,
          strategies: [{ name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'random', groupId: 'fe.random' } }],
        },
      },
    });
    const seen = new Set<boolean>();
    for (let i = 0; i < 40 && seen.size < 2; i++) {
      seen.add((await toggles('/api/frontend?userId=42&sessionId=s1', { token })).byName.has('fe.random'));
    }
    // 40 cached answers would all agree; fresh random rollouts at 50 % disagree (odds of not: 2^-39).
    expect(seen).toEqual(new Set([true, false]));
  });
});

describe('POST /api/frontend', () => {
  it('reads the context from body.context', async () => {
    const { byName } = await toggles('/api/frontend', { body: { context: { userId: '42', properties: { region: 'eu' } } } });
    expect(byName.has('fe.users')).toBe(true);
    expect(byName.has('fe.region')).toBe(true);
  });

  it('also accepts a bare context object, as Edge does', async () => {
    const { byName } = await toggles('/api/frontend', { body: { userId: '43', region: 'eu' } });
    expect(byName.has('fe.users')).toBe(true);
    expect(byName.has('fe.region')).toBe(true);
  });

  it('ignores context values that are not text and names like __proto__', async () => {
    const response = await call('POST', '/api/frontend', {
      token: frontendToken,
      rawBody: '{"context":{"userId":{"x":1},"__proto__":{"region":"eu"},"properties":{"__proto__":"eu","constructor":"x"}}}',
    });
    expect(response.status).toBe(200);
    const { toggles: list } = await bodyOf<{ toggles: Toggle[] }>(response);
    expect(list.some((toggle) => toggle.name === 'fe.users' || toggle.name === 'fe.region')).toBe(false);
  });

  it('rejects non-JSON bodies with 415 and malformed JSON with 400', async () => {
    await expectError(
      await call('POST', '/api/frontend', { token: frontendToken, rawBody: 'x', contentType: 'text/plain' }),
      415,
      'ContentTypeerror',
    );
    await expectError(await call('POST', '/api/frontend', { token: frontendToken, rawBody: '{"context":' }), 400, 'ValidationError');
  });
});

describe('CORS on /api/frontend', () => {
  const SDK_HEADERS = 'authorization, content-type, if-none-match, unleash-appname, unleash-connection-id, unleash-sdk';

  it('answers a preflight without a key; `*` goes without Allow-Credentials', async () => {
    const response = await call('OPTIONS', '/api/frontend', {
      token: null,
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization,if-none-match',
      },
    });
    expect(response.status).toBe(204);
    expect(Object.fromEntries(response.headers)).toEqual({
      vary: 'Origin, Access-Control-Request-Headers',
      'access-control-allow-origin': '*',
      'access-control-expose-headers': 'ETag',
      'access-control-allow-methods': 'GET,HEAD,PUT,PATCH,POST,DELETE',
      'access-control-allow-headers': SDK_HEADERS,
      'access-control-max-age': '86400',
    });
    const sub = await call('OPTIONS', '/api/frontend/client/metrics', { token: null, headers: { origin: 'https://app.example' } });
    expect(sub.status).toBe(204);
    expect(sub.headers.get('access-control-allow-headers')).toBe(SDK_HEADERS);
  });

  // One preflight per header the browser SDKs send, as a browser asks for it (any case).
  for (const header of [
    'unleash-sdk',
    'unleash-appname',
    'unleash-connection-id',
    'if-none-match',
    'content-type',
    'authorization',
    'Unleash-SDK',
    'Authorization',
  ]) {
    it(`allows the ${header} request header`, async () => {
      const response = await call('OPTIONS', '/api/frontend', {
        token: null,
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': header },
      });
      expect(response.status).toBe(204);
      const allowed = response.headers
        .get('access-control-allow-headers')!
        .split(',')
        .map((name) => name.trim());
      expect(allowed).toContain(header.toLowerCase());
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.has('access-control-allow-credentials')).toBe(false);
    });
  }

  it("allows other well-formed headers the SDK's customHeaders add, and drops malformed names", async () => {
    const response = await call('OPTIONS', '/api/frontend', {
      token: null,
      headers: { origin: 'https://app.example', 'access-control-request-headers': 'X-Tenant, bad header, unleash-sdk, x(y)' },
    });
    expect(response.headers.get('access-control-allow-headers')).toBe(`${SDK_HEADERS}, x-tenant`);
  });

  it('reflects only the origins FRONTEND_API_ORIGINS allows, with credentials, when it lists some', () => {
    const restricted = { ...(env as unknown as Env), FRONTEND_API_ORIGINS: 'https://app.example, https://admin.example' };
    const ask = (origin: string) =>
      preflight(new Request('http://localhost/api/frontend', { method: 'OPTIONS', headers: { origin } }), restricted);
    const allowed = ask('https://admin.example');
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://admin.example');
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    const refused = ask('https://evil.example');
    expect(refused.status).toBe(204);
    expect(refused.headers.has('access-control-allow-origin')).toBe(false);
    expect(refused.headers.has('access-control-allow-credentials')).toBe(false);
    expect(refused.headers.get('vary')).toBe('Origin, Access-Control-Request-Headers');
  });

  it('sets the same headers on answers and errors from a restricted list', async () => {
    const restricted = { ...(env as unknown as Env), FRONTEND_API_ORIGINS: 'https://app.example' };
    const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext;
    const answer = withCors(async () => new Response('{}', { headers: { etag: 'W/"2-x"' } }));
    const request = new Request('http://localhost/api/frontend', { headers: { origin: 'https://app.example' } });
    const ok = await answer(request as IRequest, restricted, ctx);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
    expect(ok.headers.get('etag')).toBe('W/"2-x"');
    expect(await ok.text()).toBe('{}');
    const failing = withCors(async () => {
      throw new Error('boom');
    });
    const logs = captureLogs();
    const error = await failing(request as IRequest, restricted, ctx);
    expect(error.status).toBe(500);
    expect(logs.messages()).toEqual(['unhandled error']);
    expect(error.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });

  it('sends the CORS headers on answers', async () => {
    const { response } = await toggles('/api/frontend', { headers: { origin: 'https://app.example' } });
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.has('access-control-allow-credentials')).toBe(false);
    expect(response.headers.get('access-control-expose-headers')).toBe('ETag');
    expect(response.headers.get('vary')).toBe('Origin');
  });
});

describe('/api/frontend/client/*', () => {
  it('takes metrics (200) into the same hourly roll-up', async () => {
    const stop = new Date().toISOString();
    const response = await call('POST', '/api/frontend/client/metrics', {
      token: frontendToken,
      body: {
        appName: 'web',
        instanceId: 'browser',
        bucket: { start: stop, stop, toggles: { 'fe.on': { yes: 2, no: 1, variants: { disabled: 3 } } } },
      },
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('OK');
    await settleMetrics();
    const row = await env.DB.prepare(
      'SELECT environment, timestamp, yes, no FROM client_metrics_env WHERE feature_name = ? AND app_name = ?',
    )
      .bind('fe.on', 'web')
      .first();
    expect(row).toEqual({ environment: 'development', timestamp: `${stop.slice(0, 13)}:00:00.000Z`, yes: 2, no: 1 });
    await expectError(
      await call('POST', '/api/frontend/client/metrics', { token: frontendToken, body: { bucket: {} } }),
      400,
      'ValidationError',
    );
  });

  it('accepts registration (200) and refuses the endpoints Unleash does not implement (405)', async () => {
    const register = await call('POST', '/api/frontend/client/register', {
      token: frontendToken,
      body: { appName: 'web', interval: 30000, started: Date.now(), strategies: [] },
    });
    expect(register.status).toBe(200);
    for (const path of ['/api/frontend/client/features', '/api/frontend/health', '/api/frontend/internal-backstage/prometheus']) {
      const body = await expectError(await call('GET', path, { token: frontendToken }), 405, 'NotImplementedError');
      expect(body.message).toBe('The frontend API does not support this endpoint.');
    }
  });
});
