import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createFeature, createProject } from './support/admin';
import { count } from './support/db';
import { eventually } from './support/eventually';
import { createUser } from './support/auth';
import { call, createToken, expectError } from './support/http';
import { unique } from './support/names';
import { signInAs } from './support/users';

let viewer: string;

beforeAll(async () => {
  viewer = await signInAs('Viewer');
});

const DAY_MS = 24 * 60 * 60 * 1000;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

async function json(path: string, token?: string) {
  const response = await call('GET', path, token === undefined ? {} : { token });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text);
}

async function sql(query: string, ...params: unknown[]) {
  await env.DB.prepare(query)
    .bind(...params)
    .run();
}

/** A project with a flag, and an application whose two instances (one outdated SDK) reported it in development. */
async function projectWithApplication() {
  const project = await createProject(unique('pi'));
  const flag = unique('pi-flag');
  await createFeature(flag, {}, project);
  const token = await createToken({ tokenName: unique('pi-client'), type: 'client', environment: 'development', projects: [project] });
  const appName = unique('pi-app');
  const now = new Date().toISOString();
  for (const [instanceId, sdkVersion] of [
    ['i-node', 'unleash-client-node:5.0.0'],
    ['i-java', 'unleash-client-java:10.0.0'],
  ]) {
    const registered = await call('POST', '/api/client/register', {
      token,
      body: { appName, instanceId, sdkVersion, strategies: ['default'], started: now, interval: 10000 },
    });
    expect(registered.status).toBe(202);
  }
  const reported = await call('POST', '/api/client/metrics', {
    token,
    body: { appName, instanceId: 'i-node', bucket: { start: now, stop: now, toggles: { [flag]: { yes: 2, no: 1 } } } },
  });
  expect(reported.status).toBe(202);
  return { project, flag, appName };
}

describe('GET /api/admin/projects/:projectId/applications', () => {
  it("lists the applications that reported the project's flags, with environments, instances and SDKs", async () => {
    const { project, appName } = await projectWithApplication();
    const expected = {
      applications: [
        {
          name: appName,
          environments: ['development'],
          instances: ['i-java', 'i-node'],
          sdks: [
            { name: 'unleash-client-java', versions: ['10.0.0'] },
            { name: 'unleash-client-node', versions: ['5.0.0'] },
          ],
        },
      ],
      total: 1,
    };
    await eventually(async () => expect(await json(`/api/admin/projects/${project}/applications`)).toEqual(expected));
    const body = await json(`/api/admin/projects/${project}/applications`, viewer);
    expect(Object.keys(body)).toEqual(['applications', 'total']);
    expect(Object.keys(body.applications[0])).toEqual(['name', 'environments', 'instances', 'sdks']);
    // The filter keeps matching rows, not whole applications (as Unleash).
    expect(await json(`/api/admin/projects/${project}/applications?query=JAVA`)).toEqual({
      applications: [
        {
          name: appName,
          environments: ['development'],
          instances: ['i-java'],
          sdks: [{ name: 'unleash-client-java', versions: ['10.0.0'] }],
        },
      ],
      total: 1,
    });
    expect(await json(`/api/admin/projects/${project}/applications?query=nothing-like-it`)).toEqual({ applications: [], total: 0 });
    // A page past the end says total 0, as Unleash.
    expect(await json(`/api/admin/projects/${project}/applications?offset=1`)).toEqual({ applications: [], total: 0 });
  });

  it('answers an empty list for an unknown project and 401 without a credential', async () => {
    expect(await json('/api/admin/projects/no-such-project/applications')).toEqual({ applications: [], total: 0 });
    await expectError(await call('GET', '/api/admin/projects/default/applications', { token: null }), 401, 'AuthenticationRequired');
  });
});

describe('GET /api/admin/projects/:projectId/sdks/outdated', () => {
  it("lists the outdated SDKs of the applications that reported the project's flags", async () => {
    const { project, appName } = await projectWithApplication();
    await eventually(async () =>
      expect(await json(`/api/admin/projects/${project}/sdks/outdated`, viewer)).toEqual({
        sdks: [{ sdkVersion: 'unleash-client-node:5.0.0', applications: [appName] }],
      }),
    );
    expect(await json('/api/admin/projects/no-such-project/sdks/outdated')).toEqual({ sdks: [] });
    await expectError(await call('GET', `/api/admin/projects/${project}/sdks/outdated`, { token: null }), 401, 'AuthenticationRequired');
  });
});

/** A release flag created `daysAgo` days ago and enabled in production now. */
async function flagInProduction(project: string, daysAgo: number) {
  const flag = unique('dora');
  await createFeature(flag, {}, project);
  await sql('UPDATE features SET created_at = ? WHERE name = ?', new Date(Date.now() - daysAgo * DAY_MS).toISOString(), flag);
  await adminOk('POST', `/api/admin/projects/${project}/features/${flag}/environments/production/on`);
  return flag;
}

