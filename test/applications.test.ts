import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFeature, FLAG_KEYS } from './support/admin';
import { count, rows } from './support/db';
import { eventually } from './support/eventually';
import { call, createToken, expectError } from './support/http';
import { settleMetrics } from './support/metrics';
import { unique } from './support/names';
import { signInAs } from './support/users';

let clientToken: string;
let productionToken: string;
let viewer: string;
let editor: string;

beforeAll(async () => {
  clientToken = await createToken({ tokenName: 'apps-client', type: 'client', environment: 'development' });
  productionToken = await createToken({ tokenName: 'apps-client-prod', type: 'client', environment: 'production' });
  viewer = await signInAs('Viewer');
  editor = await signInAs('Editor');
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
/** The data of `application-created`, in 6.10.1's key order (whoever created the application). */
const APPLICATION_CREATED_KEYS = ['appName', 'createdAt', 'updatedAt', 'description', 'strategies', 'createdBy', 'url', 'color', 'icon'];

/** An SDK registering through the real endpoint. */
async function register(appName: string, instanceId: string, sdkVersion: string, strategies: string[], token = clientToken) {
  const response = await call('POST', '/api/client/register', {
    token,
    body: { appName, instanceId, sdkVersion, strategies, started: new Date().toISOString(), interval: 10000 },
    headers: { 'cf-connecting-ip': '192.0.2.7' },
  });
  expect(response.status).toBe(202);
}

/** An SDK reporting evaluations through the real endpoint. */
async function report(appName: string, instanceId: string, toggles: Record<string, { yes: number; no: number }>, token = clientToken) {
  const now = new Date().toISOString();
  const response = await call('POST', '/api/client/metrics', {
    token,
    body: { appName, instanceId, bucket: { start: now, stop: now, toggles } },
    headers: { 'cf-connecting-ip': '192.0.2.7' },
  });
  expect(response.status).toBe(202);
}

async function json(path: string, token?: string) {
  const response = await call('GET', path, token === undefined ? {} : { token });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text);
}

/** What an application write may change: applications, instances and the audit log. */
async function stored(appName: string) {
  return JSON.stringify([
    await rows('SELECT * FROM client_applications WHERE app_name = ?', appName),
    await rows('SELECT * FROM client_instances WHERE app_name = ? ORDER BY instance_id', appName),
    await count('SELECT count(*) AS n FROM events'),
  ]);
}

/** A registered application with two instances in development that reported one flag. */
async function reportedApplication() {
  const appName = unique('app');
  const flag = unique('app-flag');
  await createFeature(flag);
  await register(appName, 'i-node', 'unleash-client-node:5.0.0', ['default', 'mystery-strategy', 'gradualRolloutUserId']);
  await register(appName, 'i-java', 'unleash-client-java:10.0.0', ['default', 'mystery-strategy', 'gradualRolloutUserId']);
  await report(appName, 'i-node', { [flag]: { yes: 3, no: 1 } });
  await eventually(async () => {
    const body = await json(`/api/admin/metrics/applications/${appName}`);
    expect(body.instances).toHaveLength(2);
    expect(body.seenToggles).toHaveLength(1);
  });
  return { appName, flag };
}

describe('GET /api/admin/metrics/applications/:appName', () => {
  it('answers the application, its instances, strategies and reported flags in Unleash key order', async () => {
    const { appName, flag } = await reportedApplication();
    const body = await json(`/api/admin/metrics/applications/${appName}`, viewer);
    expect(Object.keys(body)).toEqual([
      'appName',
      'createdAt',
      'description',
      'url',
      'color',
      'icon',
      'strategies',
      'instances',
      'seenToggles',
      'links',
    ]);
    expect(body.appName).toBe(appName);
    expect(body.createdAt).toMatch(ISO);
    expect([body.description, body.url, body.color, body.icon]).toEqual([null, null, null, null]);
    expect(body.strategies[0]).toEqual({
      displayName: 'Standard',
      name: 'default',
      editable: false,
      description: expect.any(String),
      parameters: [],
      deprecated: false,
      title: null,
    });
    expect(Object.keys(body.strategies[0])).toEqual([
      'displayName',
      'name',
      'editable',
      'description',
      'parameters',
      'deprecated',
      'title',
    ]);
    expect(body.strategies.slice(1)).toEqual([
      { name: 'mystery-strategy', notFound: true },
      { name: 'gradualRolloutUserId', notFound: true },
    ]);
    expect(body.instances.map((instance: { instanceId: string }) => instance.instanceId).sort()).toEqual(['i-java', 'i-node']);
    const node = body.instances.find((instance: { instanceId: string }) => instance.instanceId === 'i-node');
    expect(Object.keys(node)).toEqual(['appName', 'instanceId', 'sdkVersion', 'clientIp', 'lastSeen', 'createdAt', 'environment']);
    expect(node).toMatchObject({ appName, sdkVersion: 'unleash-client-node:5.0.0', clientIp: '192.0.2.7', environment: 'development' });
    expect(body.seenToggles).toEqual([
      {
        name: flag,
        description: null,
        type: 'release',
        project: 'default',
        stale: false,
        createdAt: expect.stringMatching(ISO),
        lastSeenAt: expect.stringMatching(ISO),
        impressionData: false,
        archived: false,
      },
    ]);
    expect(Object.keys(body.seenToggles[0])).toEqual(FLAG_KEYS);
    expect(body.links).toEqual({ self: `/api/applications/${appName}` });
  });

  it('names an archived reported flag as not found', async () => {
    const { appName, flag } = await reportedApplication();
    expect((await call('DELETE', `/api/admin/projects/default/features/${flag}`)).status).toBe(202);
    const body = await json(`/api/admin/metrics/applications/${appName}`);
    expect(body.seenToggles).toEqual([{ name: flag, notFound: true }]);
  });

  it('lists only the flags reported in the last 24 hours', async () => {
    const { appName, flag } = await reportedApplication();
    const older = unique('app-older');
    await createFeature(older);
    const stop = new Date(Date.now() - 30 * 60 * 60 * 1000).toISOString();
    const response = await call('POST', '/api/client/metrics', {
      token: clientToken,
      body: { appName, instanceId: 'i-node', bucket: { start: stop, stop, toggles: { [older]: { yes: 1, no: 0 } } } },
    });
    expect(response.status).toBe(202);
    await eventually(async () => expect(await count('SELECT count(*) AS n FROM client_metrics_env WHERE feature_name = ?', older)).toBe(1));
    const body = await json(`/api/admin/metrics/applications/${appName}`);
    expect(body.seenToggles.map((toggle: { name: string }) => toggle.name)).toEqual([flag]);
  });

  it('answers 404 for an unknown application and 401 without a credential', async () => {
    const missing = await expectError(await call('GET', '/api/admin/metrics/applications/no-such-app'), 404, 'NotFoundError');
    expect(missing.message).toBe('Could not find appName=no-such-app');
    await expectError(await call('GET', '/api/admin/metrics/applications/no-such-app', { token: null }), 401, 'AuthenticationRequired');
    await expectError(await call('GET', '/api/admin/metrics/applications/x', { token: clientToken }), 403, 'NoAccessError');
  });
});

describe('GET /api/admin/metrics/applications', () => {
  it('lists applications with the environments they were seen in as usage, in Unleash key order', async () => {
    const { appName } = await reportedApplication();
    await register(appName, 'i-prod', 'unleash-client-node:6.0.0', ['default'], productionToken);
    const created = unique('app-created');
    expect((await call('POST', `/api/admin/metrics/applications/${created}`, { body: { description: 'made by hand' } })).status).toBe(202);
    await eventually(async () => {
      const body = await json(`/api/admin/metrics/applications?query=${appName}`);
      expect(body.applications[0].usage).toEqual([{ project: '*', environments: ['development', 'production'] }]);
    });
    const body = await json(`/api/admin/metrics/applications?query=${appName}`, viewer);
    expect(body.total).toBe(1);
    const [app] = body.applications;
    expect(Object.keys(app)).toEqual([
      'appName',
      'createdAt',
      'updatedAt',
      'description',
      'strategies',
      'createdBy',
      'url',
      'color',
      'icon',
      'usage',
    ]);
    expect(app).toMatchObject({ appName, description: null, strategies: ['default'], createdBy: 'unleash_system_user' });
    const hand = (await json(`/api/admin/metrics/applications?query=${created}`)).applications[0];
    expect(hand).toMatchObject({ appName: created, description: 'made by hand', strategies: [], createdBy: null, usage: [] });
  });

  it('pages and sorts by name', async () => {
    const prefix = unique('page');
    for (const suffix of ['b', 'a', 'c'])
      expect((await call('POST', `/api/admin/metrics/applications/${prefix}-${suffix}`, { body: {} })).status).toBe(202);
    const names = (query: string) =>
      json(`/api/admin/metrics/applications?query=${prefix}&${query}`).then((body) => [
        body.total,
        body.applications.map((app: { appName: string }) => app.appName),
      ]);
    expect(await names('limit=2')).toEqual([3, [`${prefix}-a`, `${prefix}-b`]]);
    expect(await names('limit=2&offset=2')).toEqual([3, [`${prefix}-c`]]);
    expect(await names('sortOrder=desc')).toEqual([3, [`${prefix}-c`, `${prefix}-b`, `${prefix}-a`]]);
    // A page past the end says total 0, as Unleash.
    expect(await names('offset=3')).toEqual([0, []]);
  });
});

describe('GET /api/admin/metrics/applications/:appName/overview', () => {
  it('answers per environment the instances, SDKs and issues, in Unleash key order', async () => {
    const { appName } = await reportedApplication();
    const body = await json(`/api/admin/metrics/applications/${appName}/overview`, viewer);
    expect(body).toEqual({
      projects: ['default'],
      featureCount: 1,
      environments: [
        {
          name: 'development',
          instanceCount: 2,
          sdks: ['unleash-client-java:10.0.0', 'unleash-client-node:5.0.0'],
          frontendSdks: [],
          backendSdks: ['unleash-client-java:10.0.0', 'unleash-client-node:5.0.0'],
          lastSeen: expect.stringMatching(ISO),
          issues: { missingFeatures: [], outdatedSdks: ['unleash-client-node:5.0.0'] },
        },
      ],
      issues: { missingStrategies: ['mystery-strategy'] },
    });
    expect(Object.keys(body)).toEqual(['projects', 'featureCount', 'environments', 'issues']);
    expect(Object.keys(body.environments[0])).toEqual([
      'name',
      'instanceCount',
      'sdks',
      'frontendSdks',
      'backendSdks',
      'lastSeen',
      'issues',
    ]);
  });

  it('answers 404 for an unknown application', async () => {
    const body = await expectError(await call('GET', '/api/admin/metrics/applications/no-such-app/overview'), 404, 'NotFoundError');
    expect(body.message).toBe('Could not find appName=no-such-app');
  });
});

describe('GET /api/admin/metrics/instances/:appName/environment/:environment', () => {
  it('lists the instances seen in the last 24 hours, most recent first', async () => {
    const { appName } = await reportedApplication();
    const before = await json(`/api/admin/metrics/instances/${appName}/environment/development`, viewer);
    expect(before.instances).toHaveLength(2);
    expect(Object.keys(before.instances[0])).toEqual(['instanceId', 'clientIp', 'sdkVersion', 'lastSeen']);
    // An instance last seen two days ago is no longer listed.
    const old = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000).toISOString();
    await env.DB.prepare("UPDATE client_instances SET last_seen = ? WHERE app_name = ? AND instance_id = 'i-java'")
      .bind(old, appName)
      .run();
    const after = await json(`/api/admin/metrics/instances/${appName}/environment/development`);
    expect(after).toEqual({
      instances: [
        { instanceId: 'i-node', clientIp: '192.0.2.7', sdkVersion: 'unleash-client-node:5.0.0', lastSeen: expect.stringMatching(ISO) },
      ],
    });
    expect(await json(`/api/admin/metrics/instances/${appName}/environment/production`)).toEqual({ instances: [] });
    expect(await json('/api/admin/metrics/instances/no-such-app/environment/nowhere')).toEqual({ instances: [] });
  });
});

