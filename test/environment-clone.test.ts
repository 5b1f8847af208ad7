/**
 * Cloning an environment, as Unleash Enterprise does (`POST /api/admin/environments/:name/clone`,
 * the Clone action of the UI's environments page): the new environment joins the chosen
 * projects with each flag's state, variants and strategies (segments included) from the
 * source, and optionally every role's rights scoped to the source.
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError } from './support/http';
import { unique } from './support/names';
import { signInAs } from './support/users';
import { count, eventsSince, rows } from './support/db';
import { maxEventId } from './support/import';

/** Everything a clone could write, and the event count. */
async function stored(): Promise<string> {
  const tables = [
    'environments',
    'project_environments',
    'feature_environments',
    'feature_strategies',
    'feature_strategy_segment',
    'role_permission',
  ];
  const dumps = [];
  for (const table of tables) dumps.push((await env.DB.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all()).results);
  return JSON.stringify(dumps) + (await count('SELECT count(*) AS n FROM events'));
}

const envName = (prefix: string) => unique(prefix).replace(/[^a-zA-Z0-9~_.-]/g, '-');

async function ok(method: string, path: string, body?: unknown, token?: string): Promise<any> {
  const response = await call(method, path, { body, token });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.headers.get('content-type')?.includes('json') ? bodyOf(response) : undefined;
}

interface Seed {
  source: string;
  used: string[];
  unused: string;
  flag: string;
  other: string;
  segmentId: number;
  roleId: number;
}

let seed: Seed;
let editor: string;

/**
 * A source environment used by two projects (a third does not use it), a flag in each with
 * strategies there: the first with a constraint, a segment, variants and a title, then a
 * disabled one; flag variants in the environment; a custom role with a right scoped to it.
 */
async function seedSource(): Promise<Seed> {
  const source = envName('clone-src');
  await ok('POST', '/api/admin/environments', { name: source, type: 'test' });
  const used = [unique('clone-p1'), unique('clone-p2')];
  const unused = unique('clone-p3');
  for (const id of [...used, unused]) await ok('POST', '/api/admin/projects', { id, name: id, environments: ['development'] });
  for (const id of used) await ok('POST', `/api/admin/projects/${id}/environments`, { environment: source });
  const segment = await ok('POST', '/api/admin/segments', { name: unique('clone-segment'), constraints: [] });
  const flag = unique('clone-flag');
  const other = unique('clone-other');
  await ok('POST', `/api/admin/projects/${used[0]}/features`, { name: flag });
  await ok('POST', `/api/admin/projects/${used[1]}/features`, { name: other });
  const strategies = `/api/admin/projects/${used[0]}/features/${flag}/environments/${source}/strategies`;
  await ok('POST', strategies, {
    name: 'flexibleRollout',
    title: 'Half of the beta users',
    parameters: { rollout: '50', stickiness: 'default', groupId: flag },
    constraints: [{ contextName: 'userId', operator: 'IN', values: ['a', 'b'] }],
    segments: [segment.id],
    variants: [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'b' } }],
  });
  await ok('POST', strategies, { name: 'default', disabled: true });
  await ok('POST', `/api/admin/projects/${used[0]}/features/${flag}/environments/${source}/on`);
  // Flag variants per environment (legacy, no longer written through the API: as migrated from an older Unleash).
  const variants = [{ name: 'green', weight: 1000, weightType: 'variable', stickiness: 'default' }];
  await env.DB.prepare('UPDATE feature_environments SET variants = ? WHERE feature_name = ? AND environment = ?')
    .bind(JSON.stringify(variants), flag, source)
    .run();
  await ok('POST', `/api/admin/projects/${used[1]}/features/${other}/environments/${source}/strategies`, { name: 'default' });
  const role = await ok('POST', '/api/admin/roles', {
    name: unique('clone-role'),
    type: 'custom',
    permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: source }],
  });
  return { source, used, unused, flag, other, segmentId: segment.id, roleId: role.id };
}

beforeAll(async () => {
  editor = await signInAs('Editor');
  seed = await seedSource();
});

async function strategiesOf(environment: string, feature: string) {
  return rows<Record<string, unknown>>(
    `SELECT id, strategy_name, title, parameters, constraints, variants, sort_order, disabled,
       (SELECT group_concat(segment_id) FROM feature_strategy_segment WHERE feature_strategy_id = fs.id) AS segments
     FROM feature_strategies fs WHERE environment = ? AND feature_name = ? ORDER BY sort_order, created_at, strategy_name`,
    environment,
    feature,
  );
}