describe('GET /api/admin/projects/:projectId/dora', () => {
  it('answers each release flag’s whole days from creation to production and the average', async () => {
    const project = await createProject(unique('dora-p'));
    const slow = await flagInProduction(project, 3.5);
    const fast = await flagInProduction(project, 1.2);
    await createFeature(unique('dora-never'), {}, project);
    const body = await json(`/api/admin/projects/${project}/dora`, viewer);
    expect(Object.keys(body)).toEqual(['features', 'projectAverage']);
    expect(body.features).toEqual(
      [
        { name: slow, timeToProduction: 3 },
        { name: fast, timeToProduction: 1 },
      ].sort((a, b) => a.name.localeCompare(b.name)),
    );
    expect(body.projectAverage).toBe(2);
  });

  it('answers no flags and 0 for a project without any, and 401 without a credential', async () => {
    expect(await json('/api/admin/projects/no-such-project/dora')).toEqual({ features: [], projectAverage: 0 });
    await expectError(await call('GET', '/api/admin/projects/default/dora', { token: null }), 401, 'AuthenticationRequired');
  });
});

/** A project with a fresh release flag, a stale one and an experiment older than its 40-day lifetime. */
async function projectWithHealth() {
  const project = await createProject(unique('health'));
  const fresh = unique('h-fresh');
  const stale = unique('h-stale');
  const old = unique('h-old');
  await createFeature(fresh, {}, project);
  await createFeature(stale, {}, project);
  await createFeature(old, { type: 'experiment' }, project);
  await sql('UPDATE features SET stale = 1 WHERE name = ?', stale);
  await sql('UPDATE features SET created_at = ? WHERE name = ?', new Date(Date.now() - 100 * DAY_MS).toISOString(), old);
  return { project, fresh, stale, old };
}

describe('GET /api/admin/projects/:projectId/insights', () => {
  it('answers stats, flag types, health, lead time and members in Unleash key order', async () => {
    const { project } = await projectWithHealth();
    const body = await json(`/api/admin/projects/${project}/insights`, viewer);
    expect(Object.keys(body)).toEqual(['stats', 'featureTypeCounts', 'technicalDebt', 'health', 'leadTime', 'members']);
    expect(Object.keys(body.stats)).toEqual([
      'avgTimeToProdCurrentWindow',
      'createdCurrentWindow',
      'createdPastWindow',
      'archivedCurrentWindow',
      'archivedPastWindow',
      'projectActivityCurrentWindow',
      'projectActivityPastWindow',
      'projectMembersAddedCurrentWindow',
    ]);
    expect(body.stats).toMatchObject({ createdCurrentWindow: 2, createdPastWindow: 0, archivedCurrentWindow: 0 });
    expect(body.stats.projectActivityCurrentWindow).toBe(await count('SELECT count(*) AS n FROM events WHERE project = ?', project));
    expect(body.featureTypeCounts).toEqual([
      { type: 'release', count: 2 },
      { type: 'experiment', count: 1 },
    ]);
    expect(body.health).toEqual({ activeCount: 2, potentiallyStaleCount: 1, staleCount: 1, rating: 33 });
    expect(body.leadTime).toEqual({ features: [], projectAverage: 0 });
    expect(body.members).toEqual({ currentMembers: 0, change: 0 });
  });

  it('answers 404 for an unknown project and 401 without a credential', async () => {
    const body = await expectError(await call('GET', '/api/admin/projects/no-such-project/insights'), 404, 'NotFoundError');
    expect(body.message).toBe('No project found');
    await expectError(await call('GET', '/api/admin/projects/default/insights', { token: null }), 401, 'AuthenticationRequired');
  });
});

