import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError } from './support/http';
import { count } from './support/db';
import { createFeature, FLAG_KEYS } from './support/admin';
import { signedInUser, withSession } from './support/auth';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const P = '/api/admin/projects/default/features';

async function eventTypes(featureName: string): Promise<string[]> {
  const { results } = await env.DB.prepare('SELECT type FROM events WHERE feature_name = ? ORDER BY id')
    .bind(featureName)
    .all<{ type: string }>();
  return results.map((row) => row.type);
}

describe('POST /api/admin/projects/:projectId/features', () => {
  it('creates a feature: 201, the Unleash shape, a location, disabled environments, lifecycle initial and an event', async () => {
    const response = await call('POST', P, {
      body: { name: 'create-basic', description: 'a flag', type: 'experiment', impressionData: true },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe('/api/admin/projects/default/features/create-basic');
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(FLAG_KEYS);
    expect(body).toMatchObject({
      name: 'create-basic',
      description: 'a flag',
      type: 'experiment',
      project: 'default',
      stale: false,
      lastSeenAt: null,
      impressionData: true,
      archived: false,
    });
    expect(body.createdAt).toMatch(ISO);
    const { results } = await env.DB.prepare(
      'SELECT environment, enabled FROM feature_environments WHERE feature_name = ? ORDER BY environment',
    )
      .bind('create-basic')
      .all();
    expect(results).toEqual([
      { environment: 'development', enabled: 0 },
      { environment: 'production', enabled: 0 },
    ]);
    expect(await count("SELECT count(*) AS n FROM feature_lifecycles WHERE feature = 'create-basic' AND stage = 'initial'")).toBe(1);
    expect(await eventTypes('create-basic')).toEqual(['feature-created']);
    expect(await count("SELECT count(*) AS n FROM features WHERE name = 'create-basic' AND created_by_user_id = -42")).toBe(1);
  });

  it('defaults type to release, description to null and impressionData to false', async () => {
    const body = await createFeature('create-defaults');
    expect(body).toMatchObject({ type: 'release', description: null, impressionData: false });
  });

  it('answers 409 NameExistsError for a name taken in any project, writing nothing', async () => {
    await createFeature('create-dupe');
    await call('POST', '/api/admin/projects', { body: { id: 'dupe-proj', name: 'Dupe' } });
    for (const project of ['default', 'dupe-proj']) {
      const response = await call('POST', `/api/admin/projects/${project}/features`, { body: { name: 'create-dupe' } });
      const error = await expectError(response, 409, 'NameExistsError');
      expect(error.message).toBe('A flag with that name already exists');
    }
    expect(await eventTypes('create-dupe')).toEqual(['feature-created']);
  });

  it.each([
    ['bad name', 'must be URL friendly'],
    ['a/b', 'must be URL friendly'],
    ['..', 'must be URL friendly'],
    ['', 'must not be empty'],
    ['x'.repeat(101), 'must be at most 100 characters long'],
    ['bad\u0000nul', 'must be well-formed text without NUL characters'],
  ])('rejects the name %j with 400 and writes nothing', async (name, reason) => {
    const response = await call('POST', P, { body: { name } });
    const error = await expectError(response, 400, 'BadDataError');
    expect(error.details[0]).toEqual({
      path: '/body/name',
      message: `The \`/body/name\` property ${reason}. You sent ${JSON.stringify(name).length > 100 ? `${JSON.stringify(name).slice(0, 97)}...` : JSON.stringify(name)}.`,
    });
    expect(await count('SELECT count(*) AS n FROM features WHERE name = ?', name)).toBe(0);
  });

  it('accepts names with every URL-friendly punctuation and names like __proto__', async () => {
    for (const name of ["a-b_c.d~e!f*g'h(i)j", '__proto__', 'constructor']) {
      await createFeature(name);
      const response = await call('GET', `${P}/${encodeURIComponent(name)}`);
      expect(response.status).toBe(200);
      expect((await bodyOf(response)).name).toBe(name);
    }
  });

  it('requires a name, a boolean impressionData and JSON', async () => {
    let error = await expectError(await call('POST', P, { body: {} }), 400, 'BadDataError');
    expect(error.details[0]!.message).toBe('The `/body/name` property is required. It was not present on the data you sent.');
    error = await expectError(await call('POST', P, { body: { name: 'x-imp', impressionData: 'yes' } }), 400, 'BadDataError');
    expect(error.details[0]!.path).toBe('/body/impressionData');
    await expectError(await call('POST', P, { rawBody: 'name=x', contentType: 'text/plain' }), 415, 'ContentTypeerror');
  });

  it("refuses a type that is not one of 6.10.1's flag types or 8.0's sunset (400, as it does) and writes nothing; PUT likewise", async () => {
    const events = await count('SELECT count(*) AS n FROM events');
    const error = await expectError(await call('POST', P, { body: { name: 'x-type', type: 'nosuchtype' } }), 400, 'BadDataError');
    expect(error.details).toEqual([
      {
        path: '/body/type',
        message:
          'The `/body/type` property must be ("experiment" | "kill-switch" | "release" | "operational" | "permission" | "sunset"). You sent "nosuchtype".',
      },
    ]);
    expect(await count("SELECT count(*) AS n FROM features WHERE name = 'x-type'")).toBe(0);
    expect(await count('SELECT count(*) AS n FROM events')).toBe(events);

    await createFeature('typed-flag', { type: 'kill-switch' });
    await expectError(await call('PUT', `${P}/typed-flag`, { body: { type: 'nosuchtype' } }), 400, 'BadDataError');
    expect((await bodyOf(await call('GET', `${P}/typed-flag`))).type).toBe('kill-switch');
    // 6.10.1 stores any type sent through PATCH; we refuse it there too (docs/decisions.md).
    const patch = [{ op: 'replace', path: '/type', value: 'nosuchtype' }];
    await expectError(await call('PATCH', `${P}/typed-flag`, { body: patch }), 400, 'BadDataError');
    expect((await bodyOf(await call('GET', `${P}/typed-flag`))).type).toBe('kill-switch');
    expect((await call('PUT', `${P}/typed-flag`, { body: { type: 'permission' } })).status).toBe(200);
    expect((await bodyOf(await call('GET', `${P}/typed-flag`))).type).toBe('permission');
  });

  it('answers 404 for a project that does not exist', async () => {
    const error = await expectError(
      await call('POST', '/api/admin/projects/ghost/features', { body: { name: 'x-ghost' } }),
      404,
      'NotFoundError',
    );
    expect(error.message).toBe('Active project with id ghost does not exist');
  });

  it('is closed to callers without a key (401) and to client tokens (403)', async () => {
    expect((await call('POST', P, { token: null, body: { name: 'x-anon' } })).status).toBe(401);
    const client = await createToken({ tokenName: 'features-client', type: 'client' });
    const response = await call('POST', P, { token: client, body: { name: 'x-client' } });
    expect(response.status).toBe(403);
    expect(await count("SELECT count(*) AS n FROM features WHERE name LIKE 'x-%'")).toBe(0);
  });
});

describe('GET /api/admin/projects/:projectId/features/:featureName', () => {
  it("returns the feature with environments, strategies, creator, lifecycle and collaborators in 6.10.1's key order", async () => {
    await createFeature('get-one', { description: 'd' });
    const response = await call('GET', `${P}/get-one`);
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual([
      'environments',
      'name',
      'impressionData',
      'description',
      'project',
      'stale',
      'createdAt',
      'createdBy',
      'type',
      'lastSeenAt',
      'variants',
      'archived',
      'dependencies',
      'children',
      'lifecycle',
      'links',
      'collaborators',
    ]);
    expect(body.createdBy).toEqual({
      id: -42,
      name: 'Unleash Admin Token User',
      imageUrl: expect.stringMatching(/^https:\/\/gravatar\.com\/avatar\/[0-9a-f]{64}\?s=42&d=retro&r=g$/),
    });
    expect(body.environments.map((environment: { name: string }) => environment.name)).toEqual(['development', 'production']);
    expect(body.environments[0]).toEqual({
      name: 'development',
      lastSeenAt: null,
      enabled: false,
      yes: 0,
      no: 0,
      type: 'development',
      sortOrder: 2,
      strategies: [],
    });
    expect(Object.keys(body.environments[0])).toEqual(['name', 'lastSeenAt', 'enabled', 'yes', 'no', 'type', 'sortOrder', 'strategies']);
    expect(body.lifecycle).toEqual({ stage: 'initial', enteredStageAt: body.createdAt });
    expect(body.links).toEqual([]);
    // The admin token user wrote the flag's only event.
    expect(body.collaborators).toEqual({ users: [body.createdBy] });
  });

  it('gives each environment its variants with ?variantEnvironments=true, and the flag its variants merged by name', async () => {
    await createFeature('get-variants');
    const variants = [
      { name: 'zed', weight: 500, weightType: 'variable', stickiness: 'default' },
      { name: 'alpha', weight: 500, weightType: 'variable', stickiness: 'default' },
    ];
    // New environment variants are refused as deprecated, so this flag gets them as an imported one would have.
    await env.DB.prepare("UPDATE feature_environments SET variants = ? WHERE feature_name = 'get-variants' AND environment = 'development'")
      .bind(JSON.stringify(variants))
      .run();
    const plain = await bodyOf(await call('GET', `${P}/get-variants`));
    expect(plain.environments.every((environment: object) => !('variants' in environment))).toBe(true);
    expect(plain.variants.map((variant: { name: string }) => variant.name)).toEqual(['alpha', 'zed']);
    const withVariants = await bodyOf(await call('GET', `${P}/get-variants?variantEnvironments=true`));
    expect(Object.keys(withVariants.environments[0]).slice(0, 3)).toEqual(['name', 'lastSeenAt', 'variants']);
    expect(withVariants.environments[0].variants.map((variant: { name: string }) => variant.name)).toEqual(['alpha', 'zed']);
    expect(withVariants.environments[1].variants).toEqual([]);
  });

  it("answers 404 with Unleash's message for an unknown feature or the wrong project", async () => {
    let error = await expectError(await call('GET', `${P}/nope`), 404, 'NotFoundError');
    expect(error.message).toBe('There\'s no feature named "nope" in project "default".');
    await createFeature('get-other-project');
    await call('POST', '/api/admin/projects', { body: { id: 'get-proj', name: 'Get' } });
    error = await expectError(await call('GET', '/api/admin/projects/get-proj/features/get-other-project'), 404, 'NotFoundError');
    expect(error.message).toBe('There\'s no feature named "get-other-project" in project "get-proj".');
  });
});

describe('PUT and PATCH a feature', () => {
  it('PUT updates metadata and audits it, with stale events when stale changes', async () => {
    await createFeature('put-me');
    const response = await call('PUT', `${P}/put-me`, {
      body: { description: 'new', type: 'operational', stale: true, impressionData: true },
    });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toMatchObject({
      name: 'put-me',
      description: 'new',
      type: 'operational',
      stale: true,
      impressionData: true,
    });
    expect(await eventTypes('put-me')).toEqual(['feature-created', 'feature-metadata-updated', 'feature-stale-on']);
  });

  it('PATCH applies JSON-patch replace operations', async () => {
    await createFeature('patch-me');
    const response = await call('PATCH', `${P}/patch-me`, {
      body: [
        { op: 'replace', path: '/description', value: 'patched' },
        { op: 'replace', path: '/stale', value: true },
      ],
    });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toMatchObject({ description: 'patched', stale: true });
  });

  it('PATCH rejects unknown paths and wrong value types with 400, changing nothing', async () => {
    await createFeature('patch-bad');
    let error = await expectError(
      await call('PATCH', `${P}/patch-bad`, { body: [{ op: 'replace', path: '/name', value: 'x' }] }),
      400,
      'BadDataError',
    );
    expect(error.details[0]!.path).toBe('/body/0/path');
    error = await expectError(
      await call('PATCH', `${P}/patch-bad`, { body: [{ op: 'replace', path: '/stale', value: 'yes' }] }),
      400,
      'BadDataError',
    );
    expect(error.details[0]!.path).toBe('/body/0/value');
    expect(await eventTypes('patch-bad')).toEqual(['feature-created']);
  });
});

describe('archive, revive and the archived list', () => {
  it('DELETE archives (202), writes lifecycle archived and an event, and lists it as archived', async () => {
    await createFeature('arch-one');
    const response = await call('DELETE', `${P}/arch-one`);
    expect(response.status).toBe(202);
    const row = await env.DB.prepare("SELECT archived_at FROM features WHERE name = 'arch-one'").first<{ archived_at: string }>();
    expect(row!.archived_at).toMatch(ISO);
    expect(await count("SELECT count(*) AS n FROM feature_lifecycles WHERE feature = 'arch-one' AND stage = 'archived'")).toBe(1);
    expect(await eventTypes('arch-one')).toEqual(['feature-created', 'feature-archived']);
    const list = await bodyOf(await call('GET', '/api/admin/archive/features'));
    const listed = list.features.find((feature: { name: string }) => feature.name === 'arch-one');
    // 6.10.1's archived shape and key order: no `archived`, and `environments` last.
    expect(Object.keys(listed)).toEqual([
      'name',
      'description',
      'type',
      'project',
      'stale',
      'createdAt',
      'impressionData',
      'lastSeenAt',
      'archivedAt',
      'environments',
    ]);
    expect(listed).toMatchObject({ archivedAt: row!.archived_at, environments: [] });
    const byProject = await bodyOf(await call('GET', '/api/admin/archive/features/default'));
    expect(byProject.features.some((feature: { name: string }) => feature.name === 'arch-one')).toBe(true);
    // Archived features are not reachable for changes, and cannot be archived twice.
    expect((await call('DELETE', `${P}/arch-one`)).status).toBe(404);
  });

  it('lists where an archived flag was last seen as its environments, as 6.10.1 does ({name, lastSeenAt, enabled: false})', async () => {
    await createFeature('arch-seen');
    await call('POST', `${P}/arch-seen/environments/development/on`);
    await env.DB.prepare(
      "UPDATE feature_environments SET last_seen_at = '2026-01-02T03:04:05.000Z' WHERE feature_name = 'arch-seen' AND environment = 'development'",
    ).run();
    expect((await call('DELETE', `${P}/arch-seen`)).status).toBe(202);
    for (const path of ['/api/admin/archive/features', '/api/admin/archive/features/default']) {
      const list = await bodyOf(await call('GET', path));
      const listed = list.features.find((feature: { name: string }) => feature.name === 'arch-seen');
      expect(listed.environments).toEqual([{ name: 'development', lastSeenAt: '2026-01-02T03:04:05.000Z', enabled: false }]);
      expect(Object.keys(listed.environments[0])).toEqual(['name', 'lastSeenAt', 'enabled']);
    }
  });

  it('revives an archived feature and removes its archived stage', async () => {
    await createFeature('arch-revive');
    await call('DELETE', `${P}/arch-revive`);
    expect((await call('POST', '/api/admin/archive/revive/arch-revive')).status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM features WHERE name = 'arch-revive' AND archived_at IS NULL")).toBe(1);
    expect(await count("SELECT count(*) AS n FROM feature_lifecycles WHERE feature = 'arch-revive' AND stage = 'archived'")).toBe(0);
    expect(await eventTypes('arch-revive')).toEqual(['feature-created', 'feature-archived', 'feature-revived']);
    // Live now: 200 and nothing changes (decisions.md, Archive); no such flag: 404 in Unleash's words.
    expect((await call('POST', '/api/admin/archive/revive/arch-revive')).status).toBe(200);
    expect(await eventTypes('arch-revive')).toEqual(['feature-created', 'feature-archived', 'feature-revived']);
    const error = await expectError(await call('POST', '/api/admin/archive/revive/arch-nothing'), 404, 'NotFoundError');
    expect(error.message).toBe('No feature flag found');
  });

  it('revives several in a project with POST /projects/:id/revive', async () => {
    await createFeature('arch-r1');
    await createFeature('arch-r2');
    await call('DELETE', `${P}/arch-r1`);
    await call('DELETE', `${P}/arch-r2`);
    expect((await call('POST', '/api/admin/projects/default/revive', { body: { features: ['arch-r1', 'arch-r2'] } })).status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM features WHERE name IN ('arch-r1','arch-r2') AND archived_at IS NULL")).toBe(2);
  });

  it('deletes an archived feature for good', async () => {
    await createFeature('arch-delete');
    // Not archived: 200 and nothing deleted, as 6.10.1.
    expect((await call('DELETE', '/api/admin/archive/arch-delete')).status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM features WHERE name = 'arch-delete'")).toBe(1);
    await call('DELETE', `${P}/arch-delete`);
    expect((await call('DELETE', '/api/admin/archive/arch-delete')).status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM features WHERE name = 'arch-delete'")).toBe(0);
  });
});

describe('POST /api/admin/projects/:projectId/stale', () => {
  it('marks several features stale and back, one event each', async () => {
    await createFeature('stale-a');
    await createFeature('stale-b');
    expect(
      (await call('POST', '/api/admin/projects/default/stale', { body: { features: ['stale-a', 'stale-b'], stale: true } })).status,
    ).toBe(202);
    expect(await count("SELECT count(*) AS n FROM features WHERE name IN ('stale-a','stale-b') AND stale = 1")).toBe(2);
    expect(await eventTypes('stale-a')).toEqual(['feature-created', 'feature-stale-on']);
    await call('POST', '/api/admin/projects/default/stale', { body: { features: ['stale-a'], stale: false } });
    expect(await count("SELECT count(*) AS n FROM features WHERE name = 'stale-a' AND stale = 0")).toBe(1);
  });

  it('answers 404 and changes nothing when one feature is unknown', async () => {
    await createFeature('stale-c');
    await expectError(
      await call('POST', '/api/admin/projects/default/stale', { body: { features: ['stale-c', 'stale-ghost'], stale: true } }),
      404,
      'NotFoundError',
    );
    expect(await count("SELECT count(*) AS n FROM features WHERE name = 'stale-c' AND stale = 1")).toBe(0);
  });
});

describe('environments on/off and strategies', () => {
  it('turning an environment on adds the default flexibleRollout when there is no strategy', async () => {
    await createFeature('env-on');
    expect((await call('POST', `${P}/env-on/environments/development/on`)).status).toBe(200);
    const strategies = await bodyOf(await call('GET', `${P}/env-on/environments/development/strategies`));
    expect(strategies).toEqual([
      {
        id: expect.any(String),
        name: 'flexibleRollout',
        title: null,
        disabled: false,
        featureName: 'env-on',
        sortOrder: 0,
        segments: [],
        constraints: [],
        variants: [],
        parameters: { rollout: '100', stickiness: 'default', groupId: 'env-on' },
      },
    ]);
    expect(
      await count(
        "SELECT count(*) AS n FROM feature_environments WHERE feature_name = 'env-on' AND environment = 'development' AND enabled = 1",
      ),
    ).toBe(1);
    expect((await call('POST', `${P}/env-on/environments/development/off`)).status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM feature_environments WHERE feature_name = 'env-on' AND enabled = 1")).toBe(0);
    expect(await eventTypes('env-on')).toEqual([
      'feature-created',
      'feature-strategy-add',
      'feature-environment-enabled',
      'feature-environment-disabled',
    ]);
  });

  it('answers 404 for an environment not on the project', async () => {
    await createFeature('env-missing');
    const error = await expectError(await call('POST', `${P}/env-missing/environments/default/on`), 404, 'NotFoundError');
    expect(error.message).toBe('Could not find environment default for feature: env-missing');
  });

  it('adds, updates and deletes a strategy with constraints, segments and variants', async () => {
    await createFeature('strat-full');
    const segment = await bodyOf(await call('POST', '/api/admin/segments', { body: { name: 'strat-seg', constraints: [] } }));
    const create = await call('POST', `${P}/strat-full/environments/production/strategies`, {
      body: {
        name: 'flexibleRollout',
        parameters: { rollout: 50, stickiness: 'default', groupId: 'g' },
        constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '2'] }],
        segments: [segment.id],
        variants: [
          { name: 'a', weight: 0, weightType: 'variable', stickiness: 'default' },
          { name: 'b', weight: 200, weightType: 'fix', stickiness: 'default', payload: { type: 'string', value: 'x' } },
        ],
      },
    });
    expect(create.status).toBe(200);
    const strategy = await bodyOf(create);
    expect(strategy).toMatchObject({
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'g' },
      segments: [segment.id],
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '2'] }],
      variants: [
        { name: 'a', weight: 800, weightType: 'variable', stickiness: 'default' },
        { name: 'b', weight: 200, weightType: 'fix', stickiness: 'default', payload: { type: 'string', value: 'x' } },
      ],
    });
    const update = await call('PUT', `${P}/strat-full/environments/production/strategies/${strategy.id}`, {
      body: { name: 'default', disabled: true, segments: [] },
    });
    expect(update.status).toBe(200);
    expect(await bodyOf(update)).toMatchObject({ id: strategy.id, name: 'default', disabled: true, segments: [], variants: [] });
    expect((await call('DELETE', `${P}/strat-full/environments/production/strategies/${strategy.id}`)).status).toBe(200);
    expect((await call('GET', `${P}/strat-full/environments/production/strategies/${strategy.id}`)).status).toBe(404);
    expect(await eventTypes('strat-full')).toEqual([
      'feature-created',
      'feature-strategy-add',
      'feature-strategy-update',
      'feature-strategy-remove',
    ]);
  });

  it('rejects unknown strategies, unknown segments and bad constraints with 400 and writes nothing', async () => {
    await createFeature('strat-bad');
    const path = `${P}/strat-bad/environments/development/strategies`;
    let error = await expectError(await call('POST', path, { body: { name: 'noSuchStrategy' } }), 400, 'BadDataError');
    expect(error.details[0]!.message).toBe('Could not find strategy type with name noSuchStrategy');
    error = await expectError(await call('POST', path, { body: { name: 'default', segments: [999999] } }), 400, 'BadDataError');
    expect(error.details[0]!.message).toBe('Unsupported segments: 999999');
    error = await expectError(
      await call('POST', path, { body: { name: 'default', constraints: [{ contextName: 'x', operator: 'LIKE' }] } }),
      400,
      'BadDataError',
    );
    expect(error.details[0]!.path).toBe('/body/constraints/0/operator');
    error = await expectError(
      await call('POST', path, {
        body: { name: 'default', variants: [{ name: 'a', weight: 1500, weightType: 'fix', stickiness: 'default' }] },
      }),
      400,
      'BadDataError',
    );
    expect(error.details[0]!.message).toBe('The `/body/variants/0/weight` property must be <= 1000. You sent 1500.');
    expect(await count("SELECT count(*) AS n FROM feature_strategies WHERE feature_name = 'strat-bad'")).toBe(0);
  });
});

