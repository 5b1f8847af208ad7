/**
 * The calls Unleash's admin UI makes besides the resource APIs, with the shapes it reads
 * (taken from Unleash 6.10.1 answering the same requests).
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError, UUID } from './support/http';
import { createProject } from './support/admin';
import { signedInUser, withSession } from './support/auth';
import { unique } from './support/names';

const PROJECT = unique('uiproj');
const flag = unique('ui-flag');
const child = unique('ui-child');

beforeAll(async () => {
  await createProject(PROJECT, ['development', 'production']);
  for (const name of [flag, child]) {
    const created = await call('POST', `/api/admin/projects/${PROJECT}/features`, {
      body: { name, type: name === flag ? 'experiment' : 'release' },
    });
    expect(created.status).toBe(201);
  }
  const strategy = await call('POST', `/api/admin/projects/${PROJECT}/features/${flag}/environments/development/strategies`, {
    body: {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: flag },
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }],
      variants: [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' }],
    },
  });
  expect(strategy.status).toBe(200);
  expect((await call('POST', `/api/admin/features/${flag}/tags`, { body: { type: 'simple', value: 'ui-tag' } })).status).toBe(201);
});

describe('GET /api/admin/ui-config', () => {
  it('says open-source Unleash 6.10.1, with the instance id, on the origin asked', async () => {
    const response = await call('GET', '/api/admin/ui-config');
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual([
      'environment',
      'flags',
      'version',
      'emailEnabled',
      'unleashUrl',
      'baseUriPath',
      'authenticationType',
      'segmentValuesLimit',
      'strategySegmentsLimit',
      'frontendApiOrigins',
      'versionInfo',
      'prometheusAPIAvailable',
      'resourceLimits',
      'disablePasswordAuth',
      'maintenanceMode',
      'maxSessionsCount',
      'unleashContext',
    ]);
    expect(body).toMatchObject({
      environment: 'Open Source',
      version: '6.10.1',
      unleashUrl: 'http://localhost',
      baseUriPath: '',
      authenticationType: 'open-source',
    });
    expect(body.versionInfo).toEqual({
      // The UI's one switch for its governance panels (isEnterprise()); the edition stays open source.
      current: { oss: '6.10.1', enterprise: '6.10.1' },
      latest: {},
      isLatest: true,
      instanceId: expect.stringMatching(UUID),
    });
    // Enterprise panels we do not build stay off by their flags: licence, release plans, actions, signals.
    expect(body.flags).toMatchObject({
      enableLicense: false,
      enableLicenseChecker: false,
      releasePlans: false,
      'enterprise-payg': false,
      automatedActions: false,
      signals: false,
      edgeObservability: false,
      consumptionModel: false,
    });
    expect(body.flags.messageBanner).toEqual({ name: 'disabled', enabled: false, feature_enabled: false });
    // Enterprise panels built here: the environments page (EEA) and groups named in project access (UG).
    expect(body.flags).toMatchObject({ EEA: true, UG: true });
  });

  it('names the signed-in person in unleashContext (userId), as 6.10.1 does; empty for an API key', async () => {
    const user = await signedInUser();
    const mine = await bodyOf(await call('GET', '/api/admin/ui-config', withSession(user.cookie)));
    expect(mine.unleashContext).toEqual({ userId: user.id });
    const asKey = await bodyOf(await call('GET', '/api/admin/ui-config'));
    expect(asKey.unleashContext).toEqual({});
  });

  it('401 with the login hint when nobody is signed in; 403 for a client key', async () => {
    const denied = await expectError(await call('GET', '/api/admin/ui-config', { token: null }), 401, 'AuthenticationRequired');
    expect(denied).toMatchObject({ path: '/auth/simple/login', type: 'password' });
    const clientKey = await createToken({ tokenName: 'ui-client', type: 'client' });
    await expectError(await call('GET', '/api/admin/ui-config', { token: clientKey }), 403, 'NoAccessError');
  });
});

describe('what the Enterprise UI asks on every page: licence check and banners', () => {
  it('a signed-in person gets no licence banner and no message banners', async () => {
    const user = await signedInUser();
    const check = await call('GET', '/api/admin/license/check', withSession(user.cookie));
    expect(check.status).toBe(200);
    expect(await bodyOf(check)).toEqual({ isValid: true });
    const banners = await call('GET', '/api/admin/banners', withSession(user.cookie));
    expect(banners.status).toBe(200);
    expect(await bodyOf(banners)).toEqual({ banners: [] });
  });

  it('the Insights page (main menu, no switch hides it): no weekly trends recorded, so every series empty', async () => {
    const response = await call('GET', '/api/admin/insights?from=2026-01-01&to=2026-11-29');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      userTrends: [],
      flagTrends: [],
      projectFlagTrends: [],
      metricsSummaryTrends: [],
      environmentTypeTrends: [],
    });
  });

  it('401 when nobody is signed in; 403 for a client key', async () => {
    const clientKey = await createToken({ tokenName: 'ui-client-banners', type: 'client' });
    for (const path of ['/api/admin/license/check', '/api/admin/banners', '/api/admin/insights']) {
      await expectError(await call('GET', path, { token: null }), 401, 'AuthenticationRequired');
      await expectError(await call('GET', path, { token: clientKey }), 403, 'NoAccessError');
    }
  });
});

describe('GET /api/admin/projects/:id/overview', () => {
  it('the project page header: environments, type counts, onboarding, in Unleash key order', async () => {
    const body = await bodyOf(await call('GET', `/api/admin/projects/${PROJECT}/overview`));
    expect(Object.keys(body)).toEqual([
      'stats',
      'name',
      'description',
      'mode',
      'featureLimit',
      'featureNaming',
      'linkTemplates',
      'defaultStickiness',
      'health',
      'technicalDebt',
      'favorite',
      'updatedAt',
      'createdAt',
      'onboardingStatus',
      'environments',
      'featureTypeCounts',
      'members',
      'version',
    ]);
    expect(body.environments).toEqual([{ environment: 'development' }, { environment: 'production' }]);
    expect(body.featureTypeCounts).toEqual([
      { type: 'experiment', count: 1 },
      { type: 'release', count: 1 },
    ]);
    expect(body.onboardingStatus).toEqual({ status: 'first-flag-created', feature: flag });
    expect(body.featureNaming).toEqual({ pattern: null, example: null, description: null });
    expect(body.stats.createdCurrentWindow).toBe(2);
  });

  it('404 for an unknown project (the archive page asks for "undefined", as Unleash\'s does)', async () => {
    const error = await expectError(await call('GET', '/api/admin/projects/undefined/overview'), 404, 'NotFoundError');
    expect(error.message).toBe('No project found');
  });
});

describe('GET /api/admin/projects?archived=true', () => {
  it('lists only archived projects; without the flag only live ones', async () => {
    const gone = unique('gone');
    await createProject(gone);
    await env.DB.prepare("UPDATE projects SET archived_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?").bind(gone).run();
    const archived = await bodyOf(await call('GET', '/api/admin/projects?archived=true'));
    expect(archived.projects.map((project: { id: string }) => project.id)).toEqual([gone]);
    expect(archived.projects[0].archivedAt).toEqual(expect.any(String));
    const live = await bodyOf(await call('GET', '/api/admin/projects'));
    expect(live.projects.map((project: { id: string }) => project.id)).toContain(PROJECT);
    expect(live.projects.map((project: { id: string }) => project.id)).not.toContain(gone);
  });
});

describe('project flag creators and dependencies', () => {
  it('flag-creators names who created live flags (the admin token acts as user -42)', async () => {
    expect(await bodyOf(await call('GET', `/api/admin/projects/${PROJECT}/flag-creators`))).toEqual([
      { id: -42, name: 'Unleash Admin Token User' },
    ]);
  });

  it("dependencies says whether any flag depends on another; parent-variants lists the parent's variant names", async () => {
    await env.DB.prepare('DELETE FROM dependent_features').run();
    expect(await (await call('GET', `/api/admin/projects/${PROJECT}/dependencies`)).text()).toBe('false');
    expect(await bodyOf(await call('GET', `/api/admin/projects/${PROJECT}/features/${flag}/parent-variants`))).toEqual(['blue']);
    const added = await call('POST', `/api/admin/projects/${PROJECT}/features/${child}/dependencies`, { body: { feature: flag } });
    expect(added.status).toBe(200);
    expect(await (await call('GET', `/api/admin/projects/${PROJECT}/dependencies`)).text()).toBe('true');
  });
});

describe('catalogues: feature types, strategies, context fields, tags', () => {
  it("feature types in Unleash's order", async () => {
    const body = await bodyOf(await call('GET', '/api/admin/feature-types'));
    expect(body.version).toBe(1);
    expect(body.types.map((type: { id: string }) => type.id)).toEqual([
      'release',
      'experiment',
      'operational',
      'kill-switch',
      'permission',
      // Unleash 8.0's sixth type, after 6.10.1's five.
      'sunset',
    ]);
    expect(body.types[0]).toEqual({
      id: 'release',
      name: 'Release',
      description: 'Release feature toggles are used to release new features.',
      lifetimeDays: 40,
    });
  });

  it('strategies: the list and one, with parameters (the add-strategy form is built from them); 404 otherwise', async () => {
    const list = await bodyOf(await call('GET', '/api/admin/strategies'));
    expect(list.strategies.map((strategy: { name: string }) => strategy.name)).toEqual([
      'flexibleRollout',
      'default',
      'userWithId',
      'remoteAddress',
      'applicationHostname',
    ]);
    const one = await bodyOf(await call('GET', '/api/admin/strategies/flexibleRollout'));
    expect(Object.keys(one)).toEqual(['displayName', 'name', 'editable', 'description', 'parameters', 'deprecated', 'title']);
    expect(one).toMatchObject({ displayName: 'Gradual rollout', editable: false, deprecated: false, title: null });
    expect(one.parameters.map((parameter: { name: string }) => parameter.name)).toEqual(['rollout', 'stickiness', 'groupId']);
    const missing = await expectError(await call('GET', '/api/admin/strategies/nope'), 404, 'NotFoundError');
    expect(missing.message).toBe('No strategy found');
  });

  it('context fields by name with their usage; one field; 404 otherwise', async () => {
    const fields = await bodyOf(await call('GET', '/api/admin/context'));
    expect(fields.map((field: { name: string }) => field.name).slice(0, 4)).toEqual(['appName', 'currentTime', 'environment', 'sessionId']);
    const userId = fields.find((field: { name: string }) => field.name === 'userId');
    expect(Object.keys(userId)).toEqual([
      'name',
      'description',
      'stickiness',
      'sortOrder',
      'legalValues',
      'createdAt',
      'usedInProjects',
      'usedInFeatures',
    ]);
    expect(userId).toMatchObject({ usedInProjects: 1, usedInFeatures: 1 });
    expect(await bodyOf(await call('GET', '/api/admin/context/userId'))).toMatchObject({ name: 'userId', stickiness: false });
    const missing = await expectError(await call('GET', '/api/admin/context/nope'), 404, 'NotFoundError');
    expect(missing.message).toBe('Could not find context field');
  });

  it('tags, all and by type (an unknown type has none)', async () => {
    const all = await bodyOf(await call('GET', '/api/admin/tags'));
    expect(all.version).toBe(1);
    expect(all.tags).toContainEqual({ type: 'simple', value: 'ui-tag' });
    expect(Object.keys(all.tags[0])).toEqual(['type', 'value']);
    expect((await bodyOf(await call('GET', '/api/admin/tags/simple'))).tags).toContainEqual({ type: 'simple', value: 'ui-tag' });
    expect(await bodyOf(await call('GET', '/api/admin/tags/nope'))).toEqual({ version: 1, tags: [] });
  });
});

describe('POST /api/admin/features/validate', () => {
  it('200 with no body for a free, URL-friendly name', async () => {
    const response = await call('POST', '/api/admin/features/validate', { body: { name: unique('free'), projectId: PROJECT } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });

  it('409 for a taken name, and a separate message for an archived one', async () => {
    const taken = await expectError(await call('POST', '/api/admin/features/validate', { body: { name: flag } }), 409, 'NameExistsError');
    expect(taken.message).toBe('A flag with that name already exists');
    const archived = unique('archived');
    await call('POST', `/api/admin/projects/${PROJECT}/features`, { body: { name: archived } });
    expect((await call('DELETE', `/api/admin/projects/${PROJECT}/features/${archived}`)).status).toBe(202);
    const error = await expectError(
      await call('POST', '/api/admin/features/validate', { body: { name: archived } }),
      409,
      'NameExistsError',
    );
    expect(error.message).toBe('An archived flag with that name already exists');
  });

  it("400 for a name that is not URL friendly or missing; a project's naming pattern is checked", async () => {
    await expectError(await call('POST', '/api/admin/features/validate', { body: { name: 'bad name' } }), 400, 'ValidationError');
    await expectError(await call('POST', '/api/admin/features/validate', { body: {} }), 400, 'ValidationError');
    const patterned = unique('patterned');
    await createProject(patterned);
    await env.DB.prepare("UPDATE projects SET feature_naming_pattern = 'team-.+', feature_naming_example = 'team-x' WHERE id = ?")
      .bind(patterned)
      .run();
    const error = await expectError(
      await call('POST', '/api/admin/features/validate', { body: { name: 'other', projectId: patterned } }),
      400,
      'PatternError',
    );
    expect(error.message).toBe(
      `The feature flag name "other" does not match the project's naming pattern: "team-.+". Here's an example of a name that does match the pattern: "team-x"."`,
    );
    expect((await call('POST', '/api/admin/features/validate', { body: { name: 'team-ok', projectId: patterned } })).status).toBe(200);
  });
});

describe('client metrics of a flag', () => {
  it('summary: last hour per environment and the applications seen; raw: the window filled with zeros, oldest first', async () => {
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
    await env.DB.prepare(
      'INSERT INTO client_metrics_env (feature_name, app_name, environment, timestamp, yes, no) VALUES (?, ?, ?, ?, ?, ?)',
    )
      .bind(flag, 'web', 'development', hour, 3, 1)
      .run();
    const summary = await bodyOf(await call('GET', `/api/admin/client-metrics/features/${flag}`));
    expect(summary).toEqual({
      version: 1,
      maturity: 'stable',
      featureName: flag,
      lastHourUsage: [{ environment: 'development', timestamp: hour, yes: 3, no: 1 }],
      seenApplications: ['web'],
    });
    const raw = await bodyOf(await call('GET', `/api/admin/client-metrics/features/${flag}/raw?hoursBack=3`));
    expect(raw.version).toBe(1);
    expect(raw.data).toHaveLength(3);
    expect(raw.data[2]).toEqual({ featureName: flag, appName: 'web', environment: 'development', timestamp: hour, yes: 3, no: 1 });
    expect(raw.data[0]).toMatchObject({ yes: 0, no: 0, appName: 'web', environment: 'development' });
    expect(await bodyOf(await call('GET', `/api/admin/client-metrics/features/${unique('none')}`))).toMatchObject({
      lastHourUsage: [],
      seenApplications: [],
    });
  });

  it('applications: paged list with a total', async () => {
    await env.DB.prepare("INSERT INTO client_applications (app_name) VALUES ('ui-app-b'), ('ui-app-a')").run();
    const body = await bodyOf(
      await call('GET', '/api/admin/metrics/applications?offset=0&limit=1&sortBy=appName&sortOrder=asc&query=ui-app'),
    );
    // Unleash 6.10.1's keys, nulls included (test/applications.test.ts checks the rest).
    expect(body).toEqual({
      applications: [
        {
          appName: 'ui-app-a',
          createdAt: expect.any(String),
          updatedAt: null,
          description: null,
          strategies: [],
          createdBy: null,
          url: null,
          color: null,
          icon: null,
          usage: [],
        },
      ],
      total: 2,
    });
  });
});

describe('personal dashboard, splash, instance statistics', () => {
  it("personal dashboard: the caller's projects and flags, and the admins", async () => {
    const body = await bodyOf(await call('GET', '/api/admin/personal-dashboard'));
    expect(Object.keys(body)).toEqual(['projects', 'flags', 'projectOwners', 'admins']);
    // The admin token (user -42) created the flags.
    expect(body.flags).toEqual(expect.arrayContaining([{ name: flag, type: 'experiment', project: PROJECT }]));
    expect(body.admins[0]).toMatchObject({ id: 1, imageUrl: expect.stringContaining('https://gravatar.com/avatar/') });
  });

  it('personal dashboard of a project: latest events with markdown summaries; 404 for an unknown project', async () => {
    const body = await bodyOf(await call('GET', `/api/admin/personal-dashboard/${PROJECT}`));
    expect(Object.keys(body)).toEqual(['latestEvents', 'onboardingStatus', 'owners', 'roles', 'insights']);
    expect(body.latestEvents.length).toBeGreaterThan(0);
    expect(body.latestEvents.length).toBeLessThanOrEqual(10);
    expect(Object.keys(body.latestEvents[0])).toEqual(['createdAt', 'summary', 'createdBy', 'id', 'createdByImageUrl']);
    expect(body.latestEvents.map((event: { summary: string }) => event.summary)).toContain(
      `**admin** created **[${flag}](http://localhost/projects/${PROJECT}/features/${flag})** in project **[${PROJECT}](http://localhost/projects/${PROJECT})**`,
    );
    expect(body.insights).toMatchObject({ totalFlags: 2, staleFlags: 0, health: 100 });
    await expectError(await call('GET', '/api/admin/personal-dashboard/nope'), 404, 'NotFoundError');
  });

  it('splash: records it seen for the caller and says so', async () => {
    const response = await call('POST', '/api/admin/splash/personalDashboardKeyConcepts');
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    // 6.10.1 answers the stored row's keys in this order.
    expect(Object.keys(body)).toEqual(['seen', 'splashId', 'userId']);
    expect(body).toEqual({ seen: true, splashId: 'personalDashboardKeyConcepts', userId: -42 });
    const row = await env.DB.prepare(
      "SELECT seen FROM user_splash WHERE user_id = -42 AND splash_id = 'personalDashboardKeyConcepts'",
    ).first<{ seen: number }>();
    expect(row?.seen).toBe(1);
  });

  it("splash: a person's dismissed screens come back in GET /api/admin/user (id → seen), theirs only, no event", async () => {
    const person = await signedInUser(2);
    const other = await signedInUser(3);
    const eventsBefore = await env.DB.prepare('SELECT COUNT(*) AS n FROM events').first<{ n: number }>();
    const before = await bodyOf(await call('GET', '/api/admin/user', withSession(person.cookie)));
    expect(before.splash).toEqual({});
    for (const id of ['sweepFirst', 'sweepSecond', 'sweepFirst']) {
      const seen = await call('POST', `/api/admin/splash/${id}`, withSession(person.cookie));
      expect(seen.status).toBe(200);
      expect(await bodyOf(seen)).toEqual({ seen: true, splashId: id, userId: person.id });
    }
    const me = await bodyOf(await call('GET', '/api/admin/user', withSession(person.cookie)));
    expect(Object.keys(me)).toEqual(['user', 'permissions', 'feedback', 'splash']);
    expect(me.splash).toEqual({ sweepFirst: true, sweepSecond: true });
    expect(Object.keys(me.splash)).toEqual(['sweepFirst', 'sweepSecond']);
    // Another person's, and an API token's (Unleash answers tokens none), stay empty.
    expect((await bodyOf(await call('GET', '/api/admin/user', withSession(other.cookie)))).splash).toEqual({});
    expect((await bodyOf(await call('GET', '/api/admin/user'))).splash).toEqual({});
    // Dismissing a splash screen is not an audited change in Unleash.
    const eventsAfter = await env.DB.prepare('SELECT COUNT(*) AS n FROM events').first<{ n: number }>();
    expect(eventsAfter!.n).toBe(eventsBefore!.n);
  });

  it('splash: refused without a caller (401), nothing recorded', async () => {
    await expectError(await call('POST', '/api/admin/splash/sweepNobody', { token: null }), 401, 'AuthenticationRequired');
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM user_splash WHERE splash_id = 'sweepNobody'").first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });

  it('instance statistics: counts, the OSS version and a checksum', async () => {
    const body = await bodyOf(await call('GET', '/api/admin/instance-admin/statistics'));
    expect(body).toMatchObject({
      versionOSS: '6.10.1',
      versionEnterprise: '',
      instanceId: expect.stringMatching(UUID),
      environments: 3,
      strategies: 5,
      groups: 0,
    });
    expect(body.featureToggles).toBeGreaterThanOrEqual(2);
    expect(body.maxConstraints).toBeGreaterThanOrEqual(1);
    expect(body.sum).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('POST /api/admin/constraints/validate', () => {
  const validate = (body: unknown) => call('POST', '/api/admin/constraints/validate', { body });

  it('204 for a constraint the strategy form may save', async () => {
    const response = await validate({
      contextName: 'userId',
      operator: 'IN',
      values: ['alice', 'bob'],
      caseInsensitive: false,
      inverted: false,
    });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
  });

  it('400 for a value that does not fit the operator or an unknown operator; 404 for an unknown field', async () => {
    await expectError(await validate({ contextName: 'userId', operator: 'NUM_EQ', value: 'abc' }), 400, 'ValidationError');
    await expectError(await validate({ contextName: 'userId', operator: 'SEMVER_EQ', value: '1.x' }), 400, 'ValidationError');
    await expectError(await validate({ contextName: 'userId', operator: 'BAD' }), 400, 'ValidationError');
    await expectError(await validate({}), 400, 'ValidationError');
    const missing = await expectError(await validate({ contextName: 'nope', operator: 'IN', values: [] }), 404, 'NotFoundError');
    expect(missing.message).toBe('Could not find Context field with name nope');
  });
});

describe('search newest-seen first', () => {
  it("follows the environments' last-seen times however they are written (triggers keep the flag's own)", async () => {
    const prefix = unique('seen');
    const names = [`${prefix}-old`, `${prefix}-new`, `${prefix}-never`];
    for (const name of names) expect((await call('POST', `/api/admin/projects/${PROJECT}/features`, { body: { name } })).status).toBe(201);
    await env.DB.batch([
      env.DB.prepare(
        "UPDATE feature_environments SET last_seen_at = '2026-01-01T00:00:00.000Z' WHERE feature_name = ? AND environment = 'development'",
      ).bind(names[0]),
      env.DB.prepare(
        "UPDATE feature_environments SET last_seen_at = '2026-03-01T00:00:00.000Z' WHERE feature_name = ? AND environment = 'production'",
      ).bind(names[1]),
    ]);
    const body = await bodyOf(await call('GET', `/api/admin/search/features?query=${prefix}&sortBy=lastSeenAt&sortOrder=desc`));
    expect(body.features.map((feature: { name: string }) => feature.name)).toEqual([names[1], names[0], names[2]]);
    expect(body.features[0].lastSeenAt).toBe('2026-03-01T00:00:00.000Z');
    const own = await env.DB.prepare('SELECT last_seen_at FROM features WHERE name = ?').bind(names[1]).first<{ last_seen_at: string }>();
    expect(own?.last_seen_at).toBe('2026-03-01T00:00:00.000Z');
    // An older sighting never moves it back.
    await env.DB.prepare(
      "UPDATE feature_environments SET last_seen_at = '2025-01-01T00:00:00.000Z' WHERE feature_name = ? AND environment = 'development'",
    )
      .bind(names[1])
      .run();
    const after = await env.DB.prepare('SELECT last_seen_at FROM features WHERE name = ?').bind(names[1]).first<{ last_seen_at: string }>();
    expect(after?.last_seen_at).toBe('2026-03-01T00:00:00.000Z');
  });
});
