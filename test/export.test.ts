import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError } from './support/http';
import { payload } from './support/import';
import { rows } from './support/db';
import { createProject } from './support/admin';
import { unique } from './support/names';

const IMPORT = '/api/admin/features-batch/import';
const EXPORT = '/api/admin/features-batch/export';

const SOURCE = unique('source');
const TARGET = unique('target');
const prefix = unique('rt');
const alpha = `${prefix}-alpha`;
const beta = `${prefix}-beta`;
const gamma = `${prefix}-gamma`;
const segmentName = unique('beta-testers');
const tagType = unique('team');
const contextName = unique('plan');
let segmentId = 0;

async function exported(body: Record<string, unknown>) {
  const response = await call('POST', EXPORT, { body });
  expect(response.status).toBe(200);
  return bodyOf(response);
}

/** What must survive a round trip: everything but ids, projects and environment names. */
function comparable(data: any) {
  return {
    features: data.features.map(({ project: _project, ...feature }: any) => feature),
    featureStrategies: data.featureStrategies.map(({ id: _id, ...strategy }: any) => strategy),
    featureEnvironments: data.featureEnvironments.map(({ environment: _e, name: _n, ...rest }: any) => rest),
    contextFields: data.contextFields,
    featureTags: data.featureTags,
    segments: data.segments,
    tagTypes: data.tagTypes,
    dependencies: data.dependencies,
  };
}

beforeAll(async () => {
  await createProject(SOURCE, ['development', 'production']);
  await createProject(TARGET, ['development', 'production']);
  const inserted = await rows<{ id: number }>('INSERT INTO segments (name) VALUES (?) RETURNING id', segmentName);
  segmentId = inserted[0]!.id;
  const response = await call('POST', IMPORT, {
    body: payload(
      {
        features: [
          { name: alpha, type: 'experiment', description: 'Alpha', impressionData: true },
          { name: beta, type: 'kill-switch', stale: true },
          { name: gamma },
        ],
        featureStrategies: [
          {
            name: 'flexibleRollout',
            featureName: alpha,
            title: 'Beta testers',
            sortOrder: 0,
            parameters: { rollout: '40', stickiness: 'userId', groupId: alpha },
            constraints: [{ contextName, operator: 'IN', values: ['pro'], inverted: false, caseInsensitive: true }],
            variants: [
              { name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'userId', payload: { type: 'json', value: '{"a":1}' } },
            ],
            segments: [100],
          },
          { name: 'default', featureName: alpha, sortOrder: 1, disabled: true },
          { name: 'default', featureName: beta, sortOrder: 0 },
        ],
        featureEnvironments: [
          {
            name: 'development',
            featureName: alpha,
            enabled: true,
            variants: [{ name: 'v1', weight: 1000, weightType: 'variable', stickiness: 'default' }],
          },
          { name: 'development', featureName: beta, enabled: false },
        ],
        contextFields: [{ name: contextName, description: 'plans', legalValues: [{ value: 'pro' }, { value: 'free' }] }],
        featureTags: [
          { featureName: alpha, tagType, tagValue: 'core' },
          { featureName: beta, tagType: 'simple', tagValue: 'ops' },
        ],
        segments: [{ id: 100, name: segmentName }],
        tagTypes: [{ name: tagType, description: 'Teams', icon: null }],
        dependencies: [{ feature: beta, dependencies: [{ feature: alpha, enabled: true, variants: ['blue'] }] }],
      },
      SOURCE,
    ),
  });
  expect(response.status).toBe(200);
});