describe('environment variants', () => {
  it('PUT stores balanced variants and GET returns them, once the flag has environment variants', async () => {
    await createFeature('var-env');
    const refused = await expectError(
      await call('PUT', `${P}/var-env/environments/development/variants`, { body: [{ name: 'v1', weight: 0 }] }),
      403,
      'InvalidOperationError',
    );
    expect(refused.message).toBe('Environment variants deprecated for feature: var-env. Use strategy variants instead.');
    expect((await call('PUT', `${P}/var-env/variants`, { body: [{ name: 'seed', weight: 0 }] })).status).toBe(200);
    const response = await call('PUT', `${P}/var-env/environments/development/variants`, {
      body: [
        { name: 'v1', weight: 0, weightType: 'variable' },
        { name: 'v2', weight: 0, weightType: 'variable' },
        { name: 'v3', weight: 0, weightType: 'variable' },
      ],
    });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body.variants.map((variant: { weight: number }) => variant.weight)).toEqual([334, 333, 333]);
    expect(await bodyOf(await call('GET', `${P}/var-env/environments/development/variants`))).toEqual(body);
    expect(await eventTypes('var-env')).toEqual(['feature-created', 'feature-variants-updated', 'feature-environment-variants-updated']);
  });

  it('fixes the weights in the order sent, then sorts by name as Unleash does (its locale order)', async () => {
    await createFeature('var-sorted');
    const names = ['Zeta', 'beta', 'alpha', '_x', '10', '9'];
    const response = await call('PUT', `${P}/var-sorted/variants`, {
      body: names.map((name) => ({ name, weight: 0, weightType: 'variable', stickiness: 'default' })),
    });
    expect(response.status).toBe(200);
    // As Unleash 6.10.1 answered the same body: the remainder of 1000 / 6 went to the first four sent.
    expect((await bodyOf(response)).variants.map((variant: { name: string; weight: number }) => [variant.name, variant.weight])).toEqual([
      ['_x', 167],
      ['10', 166],
      ['9', 166],
      ['alpha', 167],
      ['beta', 167],
      ['Zeta', 167],
    ]);
  });

  it('rejects fixed weights over 1000 and duplicate names', async () => {
    await createFeature('var-bad');
    const path = `${P}/var-bad/variants`;
    await expectError(
      await call('PUT', path, {
        body: [
          { name: 'a', weight: 700, weightType: 'fix' },
          { name: 'b', weight: 700, weightType: 'fix' },
        ],
      }),
      400,
      'BadDataError',
    );
    await expectError(
      await call('PUT', path, {
        body: [
          { name: 'a', weight: 0 },
          { name: 'a', weight: 0 },
        ],
      }),
      400,
      'BadDataError',
    );
    expect(await count("SELECT count(*) AS n FROM feature_environments WHERE feature_name = 'var-bad' AND variants != '[]'")).toBe(0);
  });

  it('refuses variants that are all fixed, even totalling 1000, as Unleash (and import) do', async () => {
    await createFeature('var-all-fixed');
    const allFixed = [
      { name: 'a', weight: 400, weightType: 'fix' },
      { name: 'b', weight: 600, weightType: 'fix' },
    ];
    const environment = await expectError(await call('PUT', `${P}/var-all-fixed/variants`, { body: allFixed }), 400, 'BadDataError');
    expect(environment.message).toBe(
      'Request validation failed: your request body or params contain invalid data: There must be at least one "variable" variant',
    );
    expect(environment.details).toEqual([{ message: 'There must be at least one "variable" variant' }]);
    const strategy = await expectError(
      await call('POST', `${P}/var-all-fixed/environments/development/strategies`, {
        body: { name: 'default', variants: allFixed.map((variant) => ({ ...variant, stickiness: 'default' })) },
      }),
      400,
      'BadDataError',
    );
    expect(strategy.details).toEqual([{ message: 'There must be at least one "variable" variant' }]);
    expect(await count("SELECT count(*) AS n FROM feature_strategies WHERE feature_name = 'var-all-fixed'")).toBe(0);
  });
});

