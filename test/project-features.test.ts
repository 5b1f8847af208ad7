/**
 * Project-scoped flag operations (src/admin/project-features): the project's flag list,
 * clone, bulk on/off, bulk archive/validate/delete, favourite projects, parent options and the
 * lifecycle's uncomplete and count. Shapes, statuses and messages as Unleash 6.10.1 answers.
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createFeature, createProject, FLAG_KEYS } from './support/admin';
import { signedInUser, withSession } from './support/auth';
import { count, rows } from './support/db';
import { bodyOf, call, expectError } from './support/http';
import { unique } from './support/names';
import { signInAs } from './support/users';

let viewer: string;
let P: string;

beforeAll(async () => {
  viewer = await signInAs('Viewer');
  P = await createProject(unique('pf'));
});

const flagPath = (project: string, name = '') => `/api/admin/projects/${project}/features${name ? `/${name}` : ''}`;

async function eventsOf(featureName: string): Promise<string[]> {
  return (await rows<{ type: string }>('SELECT type FROM events WHERE feature_name = ? ORDER BY id', featureName)).map((row) => row.type);
}

/** Everything a refused call must leave as it was. */
async function footprint() {
  const tables = [
    'events',
    'features',
    'feature_environments',
    'feature_strategies',
    'feature_strategy_segment',
    'dependent_features',
    'feature_lifecycles',
    'favorite_projects',
    'sdk_changes',
  ];
  const counts: Record<string, unknown> = {};
  for (const table of tables) counts[table] = await count(`SELECT count(*) AS n FROM ${table}`);
  counts.archived = await count('SELECT count(*) AS n FROM features WHERE archived_at IS NOT NULL');
  counts.enabled = await count('SELECT count(*) AS n FROM feature_environments WHERE enabled = 1');
  counts.types = await rows('SELECT id, lifetime_days FROM feature_types ORDER BY id');
  return counts;
}

const revision = () => count('SELECT coalesce(max(event_id), 0) AS n FROM sdk_changes');

async function addStrategy(project: string, name: string, environment: string, body: Record<string, unknown>) {
  return bodyOf(await adminOk('POST', `${flagPath(project, name)}/environments/${environment}/strategies`, body));
}

