/**
 * The official SDKs against the real Worker: `wrangler dev` on loopback with fresh state,
 * flags imported through the admin API, then unleash-client (Node SDK) polling the client
 * API and unleash-proxy-client calling the frontend API. Runs in Node (the Node SDK does not
 * run inside workerd).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Unleash } from 'unleash-client';
import { UnleashClient } from 'unleash-proxy-client';
import { startWorker } from '../bench/sdk/worker.mjs';
import { strategyBucket } from '../src/sdk/evaluation/murmur';
import { testWorkerPort } from './support/node-env';

// Several checkouts may run this suite at once on one machine: TEST_WORKER_PORT moves it.
const PORT = testWorkerPort(8793);
let worker: Awaited<ReturnType<typeof startWorker>>;
let clientKey: string;
let frontendKey: string;

async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${worker.base}${path}`, {
    method,
    headers: { authorization: worker.token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function createKey(type: string): Promise<string> {
  const response = await admin('POST', '/api/admin/api-tokens', { tokenName: `sdk-it-${type}`, type, environment: 'development' });
  expect(response.status).toBe(201);
  return ((await response.json()) as { secret: string }).secret;
}

const variants = [
  { name: 'red', weight: 500, weightType: 'variable', stickiness: 'userId', payload: { type: 'string', value: 'R' } },
  { name: 'blue', weight: 500, weightType: 'variable', stickiness: 'userId', overrides: [{ contextName: 'userId', values: ['vip'] }] },
];

const importPayload = {
  project: 'default',
  environment: 'development',
  data: {
    features: [
      { name: 'it.on' },
      { name: 'it.off' },
      { name: 'it.users' },
      { name: 'it.rollout' },
      { name: 'it.variants' },
      { name: 'it.region' },
      { name: 'it.child' },
    ],
    featureStrategies: [
      { name: 'default', featureName: 'it.on' },
      { name: 'default', featureName: 'it.off' },
      { name: 'userWithId', featureName: 'it.users', parameters: { userIds: '42,43' } },
      { name: 'flexibleRollout', featureName: 'it.rollout', parameters: { rollout: '50', stickiness: 'userId', groupId: 'it.rollout' } },
      { name: 'default', featureName: 'it.variants' },
      { name: 'default', featureName: 'it.region', constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }] },
      { name: 'default', featureName: 'it.child' },
    ],
    featureEnvironments: [
      { name: 'development', featureName: 'it.on', enabled: true },
      { name: 'development', featureName: 'it.off', enabled: false },
      { name: 'development', featureName: 'it.users', enabled: true },
      { name: 'development', featureName: 'it.rollout', enabled: true },
      { name: 'development', featureName: 'it.variants', enabled: true, variants },
      { name: 'development', featureName: 'it.region', enabled: true },
      { name: 'development', featureName: 'it.child', enabled: true },
    ],
    dependencies: [{ feature: 'it.child', dependencies: [{ feature: 'it.users', enabled: true }] }],
    tagTypes: [],
  },
};

interface Emitter {
  on(event: string, listener: (value: never) => void): unknown;
  once(event: string, listener: (value: never) => void): unknown;
}

/** The Node SDK is an EventEmitter; its typings need @types/node, which this project does not load. */
function events(sdk: Unleash | UnleashClient): Emitter {
  return sdk as unknown as Emitter;
}

function waitFor<T>(sdk: Unleash | UnleashClient, event: string, timeoutMs = 20_000): Promise<T> {
  const emitter = events(sdk);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${event}" within ${timeoutMs} ms`)), timeoutMs);
    emitter.once(event, (value: never) => {
      clearTimeout(timer);
      resolve(value as T);
    });
  });
}

beforeAll(async () => {
  worker = await startWorker({ port: PORT });
  const imported = await admin('POST', '/api/admin/features-batch/import', importPayload);
  expect(imported.status).toBe(200);
  clientKey = await createKey('client');
  frontendKey = await createKey('frontend');
}, 120_000);

afterAll(async () => {
  await worker?.stop();
});

const USERS = ['1', '2', '3', '4', '5', '6', '7', '8', '42', 'vip'];

