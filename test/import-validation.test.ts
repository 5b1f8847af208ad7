import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { footprint, payload } from './support/import';
import { rows } from './support/db';
import { createProject } from './support/admin';
import { unique } from './support/names';

const IMPORT = '/api/admin/features-batch/import';
const VALIDATE = '/api/admin/features-batch/validate';
const PREFIX =
  'Request validation failed: your request body or params contain invalid data. Refer to the `details` list for more information.';

/** Imports, expects one 400 with exactly these details, and proves nothing was written. */
async function rejected(body: unknown, details: { message: string; affectedItems?: string[]; path?: string }[]) {
  const before = await footprint();
  const response = await call('POST', IMPORT, { body });
  const error = await expectError(response, 400, 'ValidationError');
  expect(error.message).toBe(PREFIX);
  expect(error.details).toEqual(details);
  expect(await footprint()).toEqual(before);
  return error;
}

const OTHER = unique('other-project');
const existingElsewhere = unique('elsewhere');
const customStrategy = unique('custom');

beforeAll(async () => {
  await createProject(OTHER);
  const response = await call('POST', IMPORT, { body: payload({ features: [{ name: existingElsewhere }] }, OTHER) });
  expect(response.status).toBe(200);
  await rows('INSERT INTO context_fields (name, legal_values) VALUES (\'region\', \'[{"value":"eu"},{"value":"us"}]\')');
  await rows("INSERT INTO context_fields (name, project) VALUES ('other-scoped', ?)", OTHER);
  await rows('INSERT INTO strategies (name, built_in) VALUES (?, 0)', customStrategy);
});

describe('POST /api/admin/features-batch/import: schema', () => {
  it('requires project, environment and data with features, featureStrategies and tagTypes', async () => {
    await rejected({ project: 'default', environment: 'development', data: { features: [], featureStrategies: [] } }, [
      { path: '/body/data/tagTypes', message: 'The `/body/data/tagTypes` property is required. It was not present on the data you sent.' },
    ]);
    const error = await expectError(await call('POST', IMPORT, { body: {} }), 400, 'ValidationError');
    expect(error.details.map((detail) => detail.path)).toEqual(['/body/project', '/body/environment', '/body/data']);
  });

  it('rejects unknown keys at every level', async () => {
    await rejected({ ...payload({}), extra: 1 }, [
      {
        path: '/body/extra',
        message:
          'The `/body` object of the request body does not allow additional properties. Your request included the `/body/extra` property.',
      },
    ]);
    // `data.links` is 8.x's (7.0+), accepted; any other key is still refused.
    await rejected(payload({ somethingElse: [] }), [
      {
        path: '/body/data/somethingElse',
        message:
          'The `/body/data` object of the request body does not allow additional properties. Your request included the `/body/data/somethingElse` property.',
      },
    ]);
  });

  it('checks variant weights, payload types, operators, tag lengths and required featureEnvironment.enabled', async () => {
    const name = unique('schema');
    const error = await expectError(
      await call('POST', IMPORT, {
        body: payload({
          features: [{ name }],
          featureStrategies: [
            {
              name: 'default',
              featureName: name,
              constraints: [{ contextName: 'userId', operator: 'LIKE', values: [] }],
              variants: [{ name: 'v', weight: 2000, weightType: 'variable', stickiness: 'default' }],
            },
          ],
          featureEnvironments: [
            { name: 'development', featureName: name, variants: [{ name: 'v', weight: 1500, payload: { type: 'xml', value: '<a/>' } }] },
          ],
          featureTags: [{ featureName: name, tagType: 'simple', tagValue: 'a' }],
          tagTypes: [{ name: 'x' }],
        }),
      }),
      400,
      'ValidationError',
    );
    expect(error.details.map((detail) => detail.path)).toEqual([
      '/body/data/featureStrategies/0/constraints/0/operator',
      '/body/data/featureStrategies/0/variants/0/weight',
      '/body/data/featureEnvironments/0/enabled',
      '/body/data/featureEnvironments/0/variants/0/weight',
      '/body/data/featureEnvironments/0/variants/0/payload/type',
      '/body/data/featureTags/0/tagValue',
      '/body/data/tagTypes/0/name',
    ]);
    expect(error.details[1]!.message).toBe(
      'The `/body/data/featureStrategies/0/variants/0/weight` property must be <= 1000. You sent 2000.',
    );
    expect(error.details[5]!.message).toBe(
      'The `/body/data/featureTags/0/tagValue` property must NOT have fewer than 2 characters. You sent "a".',
    );
  });

  it('rejects feature names that are not URL friendly, NUL bytes and oversized numbers', async () => {
    const error = await expectError(
      await call('POST', IMPORT, {
        body: payload({
          features: [{ name: 'bad name' }, { name: 'nul\u0000' }],
          featureStrategies: [{ name: 'default', sortOrder: 2 ** 63 }],
        }),
      }),
      400,
      'ValidationError',
    );
    expect(error.details.map((detail) => detail.path)).toEqual([
      '/body/data/features/0/name',
      '/body/data/features/1/name',
      '/body/data/features/1/name',
      '/body/data/featureStrategies/0/sortOrder',
    ]);
    expect(error.details[1]!.message).toBe(
      'The `/body/data/features/1/name` property must be well-formed text without NUL characters. You sent "nul\\u0000".',
    );
    expect(error.details[0]!.message).toBe('The `/body/data/features/0/name` property must be URL friendly. You sent "bad name".');
  });

  it('answers 400, not a crash, to deeply nested JSON', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const response = await call('POST', IMPORT, {
      rawBody: `{"project":"default","environment":"development","data":{"features":${deep}}}`,
    });
    expect(response.status).toBe(400);
  });
});