describe('GET /api/admin/projects/:projectId/features', () => {
  it("lists the project's active flags in Unleash's shape and key order, tags only where there are some", async () => {
    const project = await createProject(unique('list'));
    const a = unique('list-a');
    const b = unique('list-b');
    await createFeature(a, { description: 'first', type: 'experiment' }, project);
    await createFeature(b, {}, project);
    await addStrategy(project, a, 'development', { name: 'default', parameters: {}, constraints: [] });
    await addStrategy(project, a, 'production', { name: 'default', parameters: {}, constraints: [], disabled: true });
    await adminOk('POST', `${flagPath(project, a)}/environments/development/on`);
    const tag = unique('t');
    await adminOk('POST', `/api/admin/features/${a}/tags`, { type: 'simple', value: tag });
    const archived = unique('list-gone');
    await createFeature(archived, {}, project);
    await adminOk('DELETE', flagPath(project, archived));

    const response = await call('GET', flagPath(project));
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['version', 'features']);
    expect(body.version).toBe(2);
    expect(body.features.map((f: { name: string }) => f.name)).toEqual([a, b]);
    const [first, second] = body.features;
    expect(Object.keys(first)).toEqual([
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
    expect(Object.keys(second)).toEqual([
      'type',
      'description',
      'name',
      'createdAt',
      'stale',
      'impressionData',
      'lastSeenAt',
      'environments',
    ]);
    expect(first).toMatchObject({ type: 'experiment', description: 'first', stale: false, impressionData: false, lastSeenAt: null });
    expect(first.tags).toEqual([{ value: tag, type: 'simple' }]);
    expect(Object.keys(first.environments[0])).toEqual([
      'name',
      'enabled',
      'type',
      'sortOrder',
      'variantCount',
      'lastSeenAt',
      'hasStrategies',
      'hasEnabledStrategies',
    ]);
    const byName = Object.fromEntries(first.environments.map((e: { name: string }) => [e.name, e]));
    expect(byName.development).toMatchObject({ enabled: true, hasStrategies: true, hasEnabledStrategies: true, variantCount: 0 });
    expect(byName.production).toMatchObject({ enabled: false, hasStrategies: true, hasEnabledStrategies: false });
    expect(second.environments.every((e: { hasStrategies: boolean }) => !e.hasStrategies)).toBe(true);
  });

  it('filters by name prefix (any case) and by type:value tags; a person also sees `favorite`', async () => {
    const project = await createProject(unique('filter'));
    const a = unique('pre-a');
    const b = unique('other-b');
    await createFeature(a, {}, project);
    await createFeature(b, {}, project);
    const tag = unique('f');
    await adminOk('POST', `/api/admin/features/${b}/tags`, { type: 'simple', value: tag });
    const names = async (query: string, options = {}) =>
      (await bodyOf(await call('GET', `${flagPath(project)}?${query}`, options))).features.map((f: { name: string }) => f.name);
    expect(await names('namePrefix=PRE-')).toEqual([a]);
    expect(await names(`tag=simple:${tag}`)).toEqual([b]);
    expect(await names(`tag=simple:${tag}&tag=simple:nothing`)).toEqual([b]);
    expect(await names('tag=simple:nothing')).toEqual([]);

    const person = await signedInUser('Admin');
    expect(
      (await call('POST', `${flagPath(project, b)}/favorites`, withSession(person.cookie, { contentType: 'application/json' }))).status,
    ).toBe(200);
    const listed = (await bodyOf(await call('GET', flagPath(project), withSession(person.cookie)))).features;
    expect(Object.keys(listed[0]).slice(0, 3)).toEqual(['type', 'description', 'favorite']);
    expect(listed.map((f: { name: string; favorite: boolean }) => [f.name, f.favorite])).toEqual([
      [a, false],
      [b, true],
    ]);
  });

  it('answers 400 for a tag without type:value, 200 with no flags for an unknown project, 401 without a key', async () => {
    const error = await expectError(await call('GET', `${flagPath(P)}?tag=bad`), 400, 'BadDataError');
    expect(error.details[0]!.message).toBe('"tag[0]" with value "bad" fails to match the tag pattern. You provided "bad".');
    expect(await bodyOf(await call('GET', flagPath('no-such-project')))).toEqual({ version: 2, features: [] });
    expect((await call('GET', flagPath(P), { token: null })).status).toBe(401);
  });
});

describe('POST /api/admin/projects/:projectId/features/:featureName/clone', () => {
  it("copies metadata, strategies (groupId renamed), variants and the parent; environments start off; Unleash's events", async () => {
    const parent = unique('clone-parent');
    const source = unique('clone-src');
    await createFeature(parent, {}, P);
    await createFeature(source, { description: 'src', type: 'experiment', impressionData: true }, P);
    await adminOk('PATCH', flagPath(P, source), [{ op: 'replace', path: '/stale', value: true }]);
    await addStrategy(P, source, 'development', {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: source },
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }],
      variants: [{ name: 'v1', weight: 1000, weightType: 'variable', stickiness: 'default' }],
    });
    await adminOk('POST', `${flagPath(P, source)}/environments/development/on`);
    await adminOk('PUT', `${flagPath(P, source)}/variants`, [{ name: 'ev', weight: 1000, weightType: 'variable', stickiness: 'default' }]);
    await adminOk('POST', `${flagPath(P, source)}/dependencies`, { feature: parent });
    const before = await revision();

    const name = unique('clone-copy');
    const response = await call('POST', `${flagPath(P, source)}/clone`, { body: { name } });
    expect(response.status).toBe(201);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(FLAG_KEYS);
    expect(body).toMatchObject({
      name,
      description: 'src',
      type: 'experiment',
      project: P,
      stale: true,
      impressionData: true,
      archived: false,
    });

    const copy = await bodyOf(await call('GET', `${flagPath(P, name)}?variantEnvironments=true`));
    const development = copy.environments.find((e: { name: string }) => e.name === 'development');
    expect(development.enabled).toBe(false);
    expect(development.strategies).toHaveLength(1);
    expect(development.strategies[0]).toMatchObject({
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: name },
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }],
      variants: [{ name: 'v1', weight: 1000 }],
    });
    expect(development.variants).toEqual([{ name: 'ev', weight: 1000, weightType: 'variable', stickiness: 'default' }]);
    expect(copy.dependencies).toEqual([{ feature: parent, enabled: true, variants: [] }]);
    expect(await eventsOf(name)).toEqual(['feature-created', 'feature-strategy-add', 'feature-dependency-added']);
    expect(await revision()).toBeGreaterThan(before);
    // The source is untouched.
    const original = await bodyOf(await call('GET', flagPath(P, source)));
    expect(original.environments.find((e: { name: string }) => e.name === 'development').strategies[0].parameters.groupId).toBe(source);
  });

  it('keeps groupId with replaceGroupId false, and clones into another project', async () => {
    const source = unique('clone-keep');
    await createFeature(source, {}, P);
    await addStrategy(P, source, 'production', {
      name: 'flexibleRollout',
      parameters: { rollout: '10', stickiness: 'default', groupId: 'g' },
    });
    const kept = unique('clone-kept');
    expect((await call('POST', `${flagPath(P, source)}/clone`, { body: { name: kept, replaceGroupId: false } })).status).toBe(201);
    expect(await rows('SELECT parameters FROM feature_strategies WHERE feature_name = ?', kept)).toEqual([
      { parameters: JSON.stringify({ rollout: '10', stickiness: 'default', groupId: 'g' }) },
    ]);
    const other = await createProject(unique('clone-to'));
    const moved = unique('clone-moved');
    const response = await call('POST', `${flagPath(other, source)}/clone`, { body: { name: moved } });
    expect(response.status).toBe(201);
    expect((await bodyOf(response)).project).toBe(other);
    expect(await rows('SELECT project_name, environment FROM feature_strategies WHERE feature_name = ?', moved)).toEqual([
      { project_name: other, environment: 'production' },
    ]);
  });

  it('refuses a taken name (409), a bad name (400), an unknown or archived flag (404), an unknown project (404) and a viewer (403), writing nothing', async () => {
    const source = unique('clone-refused');
    const archived = unique('clone-archived');
    await createFeature(source, {}, P);
    await createFeature(archived, {}, P);
    await adminOk('DELETE', flagPath(P, archived));
    const before = await footprint();
    const clone = (from: string, body: unknown, options = {}, project = P) =>
      call('POST', `${flagPath(project, from)}/clone`, { body, ...options });

    expect((await expectError(await clone(source, { name: source }), 409, 'NameExistsError')).message).toBe(
      'A flag with that name already exists',
    );
    expect((await expectError(await clone(source, { name: archived }), 409, 'NameExistsError')).message).toBe(
      'An archived flag with that name already exists',
    );
    const bad = await expectError(await clone(source, { name: 'bad name' }), 400, 'BadDataError');
    expect(bad.details[0]!.path).toBe('/body/name');
    await expectError(await clone(source, {}), 400, 'BadDataError');
    await expectError(await clone(source, { name: unique('x'), replaceGroupId: 'x' }), 400, 'BadDataError');
    expect((await expectError(await clone('no-such-flag', { name: unique('x') }), 404, 'NotFoundError')).message).toBe(
      'Could not find feature flag with name no-such-flag',
    );
    expect((await expectError(await clone(archived, { name: unique('x') }), 404, 'NotFoundError')).message).toBe(
      `Could not find feature flag with name ${archived}`,
    );
    expect((await expectError(await clone(source, { name: unique('x') }, {}, 'no-such-project'), 404, 'NotFoundError')).message).toBe(
      'Active project with id no-such-project does not exist',
    );
    await expectError(await clone(source, { name: unique('x') }, { token: viewer }), 403, 'NoAccessError');
    expect((await clone(source, { name: unique('x') }, { token: null })).status).toBe(401);
    expect(await footprint()).toEqual(before);
  });

  it("refuses a name that does not match the target project's naming pattern (400 PatternError), writing nothing", async () => {
    const source = unique('clone-pattern-src');
    await createFeature(source, {}, P);
    const patterned = await createProject(unique('patterned'));
    await env.DB.prepare("UPDATE projects SET feature_naming_pattern = 'team-.+' WHERE id = ?").bind(patterned).run();
    const before = await footprint();
    const refused = await call('POST', `${flagPath(patterned, source)}/clone`, { body: { name: unique('other') } });
    expect((await expectError(refused, 400, 'PatternError')).message).toMatch(/does not match the project's naming pattern: "team-\.\+"/);
    expect(await footprint()).toEqual(before);
    expect((await call('POST', `${flagPath(patterned, source)}/clone`, { body: { name: unique('team-ok') } })).status).toBe(201);
  });
});