describe('POST /api/admin/environments/:name/clone', () => {
  it("201 with the new environment; the chosen project's flags get the source's state, variants and strategies with segments", async () => {
    const name = envName('clone-one');
    const since = await maxEventId();
    const response = await call('POST', `/api/admin/environments/${seed.source}/clone`, {
      body: { name, type: 'production', projects: [seed.used[0]], clonePermissions: true },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/api/admin/environments/${name}`);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['name', 'type', 'sortOrder', 'enabled', 'protected', 'requiredApprovals']);
    expect(body).toEqual({ name, type: 'production', sortOrder: 9999, enabled: true, protected: false, requiredApprovals: null });
    expect(await bodyOf(await call('GET', `/api/admin/environments/${name}`))).toEqual(body);

    // Events: the environment created, and its addition to the project.
    const events = (await eventsSince(since)).filter((e) => e.environment === name);
    expect(events.map((e) => [e.type, e.project])).toEqual([
      ['environment-created', null],
      ['project-environment-added', seed.used[0]],
    ]);
    expect(JSON.parse(events[0]!.data!)).toEqual(body);

    // Only the chosen project uses it.
    expect(await rows('SELECT project_id FROM project_environments WHERE environment_name = ?', name)).toEqual([
      { project_id: seed.used[0] },
    ]);
    const [state] = await rows(
      'SELECT enabled, variants FROM feature_environments WHERE environment = ? AND feature_name = ?',
      name,
      seed.flag,
    );
    const [sourceState] = await rows(
      'SELECT enabled, variants FROM feature_environments WHERE environment = ? AND feature_name = ?',
      seed.source,
      seed.flag,
    );
    expect(state).toEqual(sourceState);
    expect(state!.enabled).toBe(1);
    expect(JSON.parse(state!.variants as string)[0].name).toBe('green');
    expect(await count('SELECT count(*) AS n FROM feature_environments WHERE environment = ? AND feature_name = ?', name, seed.other)).toBe(
      0,
    );

    // The strategies: new ids, everything else as in the source, segment links included.
    const copied = await strategiesOf(name, seed.flag);
    const original = await strategiesOf(seed.source, seed.flag);
    expect(copied).toHaveLength(2);
    expect(copied.map(({ id: _, ...rest }) => rest)).toEqual(original.map(({ id: _, ...rest }) => rest));
    expect(copied[0]!.segments).toBe(String(seed.segmentId));
    expect(copied[1]!.disabled).toBe(1);
    for (const row of copied) expect(original.map((o) => o.id)).not.toContain(row.id);
    expect(await count('SELECT count(*) AS n FROM feature_strategies WHERE environment = ? AND feature_name = ?', name, seed.other)).toBe(
      0,
    );

    // The flag's admin view and an SDK with a key for the new environment see the copy.
    const feature = await bodyOf(await call('GET', `/api/admin/projects/${seed.used[0]}/features/${seed.flag}`));
    const there = feature.environments.find((e: { name: string }) => e.name === name);
    expect(there.enabled).toBe(true);
    expect(there.strategies.map((s: { title: string | null }) => s.title)).toEqual(['Half of the beta users', null]);
    expect(there.strategies[0].segments).toEqual([seed.segmentId]);
    const key = await createToken({ tokenName: unique('clone-key'), type: 'client', environment: name, projects: ['*'] });
    const client = await bodyOf(await call('GET', '/api/client/features', { token: key }));
    const served = client.features.find((f: { name: string }) => f.name === seed.flag);
    expect(served.enabled).toBe(true);
    expect(served.strategies.map((s: { name: string }) => s.name)).toEqual(['flexibleRollout']);

    // The role keeps its right in the new environment.
    expect(await count('SELECT count(*) AS n FROM role_permission WHERE role_id = ? AND environment = ?', seed.roleId, name)).toBe(1);
  });

  it('without projects, every project that uses the source; clonePermissions false copies no rights', async () => {
    const name = envName('clone-all');
    expect(
      (
        await call('POST', `/api/admin/environments/${seed.source}/clone`, {
          body: { name, type: 'test', projects: [], clonePermissions: false },
        })
      ).status,
    ).toBe(201);
    const projects = await rows<{ project_id: string }>(
      'SELECT project_id FROM project_environments WHERE environment_name = ? ORDER BY project_id',
      name,
    );
    expect(projects.map((p) => p.project_id)).toEqual([...seed.used].sort());
    expect(await count('SELECT count(*) AS n FROM feature_strategies WHERE environment = ?', name)).toBe(3);
    expect(await count('SELECT count(*) AS n FROM feature_environments WHERE environment = ?', name)).toBe(2);
    expect(await count('SELECT count(*) AS n FROM role_permission WHERE environment = ?', name)).toBe(0);

    // clonePermissions defaults to true.
    const other = envName('clone-default');
    expect((await call('POST', `/api/admin/environments/${seed.source}/clone`, { body: { name: other, type: 'test' } })).status).toBe(201);
    expect(await count('SELECT count(*) AS n FROM role_permission WHERE role_id = ? AND environment = ?', seed.roleId, other)).toBe(1);
  });

  it('a chosen project that does not use the source gets the environment, with no flag states to copy', async () => {
    const name = envName('clone-unused');
    expect(
      (await call('POST', `/api/admin/environments/${seed.source}/clone`, { body: { name, type: 'test', projects: [seed.unused] } }))
        .status,
    ).toBe(201);
    expect(await rows('SELECT project_id FROM project_environments WHERE environment_name = ?', name)).toEqual([
      { project_id: seed.unused },
    ]);
    expect(await count('SELECT count(*) AS n FROM feature_strategies WHERE environment = ?', name)).toBe(0);
  });

  it('copies more strategies and projects than one statement binds (D1: 100 parameters)', async () => {
    const source = envName('clone-big');
    await ok('POST', '/api/admin/environments', { name: source, type: 'test' });
    const projects: string[] = [];
    for (let i = 0; i < 55; i++) {
      const id = unique(`clone-big-${i}`);
      await ok('POST', '/api/admin/projects', { id, name: id, environments: [source] });
      projects.push(id);
    }
    const flag = unique('clone-big-flag');
    await ok('POST', `/api/admin/projects/${projects[0]}/features`, { name: flag });
    for (let i = 0; i < 120; i++) {
      await ok('POST', `/api/admin/projects/${projects[0]}/features/${flag}/environments/${source}/strategies`, {
        name: 'flexibleRollout',
        parameters: { rollout: String(i % 100), stickiness: 'default', groupId: flag },
        segments: [seed.segmentId],
      });
    }
    const name = envName('clone-big-copy');
    expect((await call('POST', `/api/admin/environments/${source}/clone`, { body: { name, type: 'test', projects } })).status).toBe(201);
    expect(await count('SELECT count(*) AS n FROM project_environments WHERE environment_name = ?', name)).toBe(55);
    expect(await count('SELECT count(*) AS n FROM feature_strategies WHERE environment = ?', name)).toBe(120);
    expect(
      await count(
        'SELECT count(*) AS n FROM feature_strategy_segment fss JOIN feature_strategies fs ON fs.id = fss.feature_strategy_id WHERE fs.environment = ?',
        name,
      ),
    ).toBe(120);
  }, 120_000); // 55 projects and 120 strategy writes, one request each: ~27 s alone here, more under a loaded CI

  it('409 NameExistsError for a taken name, as creating does; nothing written', async () => {
    const before = await stored();
    const error = await expectError(
      await call('POST', `/api/admin/environments/${seed.source}/clone`, { body: { name: 'production', type: 'test' } }),
      409,
      'NameExistsError',
    );
    expect(error.message).toBe('Environment with name production already exists');
    expect(await stored()).toBe(before);
  });

  it('404 for an unknown source; nothing written', async () => {
    const before = await stored();
    const error = await expectError(
      await call('POST', '/api/admin/environments/nosuch-env/clone', { body: { name: envName('clone-x'), type: 'test' } }),
      404,
      'NotFoundError',
    );
    expect(error.message).toBe('Could not find environment with name: nosuch-env');
    expect(await stored()).toBe(before);
  });

  it('400 for a bad body or an unknown project; nothing written', async () => {
    const before = await stored();
    for (const body of [
      { type: 'test' },
      { name: 'has space', type: 'test' },
      { name: envName('clone-x') },
      { name: envName('clone-x'), type: ' ' },
      { name: envName('clone-x'), type: 'test', projects: 'default' },
      { name: envName('clone-x'), type: 'test', clonePermissions: 'yes' },
    ]) {
      const error = await expectError(await call('POST', `/api/admin/environments/${seed.source}/clone`, { body }), 400, 'ValidationError');
      expect(error.details[0]!.path).toMatch(/^\/body\/(name|type|projects|clonePermissions)$/);
    }
    const unknown = await expectError(
      await call('POST', `/api/admin/environments/${seed.source}/clone`, {
        body: { name: envName('clone-x'), type: 'test', projects: [seed.used[0], 'nosuch-project'] },
      }),
      400,
      'ValidationError',
    );
    expect(unknown.details[0]!.message).toBe('Could not find the projects: nosuch-project');
    expect(await stored()).toBe(before);
  });

  it('403 for an Editor, 401 without a key; nothing written', async () => {
    const before = await stored();
    const body = { name: envName('clone-x'), type: 'test' };
    const error = await expectError(
      await call('POST', `/api/admin/environments/${seed.source}/clone`, { token: editor, body }),
      403,
      'NoAccessError',
    );
    expect(error.message).toContain('ADMIN');
    await expectError(
      await call('POST', `/api/admin/environments/${seed.source}/clone`, { token: null, body }),
      401,
      'AuthenticationRequired',
    );
    expect(await stored()).toBe(before);
  });
});