describe('unleash-client (Node SDK) against /api/client', () => {
  it('synchronises, evaluates like Unleash, registers, sends metrics and sees changes', async () => {
    const unleash = new Unleash({
      url: `${worker.base}/api/`,
      appName: 'sdk-integration',
      customHeaders: { Authorization: clientKey },
      refreshInterval: 500,
      metricsInterval: 500,
      skipInstanceCountWarning: true,
    });
    const errors: Error[] = [];
    events(unleash).on('error', (error: Error) => errors.push(error));
    const warnings: string[] = [];
    events(unleash).on('warn', (warning: string) => warnings.push(warning));
    const registered = waitFor(unleash, 'registered');
    const sent = waitFor(unleash, 'sent');
    const unchanged = waitFor(unleash, 'unchanged');
    try {
      await waitFor(unleash, 'synchronized');
      expect(unleash.isEnabled('it.on')).toBe(true);
      expect(unleash.isEnabled('it.off')).toBe(false);
      expect(unleash.isEnabled('it.users', { userId: '42' })).toBe(true);
      expect(unleash.isEnabled('it.users', { userId: '1' })).toBe(false);
      expect(unleash.isEnabled('it.child', { userId: '43' })).toBe(true);
      expect(unleash.isEnabled('it.child', { userId: '1' })).toBe(false);
      expect(unleash.isEnabled('it.region', { properties: { region: 'eu' } })).toBe(true);
      expect(unleash.isEnabled('it.region', { properties: { region: 'us' } })).toBe(false);
      for (const userId of USERS) {
        expect(unleash.isEnabled('it.rollout', { userId })).toBe(strategyBucket(userId, 'it.rollout') <= 50);
      }
      expect(unleash.getVariant('it.variants', { userId: 'vip' })).toMatchObject({ name: 'blue', enabled: true, feature_enabled: true });
      const red = unleash.getVariant('it.variants', { userId: '1' });
      expect(['red', 'blue']).toContain(red.name);
      if (red.name === 'red') expect(red.payload).toEqual({ type: 'string', value: 'R' });

      await registered;
      await unchanged;
      await sent;

      const off = await admin('POST', '/api/admin/projects/default/features/it.on/environments/development/off');
      expect(off.status).toBe(200);
      await waitFor(unleash, 'changed');
      expect(unleash.isEnabled('it.on')).toBe(false);
      const changedBack = waitFor(unleash, 'changed');
      expect((await admin('POST', '/api/admin/projects/default/features/it.on/environments/development/on')).status).toBe(200);
      await changedBack;
      expect(unleash.isEnabled('it.on')).toBe(true);
      expect(errors).toEqual([]);
      expect(warnings).toEqual([]);
    } finally {
      unleash.destroy();
    }
  }, 60_000);

  it('is refused with a frontend key (the SDK reports an error and does not synchronise)', async () => {
    const unleash = new Unleash({
      url: `${worker.base}/api/`,
      appName: 'sdk-integration-wrong-key',
      customHeaders: { Authorization: frontendKey },
      refreshInterval: 500,
      disableMetrics: true,
      skipInstanceCountWarning: true,
    });
    try {
      const error = await waitFor<Error>(unleash, 'error');
      expect(String(error.message)).toContain('403');
      expect(unleash.isEnabled('it.on')).toBe(false);
    } finally {
      unleash.destroy();
    }
  }, 30_000);
});

describe('unleash-proxy-client (frontend SDK) against /api/frontend', () => {
  for (const usePOSTrequests of [false, true]) {
    it(`gets the enabled flags and variants for its context (${usePOSTrequests ? 'POST' : 'GET'})`, async () => {
      const client = new UnleashClient({
        url: `${worker.base}/api/frontend`,
        clientKey: frontendKey,
        appName: 'web-integration',
        refreshInterval: 1,
        metricsInterval: 1,
        // Start the metrics timer at once: stop() clears it, but not the 2 s initial delay (unleash-proxy-client 3.8.2).
        metricsIntervalInitial: 0,
        usePOSTrequests,
        context: { userId: '42', properties: { region: 'eu' } },
      });
      try {
        await client.start();
        expect(client.isEnabled('it.on')).toBe(true);
        expect(client.isEnabled('it.off')).toBe(false);
        expect(client.isEnabled('it.users')).toBe(true);
        expect(client.isEnabled('it.child')).toBe(true);
        expect(client.isEnabled('it.region')).toBe(true);
        expect(client.isEnabled('it.rollout')).toBe(strategyBucket('42', 'it.rollout') <= 50);

        for (const userId of USERS) {
          await client.updateContext({ userId, properties: { region: 'us' } });
          expect(client.isEnabled('it.users')).toBe(userId === '42');
          expect(client.isEnabled('it.region')).toBe(false);
          expect(client.isEnabled('it.rollout')).toBe(strategyBucket(userId, 'it.rollout') <= 50);
          const variant = client.getVariant('it.variants');
          expect(variant.enabled).toBe(true);
          if (userId === 'vip') expect(variant.name).toBe('blue');
        }
      } finally {
        client.stop();
      }
    }, 60_000);
  }

  it('agrees with the Node SDK on every variant', async () => {
    const unleash = new Unleash({
      url: `${worker.base}/api/`,
      appName: 'sdk-integration-variants',
      customHeaders: { Authorization: clientKey },
      refreshInterval: 60_000,
      disableMetrics: true,
      skipInstanceCountWarning: true,
    });
    const client = new UnleashClient({
      url: `${worker.base}/api/frontend`,
      clientKey: frontendKey,
      appName: 'web',
      disableRefresh: true,
      disableMetrics: true,
    });
    try {
      await waitFor(unleash, 'synchronized');
      await client.start();
      for (const userId of USERS) {
        await client.updateContext({ userId });
        const server = client.getVariant('it.variants');
        const local = unleash.getVariant('it.variants', { userId });
        expect({ userId, name: server.name, payload: server.payload }).toEqual({ userId, name: local.name, payload: local.payload });
      }
    } finally {
      client.stop();
      unleash.destroy();
    }
  }, 60_000);
});