describe('tags and tag types', () => {
  it('creates a tag type (201), refuses a duplicate (409) and lists it', async () => {
    const response = await call('POST', '/api/admin/tag-types', { body: { name: 'team', description: 'Owning team' } });
    expect(response.status).toBe(201);
    expect(await bodyOf(response)).toEqual({ name: 'team', description: 'Owning team', icon: null, color: null });
    const error = await expectError(await call('POST', '/api/admin/tag-types', { body: { name: 'team' } }), 409, 'NameExistsError');
    expect(error.message).toBe('There already exists a tag-type with the name team');
    const list = await bodyOf(await call('GET', '/api/admin/tag-types'));
    expect(list.tagTypes.map((type: { name: string }) => type.name)).toEqual(['simple', 'team']);
  });

  it('serves the tag type that the location of a create answer points to, 404 for an unknown one', async () => {
    const created = await call('POST', '/api/admin/tag-types', { body: { name: 'squad', description: 'Owning squad' } });
    const location = created.headers.get('location')!;
    expect(location).toBe('/api/admin/tag-types/squad');
    const response = await call('GET', location);
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({
      version: 1,
      tagType: { name: 'squad', description: 'Owning squad', icon: null, color: null },
    });
    const missing = await expectError(await call('GET', '/api/admin/tag-types/nope'), 404, 'NotFoundError');
    expect(missing.message).toBe('Could not find tag-type');
  });

  it('tags a feature, lists and removes the tag', async () => {
    await createFeature('tag-me');
    const response = await call('POST', '/api/admin/features/tag-me/tags', { body: { type: 'simple', value: 'backend' } });
    expect(response.status).toBe(201);
    expect(await bodyOf(response)).toEqual({ type: 'simple', value: 'backend' });
    expect(await bodyOf(await call('GET', '/api/admin/features/tag-me/tags'))).toEqual({
      version: 1,
      tags: [{ type: 'simple', value: 'backend', color: '#FFFFFF' }],
    });
    expect((await call('DELETE', '/api/admin/features/tag-me/tags/simple/backend')).status).toBe(200);
    expect(await bodyOf(await call('GET', '/api/admin/features/tag-me/tags'))).toEqual({ version: 1, tags: [] });
    expect(await eventTypes('tag-me')).toEqual(['feature-created', 'feature-tagged', 'feature-untagged']);
  });

  it('rejects tag values outside 2..50 characters, unknown tag types (400, as Unleash) and unknown features', async () => {
    await createFeature('tag-bad');
    await expectError(
      await call('POST', '/api/admin/features/tag-bad/tags', { body: { type: 'simple', value: 'x' } }),
      400,
      'ValidationError',
    );
    await expectError(
      await call('POST', '/api/admin/features/tag-bad/tags', { body: { type: 'simple', value: 'x'.repeat(51) } }),
      400,
      'ValidationError',
    );
    const unknownType = await expectError(
      await call('POST', '/api/admin/features/tag-bad/tags', { body: { type: 'nosuchtype', value: 'ok' } }),
      400,
      'ValidationError',
    );
    expect(unknownType.details).toEqual([{ message: "Tag type 'nosuchtype' does not exist" }]);
    const error = await expectError(
      await call('POST', '/api/admin/features/nope/tags', { body: { type: 'simple', value: 'ok' } }),
      404,
      'NotFoundError',
    );
    expect(error.message).toBe('No feature flag found');
    expect(await count("SELECT count(*) AS n FROM feature_tag WHERE feature_name = 'tag-bad'")).toBe(0);
  });
});