describe('POST /api/admin/projects/:projectId/bulk_features/environments/:environment/on|off', () => {
  it('turns every named flag on (adding the default strategy where there is none), then off, with an event each', async () => {
    const a = unique('bulk-a');
    const b = unique('bulk-b');
    await createFeature(a, {}, P);
    await createFeature(b, {}, P);
    await addStrategy(P, b, 'production', { name: 'default', parameters: {}, constraints: [] });
    const before = await revision();
    const on = await call('POST', `/api/admin/projects/${P}/bulk_features/environments/production/on`, { body: { features: [a, b] } });
    expect(on.status).toBe(200);
    expect(await on.text()).toBe('');
    const enabled = (name: string) =>
      count("SELECT enabled AS n FROM feature_environments WHERE feature_name = ? AND environment = 'production'", name);
    expect([await enabled(a), await enabled(b)]).toEqual([1, 1]);
    expect(await eventsOf(a)).toEqual(['feature-created', 'feature-strategy-add', 'feature-environment-enabled']);
    expect(await eventsOf(b)).toEqual(['feature-created', 'feature-strategy-add', 'feature-environment-enabled']);
    expect(await revision()).toBeGreaterThan(before);
    expect(
      (await call('POST', `/api/admin/projects/${P}/bulk_features/environments/production/off`, { body: { features: [a, b] } })).status,
    ).toBe(200);
    expect([await enabled(a), await enabled(b)]).toEqual([0, 0]);
    expect((await eventsOf(a)).at(-1)).toBe('feature-environment-disabled');
    // Flags already off: nothing changes, no event, and SDKs' revision stays (as in Unleash).
    const quiet = await revision();
    const events = await count('SELECT count(*) AS n FROM events');
    expect(
      (await call('POST', `/api/admin/projects/${P}/bulk_features/environments/production/off`, { body: { features: [a, b] } })).status,
    ).toBe(200);
    expect(await count('SELECT count(*) AS n FROM events')).toBe(events);
    expect(await revision()).toBe(quiet);
  });

  it('checks the permission in the environment named: a production-only toggler may not touch development, nor add strategies it may not', async () => {
    const role = await bodyOf(
      await adminOk('POST', '/api/admin/roles', {
        name: unique('prod-toggler'),
        type: 'custom',
        permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }],
      }),
    );
    const toggler = await signInAs('Viewer', async (userId) => {
      await adminOk('POST', `/api/admin/projects/${P}/access`, { roles: [role.id], users: [userId] });
    });
    const withStrategy = unique('bulk-perm-a');
    const bare = unique('bulk-perm-b');
    await createFeature(withStrategy, {}, P);
    await createFeature(bare, {}, P);
    await addStrategy(P, withStrategy, 'production', { name: 'default', parameters: {}, constraints: [] });
    await addStrategy(P, withStrategy, 'development', { name: 'default', parameters: {}, constraints: [] });
    const bulk = (environment: string, features: string[]) =>
      call('POST', `/api/admin/projects/${P}/bulk_features/environments/${environment}/on`, { body: { features }, token: toggler });
    const before = await footprint();
    await expectError(await bulk('development', [withStrategy]), 403, 'NoAccessError');
    // The bare flag would get the default strategy, which needs CREATE_FEATURE_STRATEGY: all or nothing.
    const refused = await bulk('production', [withStrategy, bare]);
    expect((await expectError(refused, 403, 'NoAccessError')).message).toContain('CREATE_FEATURE_STRATEGY');
    expect(await footprint()).toEqual(before);
    expect((await bulk('production', [withStrategy])).status).toBe(200);
    expect(
      await count("SELECT enabled AS n FROM feature_environments WHERE feature_name = ? AND environment = 'production'", withStrategy),
    ).toBe(1);
  });

  it('changes nothing when one flag is unknown (404), the body is wrong (400) or the caller may not (403)', async () => {
    const a = unique('bulk-none');
    await createFeature(a, {}, P);
    const before = await footprint();
    const path = `/api/admin/projects/${P}/bulk_features/environments/production/on`;
    expect((await expectError(await call('POST', path, { body: { features: [a, 'no-such-flag'] } }), 404, 'NotFoundError')).message).toBe(
      `There's no feature named "no-such-flag" in project "${P}".`,
    );
    await expectError(await call('POST', path, { body: { features: 'x' } }), 400, 'BadDataError');
    await expectError(await call('POST', path, { body: {} }), 400, 'BadDataError');
    await expectError(await call('POST', path, { body: { features: [a] }, token: viewer }), 403, 'NoAccessError');
    expect(
      (
        await expectError(
          await call('POST', `/api/admin/projects/${P}/bulk_features/environments/nowhere/on`, { body: { features: [a] } }),
          404,
          'NotFoundError',
        )
      ).message,
    ).toBe(`Could not find environment nowhere for feature: ${a}`);
    expect(await footprint()).toEqual(before);
  });
});