describe('unleash-client (Node SDK) in delta polling and streaming modes', () => {
  it('polls /api/client/delta: hydrates, gets 304s, then applies a change', async () => {
    const unleash = new Unleash({
      url: `${worker.base}/api/`,
      appName: 'sdk-integration-delta',
      customHeaders: { Authorization: clientKey },
      refreshInterval: 300,
      disableMetrics: true,
      skipInstanceCountWarning: true,
      experimentalMode: { type: 'polling', format: 'delta' },
    });
    const warnings: string[] = [];
    events(unleash).on('warn', (warning: string) => warnings.push(warning));
    const errors: Error[] = [];
    events(unleash).on('error', (error: Error) => errors.push(error));
    try {
      await waitFor(unleash, 'synchronized');
      expect(unleash.isEnabled('it.users', { userId: '42' })).toBe(true);
      expect(unleash.isEnabled('it.child', { userId: '43' })).toBe(true);
      await waitFor(unleash, 'unchanged');
      const changed = waitFor(unleash, 'changed');
      expect((await admin('POST', '/api/admin/projects/default/features/it.off/environments/development/on')).status).toBe(200);
      await changed;
      expect(unleash.isEnabled('it.off')).toBe(true);
      // The rest came from the delta, not a new full fetch: unchanged flags still evaluate.
      expect(unleash.isEnabled('it.users', { userId: '42' })).toBe(true);
      const removed = waitFor(unleash, 'changed');
      expect((await admin('DELETE', '/api/admin/projects/default/features/it.region')).status).toBe(202);
      await removed;
      expect(unleash.getFeatureToggleDefinition('it.region')).toBeUndefined();
      expect(errors).toEqual([]);
      expect(warnings).toEqual([]);
    } finally {
      unleash.destroy();
      await admin('POST', '/api/admin/projects/default/features/it.off/environments/development/off');
    }
  }, 60_000);

  it('streams from /api/client/streaming and sees a change within the revision tick plus one second', async () => {
    const unleash = new Unleash({
      url: `${worker.base}/api/`,
      appName: 'sdk-integration-streaming',
      customHeaders: { Authorization: clientKey },
      disableMetrics: true,
      skipInstanceCountWarning: true,
      experimentalMode: { type: 'streaming' },
    });
    const warnings: string[] = [];
    events(unleash).on('warn', (warning: string) => warnings.push(warning));
    try {
      await waitFor(unleash, 'synchronized');
      expect(unleash.isEnabled('it.on')).toBe(true);
      for (const state of ['off', 'on'] as const) {
        const changed = waitFor(unleash, 'changed', 5_000);
        const written = Date.now();
        expect((await admin('POST', `/api/admin/projects/default/features/it.on/environments/development/${state}`)).status).toBe(200);
        await changed;
        const latency = Date.now() - written;
        expect(unleash.isEnabled('it.on')).toBe(state === 'on');
        // Default SDK_REVISION_CHECK_MS is 1000 ms.
        expect(latency).toBeLessThan(2_000);
      }
      expect(warnings).toEqual([]);
    } finally {
      unleash.destroy();
    }
  }, 60_000);

  it('serves several streaming SDKs from one tick, and the others keep up when one leaves', async () => {
    const make = (appName: string) =>
      new Unleash({
        url: `${worker.base}/api/`,
        appName,
        customHeaders: { Authorization: clientKey },
        disableMetrics: true,
        skipInstanceCountWarning: true,
        experimentalMode: { type: 'streaming' },
      });
    const first = make('sdk-streaming-first');
    const second = make('sdk-streaming-second');
    try {
      await Promise.all([waitFor(first, 'synchronized'), waitFor(second, 'synchronized')]);
      const bothChanged = Promise.all([waitFor(first, 'changed', 5_000), waitFor(second, 'changed', 5_000)]);
      expect((await admin('POST', '/api/admin/projects/default/features/it.off/environments/development/on')).status).toBe(200);
      await bothChanged;
      expect([first.isEnabled('it.off'), second.isEnabled('it.off')]).toEqual([true, true]);

      first.destroy();
      for (const state of ['off', 'on', 'off'] as const) {
        const changed = waitFor(second, 'changed', 5_000);
        const written = Date.now();
        expect((await admin('POST', `/api/admin/projects/default/features/it.off/environments/development/${state}`)).status).toBe(200);
        await changed;
        expect(Date.now() - written).toBeLessThan(2_000);
        expect(second.isEnabled('it.off')).toBe(state === 'on');
      }
    } finally {
      first.destroy();
      second.destroy();
    }
  }, 60_000);
});