describe('POST /api/admin/features-batch/import: references', () => {
  it('rejects an unknown strategy', async () => {
    const name = unique('s');
    await rejected(payload({ features: [{ name }], featureStrategies: [{ name: 'no-such-strategy', featureName: name }] }), [
      { message: 'We detected the following custom strategy that needs to be created first:', affectedItems: ['no-such-strategy'] },
    ]);
  });

  it('rejects a context field whose legal values are not a subset of the local ones, or that belongs to another project', async () => {
    await rejected(
      payload({
        contextFields: [
          { name: 'region', legalValues: [{ value: 'eu' }, { value: 'mars' }] },
          { name: 'other-scoped' },
          { name: 'environment', legalValues: [{ value: 'prod' }] },
        ],
      }),
      [
        {
          message: 'We detected the following context fields that do not have matching legal values with the imported ones:',
          affectedItems: ['region', 'other-scoped', 'environment'],
        },
      ],
    );
  });

  it('rejects features that exist in another project', async () => {
    await rejected(payload({ features: [{ name: existingElsewhere }] }), [
      {
        message:
          'You cannot import a features that already exist in other projects. You already have the following features defined outside of project default:',
        affectedItems: [`${existingElsewhere} (in project ${OTHER})`],
      },
    ]);
  });

  it('rejects duplicate feature names in the payload', async () => {
    const name = unique('dup');
    await rejected(payload({ features: [{ name }, { name }] }), [
      { message: 'We detected the following features are duplicate in your import data:', affectedItems: [name] },
    ]);
  });

  it('rejects segments that do not exist and segment ids not listed in data.segments', async () => {
    const name = unique('seg');
    await rejected(
      payload({
        features: [{ name }],
        featureStrategies: [{ name: 'default', featureName: name, segments: [1, 2] }],
        segments: [{ id: 1, name: 'no-such-segment' }],
      }),
      [
        { message: 'We detected the following segments that need to be created first:', affectedItems: ['no-such-segment'] },
        { message: 'We detected strategies using segment ids that are not listed in data.segments:', affectedItems: ['2'] },
      ],
    );
  });

  it('rejects a segment of another project', async () => {
    const segmentName = unique('foreign-seg');
    await rows('INSERT INTO segments (name, segment_project_id) VALUES (?, ?)', segmentName, OTHER);
    await rejected(payload({ segments: [{ id: 5, name: segmentName }] }), [
      { message: 'We detected the following segments that need to be created first:', affectedItems: [segmentName] },
    ]);
  });

  it('rejects dependencies on features that are neither imported nor existing', async () => {
    const child = unique('child');
    await rejected(
      payload({ features: [{ name: child }], dependencies: [{ feature: child, dependencies: [{ feature: 'ghost-parent' }] }] }),
      [{ message: 'We detected the following dependencies that need to be created first:', affectedItems: ['ghost-parent'] }],
    );
  });

  it('rejects self-dependencies and dependency cycles, including through existing dependencies', async () => {
    const a = unique('a');
    const b = unique('b');
    const c = unique('c');
    const response = await call('POST', IMPORT, {
      body: payload({ features: [{ name: a }, { name: b }], dependencies: [{ feature: b, dependencies: [{ feature: a }] }] }),
    });
    expect(response.status).toBe(200);
    await rejected(
      payload({
        features: [{ name: a }, { name: c }],
        dependencies: [
          { feature: a, dependencies: [{ feature: b }] },
          { feature: c, dependencies: [{ feature: c }] },
        ],
      }),
      [
        { message: 'A feature flag cannot depend on itself. We detected it for the following features:', affectedItems: [c] },
        { message: 'We detected the following dependency cycles:', affectedItems: [`${b} -> ${a} -> ${b}`] },
      ],
    );
  });

  it('rejects transitive dependencies: they are one level deep', async () => {
    const grandparent = unique('gp');
    const parent = unique('p');
    const child = unique('ch');
    await rejected(
      payload({
        features: [{ name: grandparent }, { name: parent }, { name: child }],
        dependencies: [
          { feature: parent, dependencies: [{ feature: grandparent }] },
          { feature: child, dependencies: [{ feature: parent }] },
        ],
      }),
      [
        {
          message:
            'Transitive dependency detected: dependencies are one level deep, and the following features would be both a parent and a child:',
          affectedItems: [parent],
        },
      ],
    );
  });

  it('rejects tags whose type is neither declared nor defined', async () => {
    const name = unique('tagged');
    await rejected(payload({ features: [{ name }], featureTags: [{ featureName: name, tagType: 'undeclared', tagValue: 'x1' }] }), [
      {
        message: 'We detected the following tag types that are used by tags but neither declared in tagTypes nor defined:',
        affectedItems: ['undeclared'],
      },
    ]);
  });

  it('rejects strategies, environments and tags of features that are neither imported nor in the project', async () => {
    await rejected(
      payload({
        featureStrategies: [{ name: 'default', featureName: 'not-here' }],
        featureEnvironments: [{ name: 'development', featureName: existingElsewhere, enabled: true }],
        featureTags: [{ featureName: 'not-here', tagType: 'simple', tagValue: 'zz' }],
      }),
      [
        {
          message:
            'We detected strategies, environment settings, tags or dependencies for the following features, which are neither imported nor defined in project default:',
          affectedItems: ['not-here', existingElsewhere],
        },
      ],
    );
  });

  it('rejects constraint values that do not fit their operator or the legal values', async () => {
    const name = unique('constraints');
    await rejected(
      payload({
        features: [{ name }],
        featureStrategies: [
          {
            name: 'default',
            featureName: name,
            constraints: [
              { contextName: 'userId', operator: 'NUM_GT', value: 'ten' },
              { contextName: 'currentTime', operator: 'DATE_AFTER', value: '2026-13-01' },
              { contextName: 'appName', operator: 'SEMVER_EQ', value: '1.2' },
              { contextName: 'userId', operator: 'NUM_EQ' },
              { contextName: 'region', operator: 'IN', values: ['eu', 'mars'] },
              { contextName: 'region', operator: 'IN', values: ['us'] },
              { contextName: 'userId', operator: 'NUM_LTE', value: '-1.5' },
            ],
          },
        ],
      }),
      [
        {
          message: 'We detected constraints whose values do not fit their operator or the legal values of their context field:',
          affectedItems: [
            `${name}: userId NUM_GT (ten is not a number)`,
            `${name}: currentTime DATE_AFTER (2026-13-01 is not a date)`,
            `${name}: appName SEMVER_EQ (1.2 is not a semver version)`,
            `${name}: userId NUM_EQ (value is required)`,
            `${name}: region IN (mars is not a legal value)`,
          ],
        },
      ],
    );
  });

  it('rejects variants without a variable one and fixed weights over 1000', async () => {
    const name = unique('weights');
    await rejected(
      payload({
        features: [{ name }],
        featureStrategies: [
          {
            name: 'default',
            featureName: name,
            variants: [
              { name: 'a', weight: 700, weightType: 'fix', stickiness: 'default' },
              { name: 'b', weight: 700, weightType: 'fix', stickiness: 'default' },
            ],
          },
        ],
        featureEnvironments: [
          {
            name: 'development',
            featureName: name,
            enabled: false,
            variants: [
              { name: 'a', weight: 700, weightType: 'fix' },
              { name: 'b', weight: 700, weightType: 'fix' },
              { name: 'c', weight: 0, weightType: 'variable' },
            ],
          },
        ],
      }),
      [
        {
          message: 'There must be at least one "variable" variant. We detected it for the variants of:',
          affectedItems: [`strategy default of ${name}`],
        },
        {
          message: 'The traffic distribution total must equal 100%. The fixed weights exceed 1000 for the variants of:',
          affectedItems: [name],
        },
      ],
    );
  });

  it('enforces the project feature limit and naming pattern', async () => {
    const project = unique('limited');
    await createProject(project, ['development']);
    await rows(
      "UPDATE projects SET feature_limit = 1, feature_naming_pattern = 'team-[a-z]+', feature_naming_example = 'team-abc' WHERE id = ?",
      project,
    );
    await rejected(payload({ features: [{ name: 'team-ok' }, { name: 'Nope' }] }, project), [
      {
        message:
          'Features imported into this project must match the project\'s feature naming pattern: "team-[a-z]+". Here\'s an example of a name that does match the pattern: "team-abc". The following features do not match the pattern:',
        affectedItems: ['Nope'],
      },
      {
        message:
          'We detected you want to create 2 new features to a project that already has 0 existing features, exceeding the maximum limit of 1.',
        affectedItems: [],
      },
    ]);
  });

  it('checks naming patterns in linear time: a backtracking pattern cannot stall the request', async () => {
    const project = unique('redos');
    await createProject(project, ['development']);
    await rows("UPDATE projects SET feature_naming_pattern = '(a+)+b' WHERE id = ?", project);
    const name = `${'a'.repeat(60)}c`;
    // A backtracking engine needs about 2^60 steps for this name and would hang past the test
    // timeout; RE2 answers at once.
    await rejected(payload({ features: [{ name }] }, project), [
      {
        message:
          'Features imported into this project must match the project\'s feature naming pattern: "(a+)+b". The following features do not match the pattern:',
        affectedItems: [name],
      },
    ]);
  });

  it('reports every problem of a payload at once, in one 400, and writes nothing', async () => {
    const name = unique('many');
    await rejected(
      payload({
        features: [{ name }, { name }, { name: existingElsewhere }],
        featureStrategies: [{ name: 'no-such-strategy', featureName: name, segments: [9] }],
        contextFields: [{ name: 'region', legalValues: [{ value: 'mars' }] }],
        segments: [{ id: 9, name: 'no-such-segment' }],
        featureTags: [{ featureName: name, tagType: 'undeclared', tagValue: 'x1' }],
        dependencies: [{ feature: name, dependencies: [{ feature: 'ghost-parent' }] }],
      }),
      [
        { message: 'We detected the following custom strategy that needs to be created first:', affectedItems: ['no-such-strategy'] },
        {
          message: 'We detected the following context fields that do not have matching legal values with the imported ones:',
          affectedItems: ['region'],
        },
        {
          message:
            'You cannot import a features that already exist in other projects. You already have the following features defined outside of project default:',
          affectedItems: [`${existingElsewhere} (in project ${OTHER})`],
        },
        { message: 'We detected the following features are duplicate in your import data:', affectedItems: [name] },
        { message: 'We detected the following segments that need to be created first:', affectedItems: ['no-such-segment'] },
        {
          message: 'We detected the following tag types that are used by tags but neither declared in tagTypes nor defined:',
          affectedItems: ['undeclared'],
        },
        { message: 'We detected the following dependencies that need to be created first:', affectedItems: ['ghost-parent'] },
      ],
    );
  });
});

