import { beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createFeature, createProject } from './support/admin';
import { count, rows } from './support/db';
import { bodyOf, call, createToken, expectError } from './support/http';
import { unique } from './support/names';
import { signInAs } from './support/users';

let viewer: string;
let admin: string;

beforeAll(async () => {
  viewer = await signInAs('Viewer');
  admin = await signInAs('Admin');
});

const LIST_KEYS = [
  'name',
  'id',
  'description',
  'health',
  // Unleash 8 (test/unleash8-sweep.test.ts); the 6.10.1 UI ignores both.
  'technicalDebt',
  'featureCount',
  'memberCount',
  'createdAt',
  'archivedAt',
  'mode',
  'lastReportedFlagUsage',
  'lastUpdatedAt',
  'onboardingStatus',
  'owners',
];

const OVERVIEW_KEYS = [
  'stats',
  'name',
  'description',
  'mode',
  'featureLimit',
  'featureNaming',
  'defaultStickiness',
  'health',
  'favorite',
  'updatedAt',
  'createdAt',
  'environments',
  'features',
  'members',
  'version',
];

const FLAG_ENVIRONMENT_KEYS = [
  'name',
  'enabled',
  'type',
  'sortOrder',
  'variantCount',
  'lastSeenAt',
  'hasStrategies',
  'hasEnabledStrategies',
];

async function eventCount(): Promise<number> {
  return count('SELECT count(*) AS n FROM events');
}

describe('GET /api/admin/projects', () => {
  it("lists projects by name with Unleash 6.10.1's keys: owners, last flag update and last reported usage", async () => {
    const id = unique('list-b');
    // A person creating a project becomes its Owner; an API token leaves the system as owner.
    const created = await call('POST', '/api/admin/projects', { token: admin, body: { id, name: `B ${id}` } });
    expect(created.status).toBe(201);
    const systemOwned = await createProject(unique('list-a'));
    await createFeature(`${id}-flag`, {}, id);
    const body = await bodyOf(await call('GET', '/api/admin/projects'));
    const names = body.projects.map((project: { name: string }) => project.name);
    expect(names).toEqual([...names].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)));
    const mine = body.projects.find((project: { id: string }) => project.id === id);
    expect(Object.keys(mine)).toEqual(LIST_KEYS);
    expect(mine).toMatchObject({ featureCount: 1, memberCount: 1, mode: 'open', archivedAt: null, lastReportedFlagUsage: null });
    expect(mine.owners).toHaveLength(1);
    expect(Object.keys(mine.owners[0])).toEqual(['ownerType', 'name', 'email', 'imageUrl']);
    expect(mine.owners[0].ownerType).toBe('user');
    const [flagEvent] = await rows<{ created_at: string }>(
      'SELECT created_at FROM events WHERE feature_name = ? ORDER BY id DESC LIMIT 1',
      `${id}-flag`,
    );
    expect(mine.lastUpdatedAt).toBe(flagEvent!.created_at);
    const other = body.projects.find((project: { id: string }) => project.id === systemOwned);
    expect(other).toMatchObject({ owners: [{ ownerType: 'system' }], lastUpdatedAt: null, memberCount: 0 });
    // The default project's members do not count the root roles people hold there.
    expect(body.projects.find((project: { id: string }) => project.id === 'default').memberCount).toBe(0);
  });

  it('reports the newest SDK usage of a flag and answers a person with `favorite` after `health` and 8.x `technicalDebt`', async () => {
    const id = await createProject(unique('used'));
    await createFeature(`${id}-seen`, {}, id);
    await adminOk('POST', '/api/admin/projects/' + id + '/features/' + `${id}-seen` + '/environments/development/on');
    const seenAt = '2026-01-02T03:04:05.000Z';
    const { env } = await import('cloudflare:workers');
    await env.DB.prepare('UPDATE features SET last_seen_at = ? WHERE name = ?').bind(seenAt, `${id}-seen`).run();
    const asPerson = await bodyOf(await call('GET', '/api/admin/projects', { token: viewer }));
    const project = asPerson.projects.find((item: { id: string }) => item.id === id);
    expect(Object.keys(project)).toEqual([...LIST_KEYS.slice(0, 5), 'favorite', ...LIST_KEYS.slice(5)]);
    expect(project).toMatchObject({ favorite: false, lastReportedFlagUsage: seenAt });
  });
});