describe('GET /api/admin/projects/:projectId/status', () => {
  it('answers resources, activity, health, lifecycle and stale flags in Unleash key order', async () => {
    const { project } = await projectWithHealth();
    const member = await createUser(3);
    await adminOk('POST', `/api/admin/projects/${project}/access`, { roles: [5], users: [member.id], groups: [] });
    await createToken({ tokenName: unique('status-token'), type: 'client', environment: 'development', projects: [project] });
    await adminOk('POST', '/api/admin/segments', { name: unique('status-seg'), constraints: [], project });
    const body = await json(`/api/admin/projects/${project}/status`, viewer);
    expect(Object.keys(body)).toEqual(['resources', 'activityCountByDate', 'health', 'technicalDebt', 'lifecycleSummary', 'staleFlags']);
    expect(body.resources).toEqual({ members: 1, apiTokens: 1, segments: 1 });
    const today = new Date().toISOString().slice(0, 10);
    expect(body.activityCountByDate).toEqual([
      { date: today, count: await count('SELECT count(*) AS n FROM events WHERE project = ?', project) },
    ]);
    expect(body.health).toEqual({ current: 33 });
    expect(body.lifecycleSummary).toEqual({
      initial: { averageDays: null, currentFlags: 3 },
      preLive: { averageDays: null, currentFlags: 0 },
      live: { averageDays: null, currentFlags: 0 },
      completed: { averageDays: null, currentFlags: 0 },
      archived: { currentFlags: 0, last30Days: 0 },
    });
    expect(body.staleFlags).toEqual({ total: 1 });
  });

  it('answers the empty status for an unknown project (as Unleash) and 401 without a credential', async () => {
    expect(await json('/api/admin/projects/no-such-project/status')).toEqual({
      resources: { members: 0, apiTokens: 0, segments: 0 },
      activityCountByDate: [],
      health: { current: 100 },
      technicalDebt: { current: 0 },
      lifecycleSummary: {
        initial: { averageDays: null, currentFlags: 0 },
        preLive: { averageDays: null, currentFlags: 0 },
        live: { averageDays: null, currentFlags: 0 },
        completed: { averageDays: null, currentFlags: 0 },
        archived: { currentFlags: 0, last30Days: 0 },
      },
      staleFlags: { total: 0 },
    });
    await expectError(await call('GET', '/api/admin/projects/default/status', { token: null }), 401, 'AuthenticationRequired');
  });
});

describe('GET /api/admin/projects/:projectId/health-report', () => {
  it('answers the project, its flags with their environments and tags, and the health counts, in Unleash key order', async () => {
    const { project, stale } = await projectWithHealth();
    await adminOk('POST', `/api/admin/features/${stale}/tags`, { type: 'simple', value: 'tagged' });
    const body = await json(`/api/admin/projects/${project}/health-report`, viewer);
    expect(Object.keys(body)).toEqual([
      'stats',
      'name',
      'description',
      'mode',
      'featureLimit',
      'featureNaming',
      'defaultStickiness',
      'health',
      'technicalDebt',
      'favorite',
      'updatedAt',
      'createdAt',
      'environments',
      'features',
      'members',
      'version',
      'potentiallyStaleCount',
      'activeCount',
      'staleCount',
    ]);
    expect(body).toMatchObject({ name: project, mode: 'open', health: 33, favorite: false, members: 0, version: 1 });
    expect(body).toMatchObject({ potentiallyStaleCount: 1, activeCount: 2, staleCount: 1 });
    expect(body.featureNaming).toEqual({ pattern: null, example: null, description: null });
    expect(body.environments.map((environment: { environment: string }) => environment.environment)).toEqual(['development', 'production']);
    const tagged = body.features.find((feature: { name: string }) => feature.name === stale);
    expect(Object.keys(tagged)).toEqual([
      'type',
      'description',
      'name',
      'createdAt',
      'stale',
      'impressionData',
      'lastSeenAt',
      'environments',
      'tags',
    ]);
    expect(tagged.tags).toEqual([{ value: 'tagged', type: 'simple' }]);
    expect(tagged.environments[0]).toEqual({
      name: 'development',
      enabled: false,
      type: 'development',
      sortOrder: expect.any(Number),
      variantCount: 0,
      lastSeenAt: null,
      hasStrategies: false,
      hasEnabledStrategies: false,
    });
    const untagged = body.features.find((feature: { name: string }) => feature.name !== stale);
    expect(untagged).not.toHaveProperty('tags');
    expect(body.createdAt).toMatch(ISO);
  });

  it('answers 404 for an unknown project and 401 without a credential', async () => {
    const body = await expectError(await call('GET', '/api/admin/projects/no-such-project/health-report'), 404, 'NotFoundError');
    expect(body.message).toBe('No project found');
    await expectError(await call('GET', '/api/admin/projects/default/health-report', { token: null }), 401, 'AuthenticationRequired');
  });
});

describe("a flag's environments", () => {
  it('carry the last hour’s yes and no counts the SDKs reported', async () => {
    const { project, flag } = await projectWithApplication();
    await eventually(async () => {
      const body = await json(`/api/admin/projects/${project}/features/${flag}`, viewer);
      const development = body.environments.find((environment: { name: string }) => environment.name === 'development');
      expect([development.yes, development.no]).toEqual([2, 1]);
    });
    const body = await json(`/api/admin/projects/${project}/features/${flag}`);
    const production = body.environments.find((environment: { name: string }) => environment.name === 'production');
    expect([production.yes, production.no]).toEqual([0, 0]);
  });
});