describe('POST /api/admin/projects/:projectId/archive, …/archive/validate and …/delete', () => {
  it('validate names the parents that would orphan a child outside the list and whether dependencies go', async () => {
    const parent = unique('val-parent');
    const child = unique('val-child');
    await createFeature(parent, {}, P);
    await createFeature(child, {}, P);
    await adminOk('POST', `${flagPath(P, child)}/dependencies`, { feature: parent });
    const validate = async (features: string[]) =>
      bodyOf(await call('POST', `/api/admin/projects/${P}/archive/validate`, { body: { features } }));
    expect(await validate([parent])).toEqual({ parentsWithChildFeatures: [parent], hasDeletedDependencies: true });
    expect(await validate([parent, child])).toEqual({ parentsWithChildFeatures: [], hasDeletedDependencies: true });
    expect(await validate(['no-such-flag'])).toEqual({ parentsWithChildFeatures: [], hasDeletedDependencies: false });
    await expectError(await call('POST', `/api/admin/projects/${P}/archive/validate`, { body: {} }), 400, 'BadDataError');
    await expectError(
      await call('POST', `/api/admin/projects/${P}/archive/validate`, { body: { features: [] }, token: viewer }),
      403,
      'NoAccessError',
    );
  });

  it('archives several flags at once (202), dropping a child’s dependency, ignoring unknown names; then deletes them', async () => {
    const parent = unique('arch-parent');
    const child = unique('arch-child');
    const other = unique('arch-other');
    for (const name of [parent, child, other]) await createFeature(name, {}, P);
    await adminOk('POST', `${flagPath(P, child)}/dependencies`, { feature: parent });
    const response = await call('POST', `/api/admin/projects/${P}/archive`, { body: { features: [child, other, 'no-such-flag'] } });
    expect(response.status).toBe(202);
    expect(await count('SELECT count(*) AS n FROM features WHERE name IN (?, ?) AND archived_at IS NOT NULL', child, other)).toBe(2);
    expect(await count('SELECT count(*) AS n FROM dependent_features WHERE child = ?', child)).toBe(0);
    expect(await eventsOf(child)).toEqual([
      'feature-created',
      'feature-dependency-added',
      'feature-dependencies-removed',
      'feature-archived',
    ]);
    expect(await eventsOf(other)).toEqual(['feature-created', 'feature-archived']);
    expect(await count("SELECT count(*) AS n FROM feature_lifecycles WHERE feature = ? AND stage = 'archived'", other)).toBe(1);
    // Already archived: ignored, no second event.
    expect((await call('POST', `/api/admin/projects/${P}/archive`, { body: { features: [other] } })).status).toBe(202);
    expect(await eventsOf(other)).toEqual(['feature-created', 'feature-archived']);
    // The archive page's revive brings one back.
    expect((await call('POST', `/api/admin/projects/${P}/revive`, { body: { features: [other] } })).status).toBe(200);

    const before = await revision();
    const deleted = await call('POST', `/api/admin/projects/${P}/delete`, { body: { features: [child, other, parent] } });
    expect(deleted.status).toBe(200);
    // Only archived flags are deleted: `other` was revived and `parent` is active.
    expect(await count('SELECT count(*) AS n FROM features WHERE name = ?', child)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM features WHERE name IN (?, ?)', other, parent)).toBe(2);
    const [event] = await rows<{ type: string; project: string; pre_data: string }>(
      "SELECT type, project, pre_data FROM events WHERE feature_name = ? AND type = 'feature-deleted'",
      child,
    );
    expect(event!.project).toBe(P);
    expect(JSON.parse(event!.pre_data)).toMatchObject({ name: child, project: P, archived: true, stale: false });
    // SDKs never saw the archived flag: its deletion does not move the revision.
    expect(await revision()).toBe(before);
  });

  it("refuses to orphan a child (403, Unleash's single and plural messages) and flags of another project (403), writing nothing", async () => {
    const parent = unique('orph-parent');
    const child = unique('orph-child');
    const loner = unique('orph-loner');
    for (const name of [parent, child, loner]) await createFeature(name, {}, P);
    await adminOk('POST', `${flagPath(P, child)}/dependencies`, { feature: parent });
    const elsewhere = await createProject(unique('orph-else'));
    const foreign = unique('orph-foreign');
    await createFeature(foreign, {}, elsewhere);
    const before = await footprint();
    for (const path of ['archive', 'delete']) {
      const url = `/api/admin/projects/${P}/${path}`;
      expect((await expectError(await call('POST', url, { body: { features: [parent] } }), 403, 'InvalidOperationError')).message).toBe(
        'You can not archive/delete this feature since other features depend on it.',
      );
      expect(
        (await expectError(await call('POST', url, { body: { features: [parent, loner] } }), 403, 'InvalidOperationError')).message,
      ).toBe('You can not archive/delete those features since other features depend on them.');
      expect(
        (await expectError(await call('POST', url, { body: { features: [loner, foreign] } }), 403, 'InvalidOperationError')).message,
      ).toBe(
        `The operation could not be completed. The features exist, but the provided project ids ("${elsewhere}") does not match the project provided in request URL ("${P}").`,
      );
      await expectError(await call('POST', url, { body: { features: [loner] }, token: viewer }), 403, 'NoAccessError');
      await expectError(await call('POST', url, { body: { features: [1] } }), 400, 'BadDataError');
    }
    expect(await footprint()).toEqual(before);
  });
});

describe('POST/DELETE /api/admin/projects/:projectId/favorites', () => {
  it("marks and unmarks a person's favourite project with Unleash's events; the SDK revision stays", async () => {
    const person = await signedInUser('Viewer');
    const before = await revision();
    expect(
      (await call('POST', `/api/admin/projects/${P}/favorites`, withSession(person.cookie, { contentType: 'application/json' }))).status,
    ).toBe(200);
    expect(await count('SELECT count(*) AS n FROM favorite_projects WHERE project = ? AND user_id = ?', P, person.id)).toBe(1);
    expect(
      (await call('POST', `/api/admin/projects/${P}/favorites`, withSession(person.cookie, { contentType: 'application/json' }))).status,
    ).toBe(200);
    expect(await count('SELECT count(*) AS n FROM favorite_projects WHERE project = ? AND user_id = ?', P, person.id)).toBe(1);
    expect(
      (await call('DELETE', `/api/admin/projects/${P}/favorites`, withSession(person.cookie, { contentType: 'application/json' }))).status,
    ).toBe(200);
    expect(await count('SELECT count(*) AS n FROM favorite_projects WHERE project = ? AND user_id = ?', P, person.id)).toBe(0);
    const events = await rows<{ type: string; project: string; data: string }>(
      "SELECT type, project, data FROM events WHERE created_by_user_id = ? AND type LIKE 'project-%' ORDER BY id",
      person.id,
    );
    expect(events.map((e) => e.type)).toEqual(['project-favorited', 'project-favorited', 'project-unfavorited']);
    expect(JSON.parse(events[0]!.data)).toEqual({ project: P });
    expect(await revision()).toBe(before);
  });

  it('answers 404 for an unknown project and 401 without a credential, writing nothing', async () => {
    const before = await footprint();
    expect(
      (
        await expectError(
          await call('POST', '/api/admin/projects/no-such-project/favorites', { contentType: 'application/json' }),
          404,
          'NotFoundError',
        )
      ).message,
    ).toBe('Active project with id no-such-project does not exist');
    expect((await call('POST', `/api/admin/projects/${P}/favorites`, { token: null })).status).toBe(401);
    expect(await footprint()).toEqual(before);
  });

  it('answers 415 without a JSON content type, as 6.10.1, writing nothing', async () => {
    const person = await signedInUser('Viewer');
    const before = await footprint();
    for (const method of ['POST', 'DELETE']) {
      const bare = await expectError(
        await call(method, `/api/admin/projects/${P}/favorites`, withSession(person.cookie)),
        415,
        'ContentTypeerror',
      );
      expect(bare.message).toBe(
        "We do not accept the content-type you provided (you didn't provide one). Try using one of the content-types we do accept instead (application/json) and make sure the body is in the corresponding format.",
      );
      await expectError(
        await call(method, `/api/admin/projects/${P}/favorites`, withSession(person.cookie, { rawBody: 'x', contentType: 'text/plain' })),
        415,
        'ContentTypeerror',
      );
    }
    expect(await count('SELECT count(*) AS n FROM favorite_projects WHERE user_id = ?', person.id)).toBe(0);
    expect(await footprint()).toEqual(before);
  });
});

describe('GET /api/admin/projects/:projectId/features/:child/parents', () => {
  it("lists the project's active flags that are not children themselves, by name; none for an unknown flag", async () => {
    const project = await createProject(unique('parents'));
    const [a, b, c, gone] = [unique('pa'), unique('pb'), unique('pc'), unique('pgone')];
    for (const name of [a, b, c, gone]) await createFeature(name, {}, project);
    await adminOk('POST', `${flagPath(project, c)}/dependencies`, { feature: b });
    await adminOk('DELETE', flagPath(project, gone));
    expect(await bodyOf(await call('GET', `${flagPath(project, a)}/parents`))).toEqual([b]);
    expect(await bodyOf(await call('GET', `${flagPath(project, b)}/parents`))).toEqual([a]);
    expect(await bodyOf(await call('GET', `${flagPath(project, 'no-such-flag')}/parents`))).toEqual([]);
    expect((await call('GET', `${flagPath(project, a)}/parents`, { token: null })).status).toBe(401);
  });
});

describe('lifecycle: POST …/lifecycle/uncomplete and GET /api/admin/lifecycle/count', () => {
  it('uncomplete removes the completed stage with feature-uncompleted; count follows; the SDK revision stays', async () => {
    const name = unique('life');
    const countOf = async () => bodyOf(await call('GET', '/api/admin/lifecycle/count'));
    const start = await countOf();
    expect(Object.keys(start)).toEqual(['initial', 'preLive', 'live', 'completed', 'archived']);
    await createFeature(name, {}, P);
    expect((await countOf()).initial).toBe(start.initial + 1);
    await adminOk('POST', `${flagPath(P, name)}/lifecycle/complete`, { status: 'kept' });
    const completed = await countOf();
    expect([completed.initial, completed.completed]).toEqual([start.initial, start.completed + 1]);
    const before = await revision();
    const response = await call('POST', `${flagPath(P, name)}/lifecycle/uncomplete`);
    expect(response.status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM feature_lifecycles WHERE feature = ? AND stage = 'completed'", name)).toBe(0);
    expect((await eventsOf(name)).at(-1)).toBe('feature-uncompleted');
    expect(await countOf()).toEqual({ ...start, initial: start.initial + 1 });
    expect(await revision()).toBe(before);
  });

  it('answers 200 writing nothing for a flag not in the project (as Unleash answers), 403 for a viewer', async () => {
    const name = unique('life-refused');
    await createFeature(name, {}, P);
    await adminOk('POST', `${flagPath(P, name)}/lifecycle/complete`, { status: 'kept' });
    const before = await footprint();
    expect((await call('POST', `${flagPath(P, 'no-such-flag')}/lifecycle/uncomplete`)).status).toBe(200);
    expect((await call('POST', `${flagPath('default', name)}/lifecycle/uncomplete`)).status).toBe(200);
    await expectError(await call('POST', `${flagPath(P, name)}/lifecycle/uncomplete`, { token: viewer }), 403, 'NoAccessError');
    expect(await footprint()).toEqual(before);
  });
});

describe('PUT /api/admin/feature-types/:id/lifetime', () => {
  it("sets a type's lifetime (0 means none) with feature-type-updated; the SDK revision stays", async () => {
    const before = await revision();
    const response = await call('PUT', '/api/admin/feature-types/kill-switch/lifetime', { body: { lifetimeDays: 41 } });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['id', 'name', 'description', 'lifetimeDays']);
    expect(body).toMatchObject({ id: 'kill-switch', name: 'Kill switch', lifetimeDays: 41 });
    const listed = (await bodyOf(await call('GET', '/api/admin/feature-types'))).types.find((t: { id: string }) => t.id === 'kill-switch');
    expect(listed.lifetimeDays).toBe(41);
    expect(
      (await bodyOf(await call('PUT', '/api/admin/feature-types/kill-switch/lifetime', { body: { lifetimeDays: 0 } }))).lifetimeDays,
    ).toBe(null);
    const [event] = await rows<{ data: string; pre_data: string }>(
      "SELECT data, pre_data FROM events WHERE type = 'feature-type-updated' ORDER BY id DESC LIMIT 1",
    );
    expect(JSON.parse(event!.data).lifetimeDays).toBe(null);
    expect(JSON.parse(event!.pre_data).lifetimeDays).toBe(41);
    expect(await revision()).toBe(before);
  });

  it('refuses bad days (400), an unknown type (404) and a non-admin (403), writing nothing', async () => {
    const editor = await signInAs('Editor');
    const before = await footprint();
    const put = (id: string, body: unknown, options = {}) => call('PUT', `/api/admin/feature-types/${id}/lifetime`, { body, ...options });
    expect((await expectError(await put('release', { lifetimeDays: -1 }), 400, 'ValidationError')).details[0]!.path).toBe(
      '/body/lifetimeDays',
    );
    await expectError(await put('release', {}), 400, 'ValidationError');
    await expectError(await put('release', { lifetimeDays: 'x' }), 400, 'ValidationError');
    await expectError(await put('release', { lifetimeDays: 2147483648 }), 400, 'ValidationError');
    expect((await expectError(await put('nope', { lifetimeDays: 4 }), 404, 'NotFoundError')).message).toBe(
      'The feature type you tried to update ("nope") does not exist.',
    );
    await expectError(await put('release', { lifetimeDays: 4 }, { token: editor }), 403, 'NoAccessError');
    expect(await footprint()).toEqual(before);
  });
});
