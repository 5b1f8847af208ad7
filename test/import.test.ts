import { describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError } from './support/http';
import { footprint, maxEventId, payload } from './support/import';
import { count, rows } from './support/db';
import { createProject } from './support/admin';
import { unique } from './support/names';

const IMPORT = '/api/admin/features-batch/import';

async function importOk(body: unknown) {
  const response = await call('POST', IMPORT, { body });
  if (response.status !== 200) throw new Error(`import failed: ${response.status} ${await response.text()}`);
  expect(await response.text()).toBe('');
  expect(response.headers.get('content-type')).toBeNull();
  return response;
}

async function segment(name: string, project: string | null = null): Promise<number> {
  const row = await rows<{ id: number }>('INSERT INTO segments (name, segment_project_id) VALUES (?, ?) RETURNING id', name, project);
  return row[0]!.id;
}

describe('POST /api/admin/features-batch/import: what an import writes', () => {
  it('creates features with environments, lifecycle, strategies, variants, tags, context fields and dependencies', async () => {
    const parent = unique('parent');
    const child = unique('child');
    const segName = unique('seg');
    const localSegment = await segment(segName);
    const tagType = unique('tt');
    const ctx = unique('ctx');
    const before = await maxEventId();
    await importOk(
      payload({
        features: [
          { name: parent, type: 'experiment', description: 'the parent', stale: true, impressionData: true, project: 'elsewhere' },
          { name: child },
        ],
        featureStrategies: [
          {
            id: 'old-id-1',
            name: 'flexibleRollout',
            featureName: parent,
            title: 'half',
            sortOrder: 1,
            parameters: { rollout: 50 },
            constraints: [{ contextName: ctx, operator: 'IN', values: ['a', 'b'] }],
            variants: [
              { name: 'v1', weight: 0, weightType: 'variable', stickiness: 'default' },
              { name: 'v2', weight: 200, weightType: 'fix', stickiness: 'default', payload: { type: 'string', value: 'x' } },
            ],
            segments: [77],
          },
          { name: 'default', featureName: child, disabled: true },
        ],
        featureEnvironments: [
          {
            name: 'development',
            featureName: parent,
            enabled: true,
            variants: [
              { name: 'a', weight: 0, weightType: 'variable', stickiness: 'default' },
              { name: 'b', weight: 0, weightType: 'variable', stickiness: 'default' },
              { name: 'c', weight: 0, weightType: 'variable', stickiness: 'default' },
            ],
          },
          { name: 'development', featureName: child, enabled: true },
        ],
        contextFields: [
          { name: ctx, description: 'mine', stickiness: true, legalValues: [{ value: 'a' }, { value: 'b', description: 'bee' }] },
        ],
        featureTags: [
          { featureName: parent, tagType, tagValue: 'blue' },
          { featureName: parent, tagType: 'simple', tagValue: 'shared' },
          { featureName: child, tagType: 'simple', tagValue: 'shared' },
          { featureName: child, tagValue: 'no-type-skipped' },
        ],
        segments: [{ id: 77, name: segName }],
        tagTypes: [{ name: tagType, description: 'new', icon: null }, { name: unique('unused') }],
        dependencies: [{ feature: child, dependencies: [{ feature: parent, enabled: true, variants: ['v1'] }] }],
      }),
    );

    const features = await rows(
      'SELECT name, type, description, project, stale, impression_data, created_by_user_id, archived_at FROM features WHERE name IN (?, ?) ORDER BY name',
      child,
      parent,
    );
    expect(features).toEqual([
      {
        name: child,
        type: 'release',
        description: null,
        project: 'default',
        stale: 0,
        impression_data: 0,
        created_by_user_id: -42,
        archived_at: null,
      },
      {
        name: parent,
        type: 'experiment',
        description: 'the parent',
        project: 'default',
        stale: 1,
        impression_data: 1,
        created_by_user_id: -42,
        archived_at: null,
      },
    ]);
    // One feature_environments row per project environment; enabled only in the target.
    expect(await rows('SELECT environment, enabled FROM feature_environments WHERE feature_name = ? ORDER BY environment', parent)).toEqual(
      [
        { environment: 'development', enabled: 1 },
        { environment: 'production', enabled: 0 },
      ],
    );
    expect(await rows('SELECT stage FROM feature_lifecycles WHERE feature IN (?, ?)', parent, child)).toEqual([
      { stage: 'initial' },
      { stage: 'initial' },
    ]);

    const variants = await rows<{ variants: string }>(
      'SELECT variants FROM feature_environments WHERE feature_name = ? AND environment = ?',
      parent,
      'development',
    );
    expect(JSON.parse(variants[0]!.variants).map((v: { name: string; weight: number }) => [v.name, v.weight])).toEqual([
      ['a', 334],
      ['b', 333],
      ['c', 333],
    ]);

    const strategies = await rows<Record<string, unknown>>(
      'SELECT id, feature_name, project_name, environment, strategy_name, title, parameters, constraints, variants, sort_order, disabled FROM feature_strategies WHERE feature_name IN (?, ?) AND sort_order <> 0 ORDER BY feature_name',
      child,
      parent,
    );
    expect(strategies).toHaveLength(2);
    const [childStrategy, parentStrategy] = strategies as [Record<string, string | number>, Record<string, string | number>];
    expect(parentStrategy.id).not.toBe('old-id-1');
    expect(parentStrategy).toMatchObject({
      project_name: 'default',
      environment: 'development',
      strategy_name: 'flexibleRollout',
      title: 'half',
      sort_order: 1,
      disabled: 0,
    });
    expect(JSON.parse(String(parentStrategy.parameters))).toEqual({ rollout: '50', stickiness: 'default', groupId: parent });
    expect(JSON.parse(String(parentStrategy.constraints))).toEqual([
      { contextName: ctx, operator: 'IN', caseInsensitive: false, inverted: false, values: ['a', 'b'] },
    ]);
    expect(JSON.parse(String(parentStrategy.variants)).map((v: { weight: number }) => v.weight)).toEqual([800, 200]);
    expect(childStrategy).toMatchObject({ strategy_name: 'default', disabled: 1, sort_order: 9999 });
    // Enabled with only a disabled strategy: Unleash adds a 100% rollout.
    const auto = await rows<{ strategy_name: string; parameters: string }>(
      'SELECT strategy_name, parameters FROM feature_strategies WHERE feature_name = ? AND disabled = 0',
      child,
    );
    expect(auto.map((row) => [row.strategy_name, JSON.parse(row.parameters)])).toEqual([
      ['flexibleRollout', { rollout: '100', stickiness: 'default', groupId: child }],
    ]);

    expect(await rows('SELECT segment_id FROM feature_strategy_segment WHERE feature_strategy_id = ?', parentStrategy.id)).toEqual([
      { segment_id: localSegment },
    ]);
    expect(
      await rows(
        'SELECT feature_name, tag_type, tag_value FROM feature_tag WHERE feature_name IN (?, ?) ORDER BY feature_name, tag_type',
        child,
        parent,
      ),
    ).toEqual([
      { feature_name: child, tag_type: 'simple', tag_value: 'shared' },
      { feature_name: parent, tag_type: 'simple', tag_value: 'shared' },
      { feature_name: parent, tag_type: tagType, tag_value: 'blue' },
    ]);
    expect(await rows('SELECT type, value FROM tags WHERE type = ?', tagType)).toEqual([{ type: tagType, value: 'blue' }]);
    // Only tag types used by the tags are created.
    expect(await rows('SELECT name, description FROM tag_types WHERE name = ?', tagType)).toEqual([{ name: tagType, description: 'new' }]);
    expect(await count("SELECT count(*) AS n FROM tag_types WHERE name LIKE 'unused-%'")).toBe(0);
    expect(
      await rows('SELECT name, description, stickiness, sort_order, legal_values, project FROM context_fields WHERE name = ?', ctx),
    ).toEqual([
      {
        name: ctx,
        description: 'mine',
        stickiness: 1,
        sort_order: 0,
        legal_values: '[{"value":"a"},{"value":"b","description":"bee"}]',
        project: null,
      },
    ]);
    expect(await rows('SELECT parent, child, enabled, variants FROM dependent_features WHERE child = ?', child)).toEqual([
      { parent, child, enabled: 1, variants: '["v1"]' },
    ]);

    const events = await rows<{ type: string; project: string; environment: string; created_by: string; data: string }>(
      'SELECT type, project, environment, created_by, data FROM events WHERE id > ?',
      before,
    );
    expect(events).toEqual([
      { type: 'features-imported', project: 'default', environment: 'development', created_by: 'admin', data: '{"features":2}' },
    ]);
  });

  it('re-import overwrites metadata with defaults, replaces strategies and tags, keeps untouched variants and enabled state', async () => {
    const name = unique('re');
    await importOk(
      payload({
        features: [{ name, type: 'operational', description: 'first', stale: true }],
        featureStrategies: [
          { name: 'default', featureName: name },
          { name: 'flexibleRollout', featureName: name, parameters: { rollout: '10', stickiness: 'userId', groupId: 'g' } },
        ],
        featureEnvironments: [{ name: 'development', featureName: name, enabled: true, variants: [{ name: 'keep', weight: 1000 }] }],
        featureTags: [{ featureName: name, tagType: 'simple', tagValue: 'old-tag' }],
      }),
    );
    await importOk(
      payload({
        features: [{ name }],
        featureStrategies: [{ name: 'default', featureName: name }],
        featureTags: [{ featureName: name, tagType: 'simple', tagValue: 'new-tag' }],
      }),
    );
    expect(await rows('SELECT type, description, stale FROM features WHERE name = ?', name)).toEqual([
      { type: 'release', description: null, stale: 0 },
    ]);
    expect(await rows('SELECT strategy_name FROM feature_strategies WHERE feature_name = ?', name)).toEqual([{ strategy_name: 'default' }]);
    expect(await rows('SELECT tag_value FROM feature_tag WHERE feature_name = ?', name)).toEqual([{ tag_value: 'new-tag' }]);
    const environment = await rows<{ enabled: number; variants: string }>(
      "SELECT enabled, variants FROM feature_environments WHERE feature_name = ? AND environment = 'development'",
      name,
    );
    expect(environment[0]!.enabled).toBe(1);
    expect(JSON.parse(environment[0]!.variants)).toEqual([{ name: 'keep', weight: 1000, weightType: 'variable', stickiness: 'default' }]);
    expect(await count('SELECT count(*) AS n FROM feature_lifecycles WHERE feature = ?', name)).toBe(1);
  });

  it('disables a feature through featureEnvironments and writes strategies into a production target', async () => {
    const name = unique('prod');
    await importOk(
      payload({ features: [{ name }], featureEnvironments: [{ name: 'x', featureName: name, enabled: true }] }, 'default', 'production'),
    );
    await importOk(
      payload({ features: [{ name }], featureEnvironments: [{ name: 'x', featureName: name, enabled: false }] }, 'default', 'production'),
    );
    expect(await rows('SELECT environment, enabled FROM feature_environments WHERE feature_name = ? ORDER BY environment', name)).toEqual([
      { environment: 'development', enabled: 0 },
      { environment: 'production', enabled: 0 },
    ]);
  });

  it('skips archived features (their tags stay) and creates a feature with archived:true already archived', async () => {
    const archived = unique('arch');
    const fresh = unique('born-archived');
    await importOk(
      payload({ features: [{ name: archived }], featureTags: [{ featureName: archived, tagType: 'simple', tagValue: 'kept' }] }),
    );
    await rows("UPDATE features SET archived_at = '2026-01-01T00:00:00.000Z' WHERE name = ?", archived);
    await importOk(
      payload({
        features: [
          { name: archived, type: 'experiment' },
          { name: fresh, archived: true },
        ],
        featureStrategies: [{ name: 'default', featureName: archived }],
        featureTags: [{ featureName: archived, tagType: 'simple', tagValue: 'replaced' }],
      }),
    );
    expect(await rows('SELECT type FROM features WHERE name = ?', archived)).toEqual([{ type: 'release' }]);
    expect(await rows('SELECT tag_value FROM feature_tag WHERE feature_name = ?', archived)).toEqual([{ tag_value: 'kept' }]);
    expect(await count('SELECT count(*) AS n FROM feature_strategies WHERE feature_name = ?', archived)).toBe(0);
    const born = await rows<{ archived_at: string | null }>('SELECT archived_at FROM features WHERE name = ?', fresh);
    expect(born[0]!.archived_at).not.toBeNull();
    expect(await count('SELECT count(*) AS n FROM feature_lifecycles WHERE feature = ?', fresh)).toBe(0);
  });

  it('adds strategies and tags to an existing feature of the target project that is not imported', async () => {
    const existing = unique('existing');
    await importOk(payload({ features: [{ name: existing }], featureStrategies: [{ name: 'default', featureName: existing }] }));
    await importOk(
      payload({
        features: [],
        featureStrategies: [{ name: 'flexibleRollout', featureName: existing }],
        featureTags: [{ featureName: existing, tagType: 'simple', tagValue: 'added' }],
      }),
    );
    expect(await rows('SELECT strategy_name FROM feature_strategies WHERE feature_name = ? ORDER BY strategy_name', existing)).toEqual([
      { strategy_name: 'default' },
      { strategy_name: 'flexibleRollout' },
    ]);
    expect(await rows('SELECT tag_value FROM feature_tag WHERE feature_name = ?', existing)).toEqual([{ tag_value: 'added' }]);
  });

  it('uses the project environment default strategy when enabling a feature without strategies', async () => {
    const project = unique('proj');
    await createProject(project, ['development']);
    await rows(
      "UPDATE project_environments SET default_strategy = ? WHERE project_id = ? AND environment_name = 'development'",
      JSON.stringify({ name: 'flexibleRollout', parameters: { rollout: 25, stickiness: 'userId', groupId: 'x' }, constraints: [] }),
      project,
    );
    const name = unique('auto');
    await importOk(
      payload({ features: [{ name }], featureEnvironments: [{ name: 'development', featureName: name, enabled: true }] }, project),
    );
    const strategies = await rows<{ strategy_name: string; parameters: string; project_name: string }>(
      'SELECT strategy_name, parameters, project_name FROM feature_strategies WHERE feature_name = ?',
      name,
    );
    expect(strategies.map((row) => [row.strategy_name, row.project_name, JSON.parse(row.parameters)])).toEqual([
      ['flexibleRollout', project, { rollout: '25', stickiness: 'userId', groupId: name }],
    ]);
    // Only the project's environments get rows.
    expect(await rows('SELECT environment FROM feature_environments WHERE feature_name = ?', name)).toEqual([
      { environment: 'development' },
    ]);
  });

  it('accepts the deprecated feature fields of the seed (variants, strategies, lastSeenAt) and ignores them', async () => {
    const name = unique('legacy');
    await importOk(
      payload({ features: [{ name, variants: [{ name: 'x' }], strategies: [{ name: 'default' }], lastSeenAt: '2026-01-01T00:00:00Z' }] }),
    );
    expect(await count('SELECT count(*) AS n FROM feature_strategies WHERE feature_name = ?', name)).toBe(0);
  });

  it('writes exactly one audit event per import, which moves the revision', async () => {
    const before = await maxEventId();
    await importOk(payload({ features: [{ name: unique('e1') }, { name: unique('e2') }, { name: unique('e3') }] }));
    expect(await count("SELECT count(*) AS n FROM events WHERE id > ? AND type = 'features-imported'", before)).toBe(1);
    expect(await count('SELECT count(*) AS n FROM events WHERE id > ?', before)).toBe(1);
  });
});