describe('POST /api/admin/features-batch/export', () => {
  it('exports the data shape, with the real enabled state and Unleash key orders', async () => {
    const data = await exported({ project: SOURCE, environment: 'development' });
    expect(Object.keys(data)).toEqual([
      'features',
      'featureStrategies',
      'featureEnvironments',
      'contextFields',
      'featureTags',
      'segments',
      'tagTypes',
      'dependencies',
      'links',
    ]);
    expect(data.features).toEqual([
      { name: alpha, description: 'Alpha', type: 'experiment', project: SOURCE, stale: false, impressionData: true, archived: false },
      { name: beta, description: null, type: 'kill-switch', project: SOURCE, stale: true, impressionData: false, archived: false },
      { name: gamma, description: null, type: 'release', project: SOURCE, stale: false, impressionData: false, archived: false },
    ]);
    expect(data.featureStrategies.map((strategy: any) => Object.keys(strategy))[0]).toEqual([
      'name',
      'id',
      'featureName',
      'title',
      'parameters',
      'constraints',
      'variants',
      'disabled',
      'segments',
      'sortOrder',
    ]);
    expect(data.featureStrategies.map(({ id: _id, ...rest }: any) => rest)).toEqual([
      {
        name: 'flexibleRollout',
        featureName: alpha,
        title: 'Beta testers',
        parameters: { rollout: '40', stickiness: 'userId', groupId: alpha },
        constraints: [{ contextName, operator: 'IN', caseInsensitive: true, inverted: false, values: ['pro'] }],
        variants: [
          { name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'userId', payload: { type: 'json', value: '{"a":1}' } },
        ],
        disabled: false,
        segments: [segmentId],
        sortOrder: 0,
      },
      {
        name: 'default',
        featureName: alpha,
        title: null,
        parameters: {},
        constraints: [],
        variants: [],
        disabled: true,
        segments: [],
        sortOrder: 1,
      },
      {
        name: 'default',
        featureName: beta,
        title: null,
        parameters: {},
        constraints: [],
        variants: [],
        disabled: false,
        segments: [],
        sortOrder: 0,
      },
    ]);
    // beta and gamma are disabled in development and exported so (6.10.1 exported them enabled).
    expect(data.featureEnvironments).toEqual([
      {
        enabled: true,
        featureName: alpha,
        environment: 'development',
        variants: [{ name: 'v1', weight: 1000, weightType: 'variable', stickiness: 'default' }],
        name: 'development',
      },
      { enabled: false, featureName: beta, environment: 'development', variants: [], name: 'development' },
      { enabled: false, featureName: gamma, environment: 'development', variants: [], name: 'development' },
    ]);
    expect(data.contextFields).toEqual([
      { name: contextName, description: 'plans', stickiness: false, sortOrder: 0, legalValues: [{ value: 'pro' }, { value: 'free' }] },
    ]);
    expect(data.featureTags).toEqual([
      { featureName: alpha, tagType, tagValue: 'core' },
      { featureName: beta, tagType: 'simple', tagValue: 'ops' },
    ]);
    expect(data.segments).toEqual([{ id: segmentId, name: segmentName }]);
    expect(data.tagTypes).toEqual(
      [
        { name: 'simple', description: 'Used to simplify filtering of features', icon: '#' },
        { name: tagType, description: 'Teams', icon: null },
      ].sort((a, b) => a.name.localeCompare(b.name)),
    );
    expect(data.dependencies).toEqual([{ feature: beta, dependencies: [{ feature: alpha, enabled: true, variants: ['blue'] }] }]);
  });

  it('selects by feature names and by tag', async () => {
    const byName = await exported({ features: [gamma, 'no-such'], environment: 'development' });
    expect(byName.features.map((feature: any) => feature.name)).toEqual([gamma]);
    expect(byName.featureStrategies).toEqual([]);
    const byTag = await exported({ tag: `${tagType}:core`, environment: 'development' });
    expect(byTag.features.map((feature: any) => feature.name)).toEqual([alpha]);
    expect(byTag.dependencies).toEqual([]);
  });

  it('"Export all project flags": features [] with a project exports the whole project, as Unleash does', async () => {
    const all = await exported({ features: [], project: SOURCE, environment: 'development' });
    expect(all.features.map((feature: any) => feature.name)).toEqual([alpha, beta, gamma]);
    expect(all.featureStrategies.map((strategy: any) => strategy.featureName)).toEqual([alpha, alpha, beta]);
    // The other project's flags stay out.
    expect(all.features.every((feature: any) => feature.project === SOURCE)).toBe(true);
    // A tag wins over the project and the names, as in Unleash.
    const tagged = await exported({ features: [gamma], project: TARGET, tag: 'simple:ops', environment: 'development' });
    expect(tagged.features.map((feature: any) => feature.name)).toEqual([beta]);
  });

  it('answers 404 for an unknown environment, 400 for a bad body, 415, 401 and 403', async () => {
    const missing = await expectError(await call('POST', EXPORT, { body: { environment: 'staging' } }), 404, 'NotFoundError');
    expect(missing.message).toBe('Could not find environment with name: staging');
    // Named as 6.10.1 and 8.2.0 name it (test/unleash8-sweep.test.ts has 8.2.0's body).
    const bad = await expectError(await call('POST', EXPORT, { body: { features: 'x' } }), 400, 'BadDataError');
    expect(bad.details.map((detail) => detail.path)).toEqual(['/body/features', '/body/environment']);
    await expectError(await call('POST', EXPORT, { rawBody: 'x', contentType: 'text/plain' }), 415, 'ContentTypeerror');
    await expectError(await call('POST', EXPORT, { token: null, body: { environment: 'development' } }), 401, 'AuthenticationRequired');
    const client = await createToken({ type: 'client', tokenName: unique('c'), environment: 'development', projects: ['*'] });
    expect((await call('POST', EXPORT, { token: client, body: { environment: 'development' } })).status).toBe(403);
  });
});

describe('round trip', () => {
  it('export, import into another environment of the project, export again: the same flags', async () => {
    const first = await exported({ project: SOURCE, environment: 'development' });
    const response = await call('POST', IMPORT, { body: { project: SOURCE, environment: 'production', data: first } });
    expect(response.status).toBe(200);
    const second = await exported({ project: SOURCE, environment: 'production' });
    expect(comparable(second)).toEqual(comparable(first));
    // Fresh strategy ids.
    const firstIds = new Set(first.featureStrategies.map((strategy: any) => strategy.id));
    expect(second.featureStrategies.every((strategy: any) => !firstIds.has(strategy.id))).toBe(true);
  });

  it('export, import into another project and environment (the source gone), export again: the same flags', async () => {
    const first = await exported({ project: SOURCE, environment: 'development' });
    // Feature names are global: the source must be gone before its flags can live elsewhere.
    await rows('DELETE FROM dependent_features WHERE child IN (?, ?, ?)', alpha, beta, gamma);
    await rows('DELETE FROM features WHERE project = ?', SOURCE);
    const response = await call('POST', IMPORT, { body: { project: TARGET, environment: 'production', data: first } });
    expect(response.status).toBe(200);
    const second = await exported({ project: TARGET, environment: 'production' });
    expect(second.features.every((feature: any) => feature.project === TARGET)).toBe(true);
    expect(comparable(second)).toEqual(comparable(first));
  });
});