describe('POST /api/admin/features-batch/validate', () => {
  it('returns errors, warnings and permissions without writing', async () => {
    const archived = unique('archived');
    const existing = unique('existing');
    expect((await call('POST', IMPORT, { body: payload({ features: [{ name: archived }, { name: existing }] }) })).status).toBe(200);
    await rows("UPDATE features SET archived_at = '2026-01-01T00:00:00.000Z' WHERE name = ?", archived);
    const before = await footprint();
    const response = await call('POST', VALIDATE, {
      body: payload({
        features: [{ name: archived }, { name: existing }, { name: unique('new') }],
        featureStrategies: [
          { name: customStrategy, featureName: existing },
          { name: 'no-such-strategy', featureName: existing },
        ],
      }),
    });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({
      errors: [
        { message: 'We detected the following custom strategy that needs to be created first:', affectedItems: ['no-such-strategy'] },
      ],
      warnings: [
        {
          message:
            'The following features will not be imported as they are currently archived. To import them, please unarchive them first:',
          affectedItems: [archived],
        },
        {
          message:
            'The following strategy types will be used in import. Please make sure the strategy type parameters are configured as in source environment:',
          affectedItems: [customStrategy],
        },
        { message: 'The following features already exist in this project and will be overwritten:', affectedItems: [existing] },
      ],
      permissions: [],
    });
    expect(await footprint()).toEqual(before);
  });

  it('answers 404 for a missing project, like import', async () => {
    await expectError(await call('POST', VALIDATE, { body: payload({}, 'ghost') }), 404, 'NotFoundError');
  });

  it('imports what validate found clean, with a custom strategy', async () => {
    const name = unique('custom-user');
    const body = payload({
      features: [{ name }],
      featureStrategies: [{ name: customStrategy, featureName: name, parameters: { a: true } }],
    });
    const validation = await bodyOf(await call('POST', VALIDATE, { body }));
    expect(validation.errors).toEqual([]);
    expect((await call('POST', IMPORT, { body })).status).toBe(200);
    expect(await rows('SELECT strategy_name, parameters FROM feature_strategies WHERE feature_name = ?', name)).toEqual([
      { strategy_name: customStrategy, parameters: '{"a":"true"}' },
    ]);
  });
});