describe('`favorite` of a project: whether the caller made it a favourite', () => {
  const favourite = (method: 'POST' | 'DELETE', id: string, token: string) =>
    call(method, `/api/admin/projects/${id}/favorites`, { token, contentType: 'application/json' });
  const listed = async (token: string | undefined, id: string) =>
    (await bodyOf(await call('GET', '/api/admin/projects', { token }))).projects.find((item: { id: string }) => item.id === id);

  it('in the list, the overview and the deprecated overview, for that person only', async () => {
    const id = await createProject(unique('fav'));
    const other = await createProject(unique('fav-other'));
    const someoneElse = await signInAs('Viewer');
    expect((await favourite('POST', id, viewer)).status).toBe(200);

    expect(await listed(viewer, id)).toMatchObject({ favorite: true });
    expect(await listed(viewer, other)).toMatchObject({ favorite: false });
    expect(await listed(someoneElse, id)).toMatchObject({ favorite: false });
    expect(await listed(undefined, id)).not.toHaveProperty('favorite');
    expect(await bodyOf(await call('GET', `/api/admin/projects/${id}/overview`, { token: viewer }))).toMatchObject({ favorite: true });
    expect(await bodyOf(await call('GET', `/api/admin/projects/${id}`, { token: viewer }))).toMatchObject({ favorite: true });
    expect(await bodyOf(await call('GET', `/api/admin/projects/${id}/overview`, { token: someoneElse }))).toMatchObject({
      favorite: false,
    });
    expect(await bodyOf(await call('GET', `/api/admin/projects/${id}/overview`))).toMatchObject({ favorite: false });

    expect((await favourite('DELETE', id, viewer)).status).toBe(200);
    expect(await listed(viewer, id)).toMatchObject({ favorite: false });
    expect(await bodyOf(await call('GET', `/api/admin/projects/${id}`, { token: viewer }))).toMatchObject({ favorite: false });
  });
});