describe('GET /api/admin/metrics/sdks/outdated', () => {
  it('lists the outdated SDK versions with the applications using them', async () => {
    const { appName } = await reportedApplication();
    const body = await json('/api/admin/metrics/sdks/outdated', viewer);
    const node = body.sdks.find((sdk: { sdkVersion: string }) => sdk.sdkVersion === 'unleash-client-node:5.0.0');
    expect(Object.keys(node)).toEqual(['sdkVersion', 'applications']);
    expect(node.applications).toContain(appName);
    // A current version and an SDK without a floor are not outdated.
    expect(body.sdks.map((sdk: { sdkVersion: string }) => sdk.sdkVersion)).not.toContain('unleash-client-java:10.0.0');
  });
});

describe('POST /api/admin/metrics/applications/:appName', () => {
  it('creates an application (202, no body), announcing it once as Unleash does, and later sets only the fields given', async () => {
    const appName = unique('app-post');
    const events = await count('SELECT count(*) AS n FROM events');
    const response = await call('POST', `/api/admin/metrics/applications/${appName}`, {
      token: editor,
      body: {
        description: 'Accounting',
        url: 'https://example.com',
        color: 'red',
        icon: 'ico',
        strategies: ['default', 'custom-one'],
        appName: 'ignored',
      },
    });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
    expect((await call('POST', `/api/admin/metrics/applications/${appName}`, { body: { color: 'blue' } })).status).toBe(202);
    const body = await json(`/api/admin/metrics/applications/${appName}`);
    expect(body).toMatchObject({ appName, description: 'Accounting', url: 'https://example.com', color: 'blue', icon: 'ico' });
    expect(body.strategies.map((strategy: { name: string }) => strategy.name)).toEqual(['default', 'custom-one']);
    expect(await count('SELECT count(*) AS n FROM client_applications WHERE app_name = ?', 'ignored')).toBe(0);
    // One application-created event for the new application, by Unleash's system user; none for the update.
    expect(await count('SELECT count(*) AS n FROM events')).toBe(events + 1);
    const [event] = await rows<{ type: string; created_by: string; created_by_user_id: number; data: string }>(
      "SELECT type, created_by, created_by_user_id, data FROM events WHERE type = 'application-created' AND json_extract(data, '$.appName') = ?",
      appName,
    );
    expect(event).toMatchObject({ type: 'application-created', created_by: 'unleash_system_user', created_by_user_id: -1337 });
    const data = JSON.parse(event!.data);
    expect(Object.keys(data)).toEqual(APPLICATION_CREATED_KEYS);
    expect(data).toMatchObject({
      appName,
      description: 'Accounting',
      strategies: ['default', 'custom-one'],
      createdBy: null,
      color: 'red',
    });
  });

  it('refuses bad input (400), a Viewer (403) and no credential (401), writing nothing', async () => {
    const appName = unique('app-refused');
    const before = await stored(appName);
    const url = await expectError(
      await call('POST', `/api/admin/metrics/applications/${appName}`, { body: { url: { a: 1 } } }),
      400,
      'ValidationError',
    );
    expect(url.details[0]).toMatchObject({ path: '/body/url' });
    const strategies = await expectError(
      await call('POST', `/api/admin/metrics/applications/${appName}`, { body: { strategies: 'x' } }),
      400,
      'ValidationError',
    );
    expect(strategies.details[0]).toMatchObject({ path: '/body/strategies' });
    const array = await expectError(await call('POST', `/api/admin/metrics/applications/${appName}`, { body: [] }), 400, 'ValidationError');
    expect(array.details[0]!.message).toBe('The `/body` property must be object. You sent [].');
    await expectError(
      await call('POST', `/api/admin/metrics/applications/${appName}`, { rawBody: 'x', contentType: 'text/plain' }),
      415,
      'ContentTypeerror',
    );
    const denied = await expectError(
      await call('POST', `/api/admin/metrics/applications/${appName}`, { token: viewer, body: { description: 'x' } }),
      403,
      'NoAccessError',
    );
    expect(denied.message).toContain('UPDATE_APPLICATION');
    await expectError(
      await call('POST', `/api/admin/metrics/applications/${appName}`, { token: null, body: {} }),
      401,
      'AuthenticationRequired',
    );
    await expectError(
      await call('POST', `/api/admin/metrics/applications/${appName}`, { token: clientToken, body: {} }),
      403,
      'NoAccessError',
    );
    expect(await stored(appName)).toBe(before);
  });
});