describe('segments', () => {
  it('creates (201), lists, reads and refuses to delete one in use', async () => {
    const response = await call('POST', '/api/admin/segments', {
      body: { name: 'beta-users', description: 'Beta', constraints: [{ contextName: 'userId', operator: 'IN', values: ['7'] }] },
    });
    expect(response.status).toBe(201);
    const segment = await bodyOf(response);
    // Unleash's order; `project` only for a project's segment.
    expect(Object.keys(segment)).toEqual(['id', 'name', 'description', 'constraints', 'createdBy', 'createdAt']);
    expect(segment).toMatchObject({ name: 'beta-users', description: 'Beta' });
    expect(await bodyOf(await call('GET', `/api/admin/segments/${segment.id}`))).toEqual(segment);
    const list = await bodyOf(await call('GET', '/api/admin/segments'));
    expect(list.segments.some((item: { id: number }) => item.id === segment.id)).toBe(true);
    await createFeature('seg-user');
    await call('POST', `${P}/seg-user/environments/development/strategies`, { body: { name: 'default', segments: [segment.id] } });
    await expectError(await call('DELETE', `/api/admin/segments/${segment.id}`), 409, 'SegmentInUseError');
    await expectError(await call('POST', '/api/admin/segments', { body: { name: 'beta-users', constraints: [] } }), 409, 'NameExistsError');
    await expectError(await call('GET', '/api/admin/segments/99999999999'), 400, 'ValidationError');
  });

  it('updates a segment (204), refusing a name another segment has', async () => {
    const first = await bodyOf(await call('POST', '/api/admin/segments', { body: { name: 'seg-upd-a', constraints: [] } }));
    await call('POST', '/api/admin/segments', { body: { name: 'seg-upd-b', constraints: [] } });
    const response = await call('PUT', `/api/admin/segments/${first.id}`, {
      body: { name: 'seg-upd-a2', description: 'now', constraints: [{ contextName: 'appName', operator: 'IN', values: ['web'] }] },
    });
    expect(response.status).toBe(204);
    expect(await bodyOf(await call('GET', `/api/admin/segments/${first.id}`))).toMatchObject({
      id: first.id,
      name: 'seg-upd-a2',
      description: 'now',
      constraints: [{ contextName: 'appName', operator: 'IN', values: ['web'] }],
    });
    await expectError(
      await call('PUT', `/api/admin/segments/${first.id}`, { body: { name: 'seg-upd-b', constraints: [] } }),
      409,
      'NameExistsError',
    );
    await expectError(await call('PUT', '/api/admin/segments/999999', { body: { name: 'x', constraints: [] } }), 404, 'NotFoundError');
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'segment-updated'")).toBe(1);
  });
});