describe('GET /api/admin/projects/:projectId', () => {
  it("answers 6.10.1's overview with the project's flags, their environments and tags", async () => {
    const id = await createProject(unique('ov'), ['development', 'production']);
    await createFeature(`${id}-one`, { description: 'first' }, id);
    await createFeature(`${id}-two`, {}, id);
    await adminOk('POST', `/api/admin/projects/${id}/features/${id}-one/environments/development/strategies`, { name: 'default' });
    await adminOk('POST', `/api/admin/projects/${id}/features/${id}-one/environments/development/on`);
    await adminOk('POST', `/api/admin/features/${id}-one/tags`, { type: 'simple', value: `${id}-tag` });
    await adminOk('POST', `/api/admin/projects/${id}/environments/production/default-strategy`, {
      name: 'flexibleRollout',
      constraints: [],
      parameters: { rollout: '50', stickiness: 'default', groupId: '' },
    });
    const body = await bodyOf(await call('GET', `/api/admin/projects/${id}`));
    expect(Object.keys(body)).toEqual(OVERVIEW_KEYS);
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
    expect(body.stats.createdCurrentWindow).toBe(2);
    expect(body.environments[0]).toEqual({ environment: 'development' });
    expect(body.environments[1]).toMatchObject({ environment: 'production', defaultStrategy: { name: 'flexibleRollout' } });
    expect(body.features.map((flag: { name: string }) => flag.name)).toEqual([`${id}-one`, `${id}-two`]);
    const [one, two] = body.features;
    expect(Object.keys(one)).toEqual([
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
    expect(Object.keys(two)).not.toContain('tags');
    expect(one.tags).toEqual([{ value: `${id}-tag`, type: 'simple' }]);
    expect(one.environments.map((environment: { name: string }) => environment.name)).toEqual(['development', 'production']);
    expect(Object.keys(one.environments[0])).toEqual(FLAG_ENVIRONMENT_KEYS);
    expect(one.environments[0]).toMatchObject({ enabled: true, type: 'development', hasStrategies: true, hasEnabledStrategies: true });
    expect(one.environments[1]).toMatchObject({ enabled: false, hasStrategies: false, variantCount: 0 });
    expect(body).toMatchObject({ favorite: false, health: 100, members: 0, version: 1, featureLimit: null, mode: 'open' });
  });

  it('gives each flag `favorite` for a person, lists archived flags with ?archived=true, and 404s an unknown project', async () => {
    const id = await createProject(unique('ovp'));
    await createFeature(`${id}-live`, {}, id);
    await createFeature(`${id}-gone`, {}, id);
    await adminOk('DELETE', `/api/admin/projects/${id}/features/${id}-gone`);
    const person = await bodyOf(await call('GET', `/api/admin/projects/${id}`, { token: viewer }));
    expect(person.features.map((flag: { name: string }) => flag.name)).toEqual([`${id}-live`]);
    expect(Object.keys(person.features[0]).slice(0, 3)).toEqual(['type', 'description', 'favorite']);
    const archived = await bodyOf(await call('GET', `/api/admin/projects/${id}?archived=true`));
    expect(archived.features.map((flag: { name: string }) => flag.name)).toEqual([`${id}-gone`]);
    const error = await expectError(await call('GET', '/api/admin/projects/no-such-project'), 404, 'NotFoundError');
    expect(error.message).toBe('No project found');
  });
});

describe('PUT /api/admin/projects/:projectId (Unleash Enterprise)', () => {
  it('renames and re-describes a project (200, no body) with a project-updated event', async () => {
    const id = await createProject(unique('put'));
    const response = await call('PUT', `/api/admin/projects/${id}`, {
      body: { name: 'Renamed', description: 'Now described', mode: 'protected' },
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    const [row] = await rows<{ name: string; description: string; mode: string; updated_at: string | null }>(
      'SELECT name, description, mode, updated_at FROM projects WHERE id = ?',
      id,
    );
    expect(row).toMatchObject({ name: 'Renamed', description: 'Now described', mode: 'protected' });
    expect(row!.updated_at).not.toBeNull();
    const [event] = await rows<{ data: string; pre_data: string; project: string }>(
      "SELECT data, pre_data, project FROM events WHERE type = 'project-updated' ORDER BY id DESC LIMIT 1",
    );
    expect(event!.project).toBe(id);
    expect(JSON.parse(event!.data)).toMatchObject({ id, name: 'Renamed', description: 'Now described', mode: 'protected' });
    expect(JSON.parse(event!.pre_data)).toMatchObject({ id, name: id, description: null, mode: 'open' });
    // Without a description the one it has is kept.
    await adminOk('PUT', `/api/admin/projects/${id}`, { name: 'Again' });
    expect((await rows('SELECT name, description FROM projects WHERE id = ?', id))[0]).toEqual({
      name: 'Again',
      description: 'Now described',
    });
  });

  it('refuses a bad body (400), an unknown project (404) and a caller without UPDATE_PROJECT there (403), writing nothing', async () => {
    const id = await createProject(unique('put-no'));
    const ownerElsewhere = await signInAs('Viewer');
    const before = await eventCount();
    await expectError(await call('PUT', `/api/admin/projects/${id}`, { body: { description: 'no name' } }), 400, 'ValidationError');
    await expectError(await call('PUT', `/api/admin/projects/${id}`, { body: { name: '  ' } }), 400, 'ValidationError');
    await expectError(await call('PUT', `/api/admin/projects/${id}`, { body: { name: 'x', mode: 'secret' } }), 400, 'ValidationError');
    await expectError(await call('PUT', '/api/admin/projects/no-such-project', { body: { name: 'x' } }), 404, 'NotFoundError');
    await expectError(await call('PUT', `/api/admin/projects/${id}`, { body: { name: 'x' }, token: ownerElsewhere }), 403, 'NoAccessError');
    expect(await eventCount()).toBe(before);
    expect((await rows('SELECT name FROM projects WHERE id = ?', id))[0]).toEqual({ name: id });
  });

  it("lets a project's Owner change it, not another project", async () => {
    const mine = unique('owned');
    const owner = await signInAs('Editor');
    expect((await call('POST', '/api/admin/projects', { token: owner, body: { id: mine, name: mine } })).status).toBe(201);
    // An Editor holds UPDATE_PROJECT everywhere; a Viewer made Owner holds it only in that project.
    const viewerOwner = await signInAs('Viewer', async (userId) => {
      const { env } = await import('cloudflare:workers');
      await env.DB.prepare('INSERT INTO role_user (role_id, user_id, project) VALUES (4, ?, ?)').bind(userId, mine).run();
    });
    expect((await call('PUT', `/api/admin/projects/${mine}`, { token: viewerOwner, body: { name: 'by owner' } })).status).toBe(200);
    await expectError(
      await call('PUT', '/api/admin/projects/default', { token: viewerOwner, body: { name: 'nope' } }),
      403,
      'NoAccessError',
    );
  });
});

describe('DELETE /api/admin/projects/:projectId (Unleash Enterprise)', () => {
  it('deletes a project with only archived flags: flags, its own tokens and role assignments go, shared tokens only lose it', async () => {
    const id = await createProject(unique('del'));
    const other = await createProject(unique('del-other'));
    await createFeature(`${id}-archived`, {}, id);
    await adminOk('DELETE', `/api/admin/projects/${id}/features/${id}-archived`);
    const own = await createToken({ tokenName: `${id}-own`, type: 'client', environment: 'development', projects: [id] });
    const shared = await createToken({ tokenName: `${id}-shared`, type: 'client', environment: 'development', projects: [id, other] });
    expect((await call('GET', '/api/client/features', { token: own })).status).toBe(200);
    const { env } = await import('cloudflare:workers');
    await env.DB.prepare('INSERT INTO role_user (role_id, user_id, project) SELECT 5, id, ? FROM users WHERE id > 0 LIMIT 1')
      .bind(id)
      .run();

    const response = await call('DELETE', `/api/admin/projects/${id}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(await count('SELECT count(*) AS n FROM projects WHERE id = ?', id)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM features WHERE project = ?', id)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM project_environments WHERE project_id = ?', id)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM role_user WHERE project = ?', id)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM api_tokens WHERE token_name = ?', `${id}-own`)).toBe(0);
    expect(
      await rows(
        'SELECT project FROM api_token_project p JOIN api_tokens t ON t.secret_hash = p.secret_hash WHERE t.token_name = ?',
        `${id}-shared`,
      ),
    ).toEqual([{ project: other }]);
    // The deleted token stops working at once; the shared one keeps working.
    await expectError(await call('GET', '/api/client/features', { token: own }), 401, 'AuthenticationRequired');
    expect((await call('GET', '/api/client/features', { token: shared })).status).toBe(200);
    const types = (await rows<{ type: string }>('SELECT type FROM events WHERE project = ? ORDER BY id DESC LIMIT 2', id)).map(
      (row) => row.type,
    );
    expect(types).toEqual(['project-deleted', 'feature-deleted']);
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'api-token-deleted' AND pre_data LIKE ?", `%${id}-own%`)).toBe(1);
    await expectError(await call('GET', `/api/admin/projects/${id}`), 404, 'NotFoundError');
  });

  it("refuses the default project, a project with live flags (Unleash's 403s), an unknown one and a Viewer, writing nothing", async () => {
    const id = await createProject(unique('del-live'));
    await createFeature(`${id}-live`, {}, id);
    const before = await eventCount();
    const defaultRefused = await expectError(await call('DELETE', '/api/admin/projects/default'), 403, 'InvalidOperationError');
    expect(defaultRefused.message).toBe('You can not delete the default project!');
    const live = await expectError(await call('DELETE', `/api/admin/projects/${id}`), 403, 'InvalidOperationError');
    expect(live.message).toBe('You can not delete a project with active feature flags');
    await expectError(await call('DELETE', '/api/admin/projects/no-such-project'), 404, 'NotFoundError');
    await expectError(await call('DELETE', `/api/admin/projects/${id}`, { token: viewer }), 403, 'NoAccessError');
    expect(await eventCount()).toBe(before);
    expect(await count('SELECT count(*) AS n FROM projects WHERE id = ?', id)).toBe(1);
    expect(await count('SELECT count(*) AS n FROM features WHERE project = ?', id)).toBe(1);
  });

  it('refuses while an archived flag of the project is a parent of a flag elsewhere', async () => {
    const id = await createProject(unique('del-parent'));
    await createFeature(`${id}-parent`, {}, id);
    await createFeature(`${id}-child`);
    // The API keeps dependencies within a project; a flag moved to another project can still have one.
    const { env } = await import('cloudflare:workers');
    await env.DB.prepare("INSERT INTO dependent_features (parent, child, enabled, variants) VALUES (?, ?, 1, '[]')")
      .bind(`${id}-parent`, `${id}-child`)
      .run();
    await env.DB.prepare("UPDATE features SET archived_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE name = ?")
      .bind(`${id}-parent`)
      .run();
    const before = await eventCount();
    await expectError(await call('DELETE', `/api/admin/projects/${id}`), 403, 'InvalidOperationError');
    expect(await eventCount()).toBe(before);
    expect(await count('SELECT count(*) AS n FROM features WHERE name = ?', `${id}-parent`)).toBe(1);
  });
});