/** The three ways a backend SDK syncs: each must get its flags with the key under test. */
const SYNC_MODES = [
  { label: 'polling', experimentalMode: undefined },
  { label: 'delta polling', experimentalMode: { type: 'polling', format: 'delta' } as const },
  { label: 'streaming', experimentalMode: { type: 'streaming' } as const },
];

/** The Node SDK with `key` in one sync mode: synchronises without an error and evaluates the seeded flags. */
async function expectSdkFlags(key: string, appName: string, experimentalMode: (typeof SYNC_MODES)[number]['experimentalMode']) {
  const unleash = new Unleash({
    url: `${worker.base}/api/`,
    appName,
    customHeaders: { Authorization: key },
    refreshInterval: 500,
    disableMetrics: true,
    skipInstanceCountWarning: true,
    ...(experimentalMode ? { experimentalMode } : {}),
  });
  const errors: Error[] = [];
  events(unleash).on('error', (error: Error) => errors.push(error));
  try {
    await waitFor(unleash, 'synchronized');
    expect(unleash.isEnabled('it.on')).toBe(true);
    expect(unleash.isEnabled('it.users', { userId: '42' })).toBe(true);
    expect(unleash.isEnabled('it.users', { userId: '1' })).toBe(false);
    expect(errors).toEqual([]);
  } finally {
    unleash.destroy();
  }
}

describe('unleash-client (Node SDK) with a backend key (Unleash 7+)', () => {
  for (const { label, experimentalMode } of SYNC_MODES) {
    it(`gets its flags in ${label} mode`, async () => {
      const backendKey = await createKey('backend');
      expect(backendKey).toMatch(/^\*:development\.[0-9a-f]+$/);
      await expectSdkFlags(backendKey, `sdk-integration-backend-${label.replace(' ', '-')}`, experimentalMode);
    }, 60_000);
  }
});

describe('unleash-client (Node SDK) with a v2 key brought from Unleash 8.1+', () => {
  /** A v2 secret as 8.2.0 makes one under `secureTokenStorage`: 16 and 32 random bytes, base64url. */
  function v2Secret(): string {
    const part = (bytes: number) =>
      btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(bytes))))
        .replaceAll('+', '-')
        .replaceAll('/', '_')
        .replace(/=+$/, '');
    return `*:development.v2_${part(16)}_${part(32)}`;
  }
  for (const { label, experimentalMode } of SYNC_MODES) {
    it(`gets its flags in ${label} mode`, async () => {
      const secret = v2Secret();
      const imported = await admin('POST', '/api/admin/api-tokens/import', {
        secret,
        tokenName: `sdk-it-v2-${label.replace(' ', '-')}`,
        type: 'backend',
        environment: 'development',
      });
      expect(imported.status).toBe(201);
      await expectSdkFlags(secret, `sdk-integration-v2-${label.replace(' ', '-')}`, experimentalMode);
    }, 60_000);
  }
});