describe('DELETE /api/admin/metrics/applications/:appName', () => {
  it('removes the application and its instances (200, also for an unknown one), writing no event (as Unleash 6.10.1)', async () => {
    const { appName } = await reportedApplication();
    const events = await count('SELECT count(*) AS n FROM events');
    const response = await call('DELETE', `/api/admin/metrics/applications/${appName}`, { token: editor });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(await count('SELECT count(*) AS n FROM client_applications WHERE app_name = ?', appName)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM client_instances WHERE app_name = ?', appName)).toBe(0);
    await expectError(await call('GET', `/api/admin/metrics/applications/${appName}`), 404, 'NotFoundError');
    expect((await call('DELETE', '/api/admin/metrics/applications/no-such-app')).status).toBe(200);
    expect(await count('SELECT count(*) AS n FROM events')).toBe(events);
  });

  it('refuses a Viewer (403) and no credential (401), removing nothing', async () => {
    const { appName } = await reportedApplication();
    const before = await stored(appName);
    await expectError(await call('DELETE', `/api/admin/metrics/applications/${appName}`, { token: viewer }), 403, 'NoAccessError');
    await expectError(await call('DELETE', `/api/admin/metrics/applications/${appName}`, { token: null }), 401, 'AuthenticationRequired');
    expect(await stored(appName)).toBe(before);
  });
});

describe('what SDKs report about flags that do not exist', () => {
  it('keeps their counts and names them as missing flags, as Unleash does; no last seen or lifecycle for them', async () => {
    const appName = unique('app-missing');
    const flag = unique('app-known');
    const ghost = unique('app-ghost');
    await createFeature(flag);
    await register(appName, 'i-1', 'unleash-client-node:6.1.0', ['default']);
    await report(appName, 'i-1', { [flag]: { yes: 2, no: 0 }, [ghost]: { yes: 3, no: 1 } });
    await settleMetrics();
    expect(await rows('SELECT yes, no FROM client_metrics_env WHERE feature_name = ? AND app_name = ?', ghost, appName)).toEqual([
      { yes: 3, no: 1 },
    ]);
    expect(await count('SELECT count(*) AS n FROM feature_lifecycles WHERE feature = ?', ghost)).toBe(0);

    const overview = await json(`/api/admin/metrics/applications/${appName}/overview`);
    expect(overview.featureCount).toBe(2);
    expect(overview.projects).toEqual(['default']);
    expect(overview.environments.map((e: { name: string; issues: unknown }) => [e.name, e.issues])).toEqual([
      ['development', { missingFeatures: [ghost], outdatedSdks: [] }],
    ]);
    const body = await json(`/api/admin/metrics/applications/${appName}`);
    expect(body.seenToggles).toContainEqual({ name: ghost, notFound: true });
    expect(body.seenToggles.map((toggle: { name: string }) => toggle.name).sort()).toEqual([flag, ghost].sort());
  });

  it('still drops them from a frontend key, which is public and counts only flags it can see', async () => {
    const frontendToken = await createToken({ tokenName: 'apps-frontend', type: 'frontend', environment: 'development' });
    const appName = unique('app-browser');
    const ghost = unique('app-ghost');
    const now = new Date().toISOString();
    const response = await call('POST', '/api/frontend/client/metrics', {
      token: frontendToken,
      body: { appName, instanceId: 'b-1', bucket: { start: now, stop: now, toggles: { [ghost]: { yes: 1, no: 0 } } } },
    });
    expect(response.status).toBe(200);
    await settleMetrics();
    expect(await count('SELECT count(*) AS n FROM client_metrics_env WHERE feature_name = ?', ghost)).toBe(0);
  });
});

describe('POST /api/client/register announces a new application', () => {
  async function announcements(appName: string) {
    return rows<{ created_by: string; created_by_user_id: number; data: string }>(
      "SELECT created_by, created_by_user_id, data FROM events WHERE type = 'application-created' AND json_extract(data, '$.appName') = ? ORDER BY id",
      appName,
    );
  }

  it('writes one application-created event by the system user when an SDK first registers it, none after', async () => {
    const appName = unique('app-registered');
    await register(appName, 'i-1', 'unleash-client-node:6.1.0', ['default', 'flexibleRollout']);
    await register(appName, 'i-2', 'unleash-client-node:6.1.0', ['default']);
    await register(appName, 'i-1', 'unleash-client-node:6.1.0', ['default'], productionToken);
    const events = await announcements(appName);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ created_by: 'unleash_system_user', created_by_user_id: -1337 });
    const data = JSON.parse(events[0]!.data);
    expect(Object.keys(data)).toEqual(APPLICATION_CREATED_KEYS);
    expect(data).toEqual({
      appName,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      description: null,
      strategies: ['default', 'flexibleRollout'],
      createdBy: 'unleash_system_user',
      url: null,
      color: null,
      icon: null,
    });
    const [row] = await rows<{ created_at: string }>('SELECT created_at FROM client_applications WHERE app_name = ?', appName);
    expect(data.createdAt).toBe(row!.created_at);
  });

  it('writes none for an application an admin created first, and none for a refused registration', async () => {
    const appName = unique('app-admin-first');
    expect((await call('POST', `/api/admin/metrics/applications/${appName}`, { body: { description: 'by hand' } })).status).toBe(202);
    await register(appName, 'i-1', 'unleash-client-node:6.1.0', ['default']);
    expect(await announcements(appName)).toHaveLength(1);

    const refused = unique('app-refused-register');
    const bad = await call('POST', '/api/client/register', { token: clientToken, body: { appName: refused, strategies: 'default' } });
    expect(bad.status).toBe(400);
    expect(await announcements(refused)).toEqual([]);
    expect(await count('SELECT count(*) AS n FROM client_applications WHERE app_name = ?', refused)).toBe(0);
  });
});