describe('POST /api/admin/features-batch/import: gates', () => {
  it('answers 401 without a key', async () => {
    await expectError(await call('POST', IMPORT, { token: null, body: payload({}) }), 401, 'AuthenticationRequired');
  });

  it('answers 403 to client and frontend keys', async () => {
    const client = await createToken({ type: 'client', tokenName: unique('client'), environment: 'development', projects: ['*'] });
    const frontend = await createToken({ type: 'frontend', tokenName: unique('frontend'), environment: 'development', projects: ['*'] });
    for (const token of [client, frontend]) {
      const response = await call('POST', IMPORT, { token, body: payload({}) });
      expect(response.status).toBe(403);
      expect((await bodyOf(response)).message).toBe('invalid token: expected a different token type for this endpoint');
    }
  });

  it('answers 415 to a body that is not JSON', async () => {
    const response = await call('POST', IMPORT, { rawBody: 'project=default', contentType: 'text/plain' });
    const body = await expectError(response, 415, 'ContentTypeerror');
    expect(body.message).toContain('(text/plain)');
  });

  it('answers 404 for a missing project or environment and 400 for an environment not on the project', async () => {
    const before = await footprint();
    const noProject = await expectError(
      await call('POST', IMPORT, { body: payload({ features: [{ name: unique('x') }] }, 'ghost-project') }),
      404,
      'NotFoundError',
    );
    expect(noProject.message).toBe('Active project with id ghost-project does not exist');
    const noEnvironment = await expectError(
      await call('POST', IMPORT, { body: payload({ features: [{ name: unique('x') }] }, 'default', 'staging') }),
      404,
      'NotFoundError',
    );
    expect(noEnvironment.message).toBe('Could not find environment with name: staging');
    const notAttached = await expectError(
      await call('POST', IMPORT, { body: payload({ features: [{ name: unique('x') }] }, 'default', 'default') }),
      400,
      'ValidationError',
    );
    expect(notAttached.message).toBe(
      'Request validation failed: your request body or params contain invalid data: You have not added the current environment to the project',
    );
    expect(await footprint()).toEqual(before);
  });

  it('answers 400 to malformed JSON', async () => {
    await expectError(await call('POST', IMPORT, { rawBody: '{"project":' }), 400, 'ValidationError');
  });

  it('answers 413 above the 24 MiB import limit', async () => {
    const response = await call('POST', IMPORT, { rawBody: `{"project":"default","pad":"${'x'.repeat(24 * 1024 * 1024)}"}` });
    expect(response.status).toBe(413);
    expect((await bodyOf(response)).name).toBe('PayloadTooLargeError');
  });

  it('takes names such as __proto__ and constructor as plain names', async () => {
    const names = ['__proto__', 'constructor', 'toString'];
    await importOk(
      payload({
        features: names.map((name) => ({ name })),
        featureStrategies: [{ name: 'default', featureName: '__proto__', parameters: { __proto__: 'x', constructor: 'y' } }],
        featureTags: [{ featureName: 'constructor', tagType: 'simple', tagValue: '__proto__' }],
        dependencies: [{ feature: 'toString', dependencies: [{ feature: '__proto__' }] }],
      }),
    );
    expect(await rows("SELECT name FROM features WHERE name IN ('__proto__', 'constructor', 'toString') ORDER BY name")).toEqual([
      { name: '__proto__' },
      { name: 'constructor' },
      { name: 'toString' },
    ]);
    expect(await rows("SELECT tag_value FROM feature_tag WHERE feature_name = 'constructor'")).toEqual([{ tag_value: '__proto__' }]);
    expect(await rows("SELECT parent FROM dependent_features WHERE child = 'toString'")).toEqual([{ parent: '__proto__' }]);
  });

  it('accepts bodies far above the default 100 kB limit', async () => {
    const features = Array.from({ length: 600 }, (_, i) => ({ name: `big-${i}-${unique('b')}`, description: 'x'.repeat(300) }));
    const body = payload({ features });
    expect(JSON.stringify(body).length).toBeGreaterThan(150_000);
    await importOk(body);
    expect(await count("SELECT count(*) AS n FROM features WHERE name LIKE 'big-%'")).toBe(600);
  });
});