describe('favorites', () => {
  /** Unleash wants a JSON content type on these writes, although they have no body. */
  const JSON_TYPE = { contentType: 'application/json' };

  it('favourites and unfavourites for the calling principal', async () => {
    await createFeature('fav-me');
    expect((await call('POST', `${P}/fav-me/favorites`, JSON_TYPE)).status).toBe(200);
    expect((await call('POST', `${P}/fav-me/favorites`, JSON_TYPE)).status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM favorite_features WHERE feature = 'fav-me' AND user_id = -42")).toBe(1);
    expect((await call('DELETE', `${P}/fav-me/favorites`, JSON_TYPE)).status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM favorite_features WHERE feature = 'fav-me'")).toBe(0);
    expect((await call('POST', `${P}/ghost/favorites`, JSON_TYPE)).status).toBe(404);
  });

  it('GET of a flag tells a person their favourite mark, after name, and tells an API key nothing (6.10.1)', async () => {
    await createFeature('fav-get');
    const user = await signedInUser();
    const before = await bodyOf(await call('GET', `${P}/fav-get`, withSession(user.cookie)));
    expect(Object.keys(before).slice(0, 3)).toEqual(['environments', 'name', 'favorite']);
    expect(before.favorite).toBe(false);
    expect((await call('POST', `${P}/fav-get/favorites`, withSession(user.cookie, JSON_TYPE))).status).toBe(200);
    expect((await bodyOf(await call('GET', `${P}/fav-get`, withSession(user.cookie)))).favorite).toBe(true);
    // The API key's own mark is not shown, even when it has one.
    expect((await call('POST', `${P}/fav-get/favorites`, JSON_TYPE)).status).toBe(200);
    expect('favorite' in (await bodyOf(await call('GET', `${P}/fav-get`)))).toBe(false);
  });

  it('answers 415 without a JSON content type, as 6.10.1, writing nothing', async () => {
    await createFeature('fav-typed');
    for (const method of ['POST', 'DELETE']) {
      const bare = await expectError(await call(method, `${P}/fav-typed/favorites`), 415, 'ContentTypeerror');
      expect(bare.message).toBe(
        "We do not accept the content-type you provided (you didn't provide one). Try using one of the content-types we do accept instead (application/json) and make sure the body is in the corresponding format.",
      );
      await expectError(
        await call(method, `${P}/fav-typed/favorites`, { rawBody: 'x', contentType: 'text/plain' }),
        415,
        'ContentTypeerror',
      );
    }
    expect(await count("SELECT count(*) AS n FROM favorite_features WHERE feature = 'fav-typed'")).toBe(0);
    expect(await count("SELECT count(*) AS n FROM events WHERE type LIKE 'feature-%favorited' AND feature_name = 'fav-typed'")).toBe(0);
  });
});

describe('dependencies', () => {
  it('adds a parent, refuses self, transitive and cross-project links, and removes it', async () => {
    await createFeature('dep-parent');
    await createFeature('dep-child');
    await createFeature('dep-grandchild');
    expect((await call('POST', `${P}/dep-child/dependencies`, { body: { feature: 'dep-parent' } })).status).toBe(200);
    expect(await bodyOf(await call('GET', `${P}/dep-child`))).toMatchObject({
      dependencies: [{ feature: 'dep-parent', enabled: true, variants: [] }],
    });
    expect(await bodyOf(await call('GET', `${P}/dep-parent`))).toMatchObject({ children: ['dep-child'] });

    let error = await expectError(
      await call('POST', `${P}/dep-child/dependencies`, { body: { feature: 'dep-child' } }),
      403,
      'InvalidOperationError',
    );
    expect(error.message).toBe('A feature flag cannot depend on itself.');
    // A child cannot become a parent, and a parent cannot get a parent: no chains, so no cycles.
    error = await expectError(
      await call('POST', `${P}/dep-grandchild/dependencies`, { body: { feature: 'dep-child' } }),
      403,
      'InvalidOperationError',
    );
    expect(error.message).toBe('Transitive dependency detected. Cannot add a dependency to the feature that other features depend on.');
    await expectError(await call('POST', `${P}/dep-parent/dependencies`, { body: { feature: 'dep-child' } }), 403, 'InvalidOperationError');
    await expectError(await call('POST', `${P}/dep-child/dependencies`, { body: { feature: 'dep-ghost' } }), 403, 'InvalidOperationError');

    // A parent with active children cannot be archived.
    await expectError(await call('DELETE', `${P}/dep-parent`), 403, 'InvalidOperationError');
    expect((await call('DELETE', `${P}/dep-child/dependencies/dep-parent`)).status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM dependent_features WHERE child = 'dep-child'")).toBe(0);
    expect(await eventTypes('dep-child')).toEqual(['feature-created', 'feature-dependency-added', 'feature-dependency-removed']);
  });
});

describe('lifecycle', () => {
  it('completes a feature as kept or discarded and reports the stages', async () => {
    await createFeature('life-done');
    expect((await call('POST', `${P}/life-done/lifecycle/complete`, { body: { status: 'discarded' } })).status).toBe(200);
    const stages = await bodyOf(await call('GET', `${P}/life-done/lifecycle`));
    expect(stages.map((stage: { stage: string }) => stage.stage)).toEqual(['initial', 'completed']);
    expect(stages[1]).toEqual({ stage: 'completed', status: 'discarded', enteredStageAt: expect.stringMatching(ISO) });
    await expectError(await call('POST', `${P}/life-done/lifecycle/complete`, { body: { status: 'maybe' } }), 400, 'BadDataError');
  });
});

describe('projects and environments', () => {
  it('lists environments with their Unleash fields', async () => {
    const body = await bodyOf(await call('GET', '/api/admin/environments'));
    expect(body.version).toBe(1);
    expect(body.environments.map((environment: { name: string }) => environment.name)).toEqual(['default', 'development', 'production']);
    expect(Object.keys(body.environments[0])).toEqual([
      'name',
      'type',
      'sortOrder',
      'enabled',
      'protected',
      'requiredApprovals',
      'projectCount',
      'apiTokenCount',
      'enabledToggleCount',
    ]);
    expect(body.environments[0]).toMatchObject({ name: 'default', type: 'production', sortOrder: 1, enabled: false, protected: true });
  });

  it('creates a project with the enabled environments attached, and new features get rows for them', async () => {
    const response = await call('POST', '/api/admin/projects', { body: { id: 'proj-new', name: 'New project', description: 'x' } });
    expect(response.status).toBe(201);
    const project = await bodyOf(response);
    expect(project).toMatchObject({
      id: 'proj-new',
      name: 'New project',
      description: 'x',
      featureCount: 0,
      mode: 'open',
      environments: ['development', 'production'],
    });
    await createFeature('proj-new-flag', {}, 'proj-new');
    expect(await count("SELECT count(*) AS n FROM feature_environments WHERE feature_name = 'proj-new-flag'")).toBe(2);
    const list = await bodyOf(await call('GET', '/api/admin/projects'));
    expect(list.projects.find((item: { id: string }) => item.id === 'proj-new')).toMatchObject({ featureCount: 1 });
    await expectError(await call('POST', '/api/admin/projects', { body: { id: 'proj-new', name: 'again' } }), 409, 'NameExistsError');
    await expectError(await call('POST', '/api/admin/projects', { body: { id: 'bad id', name: 'x' } }), 400, 'ValidationError');
    await expectError(
      await call('POST', '/api/admin/projects', { body: { id: 'proj-env', name: 'x', environments: ['nope'] } }),
      400,
      'ValidationError',
    );
    expect(await count("SELECT count(*) AS n FROM projects WHERE id = 'proj-env'")).toBe(0);
  });

  it('attaching an environment to a project gives its existing features a disabled row', async () => {
    await call('POST', '/api/admin/projects', { body: { id: 'proj-attach', name: 'Attach', environments: ['development'] } });
    await createFeature('attach-flag', {}, 'proj-attach');
    expect((await call('POST', '/api/admin/projects/proj-attach/environments', { body: { environment: 'production' } })).status).toBe(200);
    const { results } = await env.DB.prepare(
      "SELECT environment, enabled FROM feature_environments WHERE feature_name = 'attach-flag' ORDER BY environment",
    ).all();
    expect(results).toEqual([
      { environment: 'development', enabled: 0 },
      { environment: 'production', enabled: 0 },
    ]);
  });
});

describe("audit event payloads in 6.10.1's shapes (found by scripts/parity-sweep.mjs)", () => {
  async function eventsOf(featureName: string) {
    const { results } = await env.DB.prepare('SELECT type, data, pre_data FROM events WHERE feature_name = ? ORDER BY id')
      .bind(featureName)
      .all<{ type: string; data: string | null; pre_data: string | null }>();
    return results.map((row) => ({
      type: row.type,
      data: row.data === null ? null : JSON.parse(row.data),
      preData: row.pre_data === null ? null : JSON.parse(row.pre_data),
    }));
  }

  it('feature-created carries the flag in Unleash key order; on/off events carry no data', async () => {
    await createFeature('ev-shape', { description: 'd' });
    expect((await call('POST', `${P}/ev-shape/environments/development/on`)).status).toBe(200);
    expect((await call('POST', `${P}/ev-shape/environments/development/off`)).status).toBe(200);
    const recorded = await eventsOf('ev-shape');
    const created = recorded.find((event) => event.type === 'feature-created')!;
    expect(Object.keys(created.data)).toEqual(FLAG_KEYS);
    expect(created.data).toMatchObject({ name: 'ev-shape', description: 'd', project: 'default', lastSeenAt: null, archived: false });
    for (const type of ['feature-environment-enabled', 'feature-environment-disabled']) {
      const toggled = recorded.find((event) => event.type === type)!;
      expect(toggled).toEqual({ type, data: null, preData: null });
    }
    // Turning on a flag with no strategies added the default one: its event is a public strategy too.
    const added = recorded.find((event) => event.type === 'feature-strategy-add')!;
    expect(Object.keys(added.data)).toEqual([
      'id',
      'name',
      'title',
      'disabled',
      'constraints',
      'parameters',
      'variants',
      'sortOrder',
      'segments',
    ]);
    expect(added.data).toMatchObject({ name: 'flexibleRollout', disabled: false, segments: [] });
  });

  it('strategy add, update and remove record the strategy in Unleash key order, without featureName', async () => {
    await createFeature('ev-strat');
    const strategy = await bodyOf(
      await call('POST', `${P}/ev-strat/environments/development/strategies`, {
        body: { name: 'default', constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }] },
      }),
    );
    expect(
      (await call('PUT', `${P}/ev-strat/environments/development/strategies/${strategy.id}`, { body: { name: 'default', title: 't' } }))
        .status,
    ).toBe(200);
    expect((await call('DELETE', `${P}/ev-strat/environments/development/strategies/${strategy.id}`)).status).toBe(200);
    const order = ['id', 'name', 'title', 'disabled', 'constraints', 'parameters', 'variants', 'sortOrder', 'segments'];
    const recorded = await eventsOf('ev-strat');
    const add = recorded.find((event) => event.type === 'feature-strategy-add')!;
    const update = recorded.find((event) => event.type === 'feature-strategy-update')!;
    const remove = recorded.find((event) => event.type === 'feature-strategy-remove')!;
    expect(Object.keys(add.data)).toEqual(order);
    expect(Object.keys(update.data)).toEqual(order);
    expect(Object.keys(update.preData)).toEqual(order);
    expect(update.data.title).toBe('t');
    expect(remove.data).toBeNull();
    expect(Object.keys(remove.preData)).toEqual(order);
  });

  it('feature-dependency-added names variants only when the request did', async () => {
    await createFeature('ev-dep-parent');
    await createFeature('ev-dep-child');
    expect((await call('POST', `${P}/ev-dep-child/dependencies`, { body: { feature: 'ev-dep-parent' } })).status).toBe(200);
    expect(
      (await call('POST', `${P}/ev-dep-child/dependencies`, { body: { feature: 'ev-dep-parent', enabled: true, variants: ['a'] } })).status,
    ).toBe(200);
    const added = (await eventsOf('ev-dep-child')).filter((event) => event.type === 'feature-dependency-added');
    expect(added.map((event) => event.data)).toEqual([
      { feature: 'ev-dep-parent', enabled: true },
      { feature: 'ev-dep-parent', enabled: true, variants: ['a'] },
    ]);
  });
});

describe("refusals of the flag reads in 6.10.1's words (found by scripts/parity-sweep.mjs)", () => {
  it('names a missing environment, strategy and flag as each 6.10.1 read does', async () => {
    await createFeature('read-refusals');
    let error = await expectError(await call('GET', `${P}/read-refusals/environments/nowhere/strategies`), 404, 'NotFoundError');
    expect(error.message).toBe('Feature read-refusals does not have environment nowhere');
    error = await expectError(await call('GET', `${P}/read-refusals/environments/nowhere/variants`), 404, 'NotFoundError');
    expect(error.message).toBe('Could not find read-refusals in nowhere');
    error = await expectError(await call('GET', `${P}/read-refusals/environments/development/strategies/nope`), 404, 'NotFoundError');
    expect(error.message).toBe('Could not find strategy with id: nope');
    error = await expectError(await call('GET', `${P}/no-such-flag/variants`), 404, 'NotFoundError');
    expect(error.message).toBe('No feature flag found');
    // Writes keep their own wording.
    error = await expectError(await call('POST', `${P}/read-refusals/environments/nowhere/on`), 404, 'NotFoundError');
    expect(error.message).toBe('Could not find environment nowhere for feature: read-refusals');
  });

  it('answers an unknown flag its lifecycle as no stages (200 []), as 6.10.1 does', async () => {
    const response = await call('GET', `${P}/no-such-flag/lifecycle`);
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual([]);
  });
});
