/**
 * The playground (POST /api/admin/playground and /advanced): Unleash 6.10.1's shapes, key
 * order included (the expected bodies below were taken from 6.10.1 with the same flags), and
 * agreement with the frontend API on random contexts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from './support/random';
import { adminOk, createFeature, createProject } from './support/admin';
import { bodyOf, call, createToken, expectError } from './support/http';
import { count } from './support/db';
import { unique } from './support/names';
import { seedFlag, seedSegment } from './support/sdk-seed';

const P = unique('pg');
const R = unique('pgr');
let segmentId: number;
const ids: Record<string, string> = {};

async function addStrategy(feature: string, environment: string, body: Record<string, unknown>, project = P): Promise<string> {
  const response = await adminOk('POST', `/api/admin/projects/${project}/features/${feature}/environments/${environment}/strategies`, body);
  return (await bodyOf<{ id: string }>(response)).id;
}

beforeAll(async () => {
  await createProject(P, ['development', 'production']);
  const context = await call('POST', '/api/admin/context', { body: { name: 'region', stickiness: false } });
  expect([201, 409]).toContain(context.status);
  await adminOk('POST', '/api/admin/strategies', {
    name: 'pgCustom',
    description: 'x',
    parameters: [{ name: 'p', type: 'string', description: '', required: false }],
  });
  const segment = await adminOk('POST', '/api/admin/segments', {
    name: unique('pg-seg'),
    description: '',
    constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'], caseInsensitive: false, inverted: false }],
  });
  segmentId = (await bodyOf<{ id: number }>(segment)).id;
  for (const name of ['pg-parent', 'pg-probe', 'pg-child']) await createFeature(name, { type: 'release' }, P);
  ids.userWithId = await addStrategy('pg-probe', 'development', { name: 'userWithId', constraints: [], parameters: { userIds: 'u3' } });
  ids.disabled = await addStrategy('pg-probe', 'development', { name: 'default', disabled: true, constraints: [] });
  ids.custom = await addStrategy('pg-probe', 'development', {
    name: 'pgCustom',
    parameters: { p: '1' },
    constraints: [{ contextName: 'environment', operator: 'IN', values: ['x'] }],
  });
  ids.hostname = await addStrategy('pg-probe', 'development', { name: 'applicationHostname', parameters: { hostNames: 'h' } });
  ids.rollout = await addStrategy('pg-probe', 'development', {
    name: 'flexibleRollout',
    title: 'first',
    constraints: [
      { contextName: 'userId', operator: 'IN', values: ['u1', 'u2'], caseInsensitive: false, inverted: false },
      { contextName: 'currentTime', operator: 'DATE_AFTER', value: '2020-01-01T00:00:00.000Z' },
    ],
    parameters: { rollout: '100', stickiness: 'default', groupId: 'pg-probe' },
    segments: [segmentId],
    variants: [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'b' } }],
  });
  ids.production = await addStrategy('pg-probe', 'production', { name: 'default' });
  await adminOk('POST', `/api/admin/projects/${P}/features/pg-probe/environments/development/on`);
  ids.parent = await addStrategy('pg-parent', 'development', { name: 'default' });
  await adminOk('POST', `/api/admin/projects/${P}/features/pg-parent/environments/development/on`);
  ids.child = await addStrategy('pg-child', 'development', { name: 'default' });
  await adminOk('POST', `/api/admin/projects/${P}/features/pg-child/environments/development/on`);
  await adminOk('POST', `/api/admin/projects/${P}/features/pg-child/dependencies`, {
    feature: 'pg-parent',
    enabled: true,
    variants: ['nope'],
  });
});

const link = (feature: string, environment: string, id: string) =>
  `/projects/${P}/features/${feature}/strategies/edit?environmentId=${environment}&strategyId=${id}`;

const BLUE = { name: 'blue', weight: 1000, payload: { type: 'string', value: 'b' }, stickiness: 'default', weightType: 'variable' };

/** pg-probe's development strategies as 6.10.1 lists them, for a userId and region. */
function probeStrategies(userId: 'u1' | 'u3', region: 'eu' | 'us') {
  const rolloutOn = userId === 'u1' && region === 'eu';
  return [
    {
      name: 'userWithId',
      id: ids.userWithId,
      disabled: false,
      parameters: { userIds: 'u3' },
      result: { enabled: userId === 'u3', evaluationStatus: 'complete' },
      constraints: [],
      segments: [],
      links: { edit: link('pg-probe', 'development', ids.userWithId!) },
    },
    {
      name: 'default',
      id: ids.disabled,
      disabled: true,
      parameters: {},
      result: { enabled: 'unknown', evaluationStatus: 'unevaluated' },
      constraints: [],
      segments: [],
      links: { edit: link('pg-probe', 'development', ids.disabled!) },
    },
    {
      name: 'pgCustom',
      id: ids.custom,
      disabled: false,
      parameters: { p: '1' },
      result: { enabled: false, evaluationStatus: 'incomplete' },
      constraints: [{ inverted: false, values: ['x'], operator: 'IN', contextName: 'environment', result: false }],
      segments: [],
      links: { edit: link('pg-probe', 'development', ids.custom!) },
    },
    {
      name: 'applicationHostname',
      id: ids.hostname,
      disabled: false,
      parameters: { hostNames: 'h' },
      result: { enabled: 'unknown', evaluationStatus: 'incomplete' },
      constraints: [],
      segments: [],
      links: { edit: link('pg-probe', 'development', ids.hostname!) },
    },
    {
      name: 'flexibleRollout',
      id: ids.rollout,
      title: 'first',
      disabled: false,
      parameters: { groupId: 'pg-probe', rollout: '100', stickiness: 'default' },
      result: {
        enabled: rolloutOn,
        evaluationStatus: 'complete',
        variant: { name: 'blue', enabled: true, payload: { type: 'string', value: 'b' } },
        variants: [BLUE],
      },
      constraints: [
        { inverted: false, values: ['u1', 'u2'], operator: 'IN', contextName: 'userId', caseInsensitive: false, result: userId === 'u1' },
        {
          inverted: false,
          values: [],
          value: '2020-01-01T00:00:00.000Z',
          operator: 'DATE_AFTER',
          contextName: 'currentTime',
          result: true,
        },
      ],
      segments: [
        {
          name: segmentName,
          id: segmentId,
          result: region === 'eu',
          constraints: [
            { values: ['eu'], inverted: false, operator: 'IN', contextName: 'region', caseInsensitive: false, result: region === 'eu' },
          ],
        },
      ],
      links: { edit: link('pg-probe', 'development', ids.rollout!) },
    },
  ];
}
let segmentName = '';

async function playground(body: unknown) {
  return call('POST', '/api/admin/playground', { body });
}

describe('POST /api/admin/playground', () => {
  beforeAll(async () => {
    segmentName = (await bodyOf<{ name: string }>(await call('GET', `/api/admin/segments/${segmentId}`))).name;
  });

  it('answers each flag with its strategies, constraints, segments and variants, in 6.10.1 key order', async () => {
    const input = { environment: 'development', projects: [P], context: { appName: 'a', userId: 'u1', properties: { region: 'eu' } } };
    const response = await playground(input);
    expect(response.status).toBe(200);
    const text = await response.text();
    const body = JSON.parse(text);
    expect(Object.keys(body)).toEqual(['input', 'features']);
    expect(JSON.stringify(body.input)).toBe(JSON.stringify(input));
    expect(body.features.map((feature: { name: string }) => feature.name)).toEqual(['pg-parent', 'pg-probe', 'pg-child']);
    const [parent, probe, child] = body.features;
    expect(JSON.stringify(parent)).toBe(
      JSON.stringify({
        isEnabled: true,
        isEnabledInCurrentEnvironment: true,
        hasUnsatisfiedDependency: false,
        variant: { feature_enabled: true, featureEnabled: true, name: 'disabled', enabled: false },
        variants: [],
        name: 'pg-parent',
        projectId: P,
        strategies: {
          result: true,
          data: [
            {
              name: 'default',
              id: ids.parent,
              disabled: false,
              parameters: {},
              result: { enabled: true, evaluationStatus: 'complete' },
              constraints: [],
              segments: [],
              links: { edit: link('pg-parent', 'development', ids.parent!) },
            },
          ],
        },
      }),
    );
    expect(JSON.stringify(probe)).toBe(
      JSON.stringify({
        isEnabled: true,
        isEnabledInCurrentEnvironment: true,
        hasUnsatisfiedDependency: false,
        variant: { name: 'blue', enabled: true, payload: { type: 'string', value: 'b' }, feature_enabled: true },
        variants: [BLUE],
        name: 'pg-probe',
        projectId: P,
        strategies: { result: true, data: probeStrategies('u1', 'eu') },
      }),
    );
    expect(JSON.stringify(child)).toBe(
      JSON.stringify({
        isEnabled: false,
        isEnabledInCurrentEnvironment: true,
        hasUnsatisfiedDependency: true,
        variant: { name: 'disabled', enabled: false, feature_enabled: false },
        variants: [],
        name: 'pg-child',
        projectId: P,
        strategies: {
          result: true,
          data: [
            {
              name: 'default',
              id: ids.child,
              disabled: false,
              parameters: {},
              result: { enabled: true, evaluationStatus: 'complete' },
              constraints: [],
              segments: [],
              links: { edit: link('pg-child', 'development', ids.child!) },
            },
          ],
        },
      }),
    );
  });

  it('reports "unknown" when only an unknown strategy could be on, and the flag as off', async () => {
    const response = await playground({ environment: 'development', projects: [P], context: { appName: 'a', userId: 'u1', region: 'us' } });
    const probe = (await bodyOf(response)).features.find((feature: { name: string }) => feature.name === 'pg-probe');
    expect(probe.isEnabled).toBe(false);
    expect(probe.strategies.result).toBe('unknown');
    expect(probe.variant).toEqual({ name: 'disabled', enabled: false, feature_enabled: false });
    expect(JSON.stringify(probe.strategies.data)).toBe(JSON.stringify(probeStrategies('u1', 'us')));
  });

  it('evaluates the strategies of a disabled environment but answers the flag off', async () => {
    const response = await playground({ environment: 'production', projects: [P], context: { appName: 'a' } });
    const probe = (await bodyOf(response)).features.find((feature: { name: string }) => feature.name === 'pg-probe');
    expect(JSON.stringify(probe)).toBe(
      JSON.stringify({
        isEnabled: false,
        isEnabledInCurrentEnvironment: false,
        hasUnsatisfiedDependency: false,
        variant: { name: 'disabled', enabled: false, feature_enabled: false },
        variants: [],
        name: 'pg-probe',
        projectId: P,
        strategies: {
          result: true,
          data: [
            {
              name: 'default',
              id: ids.production,
              disabled: false,
              parameters: {},
              result: { enabled: true, evaluationStatus: 'complete' },
              constraints: [],
              segments: [],
              links: { edit: link('pg-probe', 'production', ids.production!) },
            },
          ],
        },
      }),
    );
  });

  it('lists every flag, off and without strategies, in an environment that does not exist', async () => {
    const body = await bodyOf(await playground({ environment: 'nope', projects: [P], context: { appName: 'a' } }));
    expect(body.features.map((feature: { name: string }) => feature.name)).toEqual(['pg-parent', 'pg-probe', 'pg-child']);
    for (const feature of body.features) {
      expect(feature).toMatchObject({
        isEnabled: false,
        isEnabledInCurrentEnvironment: false,
        // Its parent is off there.
        hasUnsatisfiedDependency: feature.name === 'pg-child',
        variant: { name: 'disabled', enabled: false, feature_enabled: false },
        variants: [],
        strategies: { result: false, data: [] },
      });
    }
  });

  it('limits the flags to the projects asked for ("*" or absent: all)', async () => {
    const none = await bodyOf(await playground({ environment: 'development', projects: [unique('nope')], context: { appName: 'a' } }));
    expect(none.features).toEqual([]);
    const all = await bodyOf(await playground({ environment: 'development', projects: '*', context: { appName: 'a' } }));
    expect(all.features.map((feature: { name: string }) => feature.name)).toEqual(expect.arrayContaining(['pg-parent', 'pg-probe']));
    const absent = await bodyOf(await playground({ environment: 'development', context: { appName: 'a' } }));
    expect(absent.features.length).toBe(all.features.length);
  });

  it('gives a feature variant by weight and names the environment variants', async () => {
    const name = unique('pg-var');
    await seedFlag({
      name,
      project: P,
      environments: {
        development: {
          enabled: true,
          strategies: [{ name: 'default' }],
          variants: [{ name: 'v1', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{}' } }],
        },
      },
    });
    const body = await bodyOf(await playground({ environment: 'development', projects: [P], context: { appName: 'a', userId: '7' } }));
    const feature = body.features.find((item: { name: string }) => item.name === name);
    expect(JSON.stringify(feature.variant)).toBe(
      JSON.stringify({ name: 'v1', payload: { type: 'json', value: '{}' }, enabled: true, feature_enabled: true, featureEnabled: true }),
    );
    // Keyed as 6.10.1 lists jsonb: shorter keys first.
    expect(JSON.stringify(feature.variants)).toBe(
      JSON.stringify([{ name: 'v1', weight: 1000, payload: { type: 'json', value: '{}' }, stickiness: 'default', weightType: 'variable' }]),
    );
  });

  it('refuses a body without the environment or the appName, and without a token', async () => {
    const noApp = await expectError(await playground({ environment: 'development', context: {} }), 400, 'BadDataError');
    expect(noApp.details).toEqual([
      {
        path: '/body/context/appName',
        message: 'The `/body/context/appName` property is required. It was not present on the data you sent.',
      },
    ]);
    const noEnvironment = await expectError(await playground({ context: { appName: 'a' } }), 400, 'BadDataError');
    expect(noEnvironment.details[0]).toEqual({
      path: '/body/environment',
      message: 'The `/body/environment` property is required. It was not present on the data you sent.',
    });
    await expectError(
      await call('POST', '/api/admin/playground', { token: null, body: { environment: 'x', context: { appName: 'a' } } }),
      401,
      'AuthenticationRequired',
    );
  });

  it('refuses SDK keys (an admin route)', async () => {
    const client = await createToken({ tokenName: unique('pg-client'), type: 'client', environment: 'development' });
    const response = await call('POST', '/api/admin/playground', {
      token: client,
      body: { environment: 'development', context: { appName: 'a' } },
    });
    expect(response.status).toBe(403);
  });

  it('writes nothing: no event, no change to the data revision', async () => {
    const before = await count('SELECT count(*) AS n FROM events');
    await playground({ environment: 'development', projects: [P], context: { appName: 'a' } });
    await call('POST', '/api/admin/playground/advanced', {
      body: { environments: ['development'], projects: [P], context: { appName: 'a' } },
    });
    expect(await count('SELECT count(*) AS n FROM events')).toBe(before);
  });
});

describe('POST /api/admin/playground/advanced', () => {
  it('evaluates every combination of comma-separated values in each environment, as 6.10.1 groups them', async () => {
    const input = {
      environments: ['development', 'production'],
      projects: [P],
      context: { appName: 'a', userId: 'u1,u3', x: 5, properties: { region: 'eu,us' } },
    };
    const response = await call('POST', '/api/admin/playground/advanced', { body: input });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['features', 'input', 'warnings']);
    expect(JSON.stringify(body.input)).toBe(JSON.stringify(input));
    expect(body.warnings).toEqual({ invalidContextProperties: ['x'] });
    const probe = body.features.find((feature: { name: string }) => feature.name === 'pg-probe');
    expect(Object.keys(probe)).toEqual(['name', 'projectId', 'environments']);
    expect(Object.keys(probe.environments)).toEqual(['development', 'production']);
    const contexts = [
      ['u1', 'eu'],
      ['u1', 'us'],
      ['u3', 'eu'],
      ['u3', 'us'],
    ] as const;
    expect(probe.environments.development).toHaveLength(4);
    contexts.forEach(([userId, region], index) => {
      const entry = probe.environments.development[index];
      const on = (userId === 'u1' && region === 'eu') || userId === 'u3';
      const strategyVariant = userId === 'u1' && region === 'eu';
      expect(JSON.stringify(entry)).toBe(
        JSON.stringify({
          isEnabled: on,
          isEnabledInCurrentEnvironment: true,
          hasUnsatisfiedDependency: false,
          variant: strategyVariant
            ? { name: 'blue', enabled: true, payload: { type: 'string', value: 'b' }, feature_enabled: true }
            : on
              ? { feature_enabled: true, featureEnabled: true, name: 'disabled', enabled: false }
              : { name: 'disabled', enabled: false, feature_enabled: false },
          context: { userId, region, appName: 'a' },
          variants: strategyVariant ? [BLUE] : [],
          name: 'pg-probe',
          environment: 'development',
          projectId: P,
          strategies: { result: on ? true : 'unknown', data: probeStrategies(userId, region) },
        }),
      );
    });
    for (const entry of probe.environments.production) {
      expect(entry).toMatchObject({
        isEnabled: false,
        isEnabledInCurrentEnvironment: false,
        environment: 'production',
        strategies: { result: true },
      });
    }
  });

  it('answers without warnings when every context field is text', async () => {
    const body = await bodyOf(
      await call('POST', '/api/admin/playground/advanced', {
        body: { environments: ['development'], projects: [P], context: { appName: 'a' } },
      }),
    );
    expect(Object.keys(body)).toEqual(['features', 'input']);
  });

  it("refuses more than 15000 evaluations with Unleash's message, before evaluating", async () => {
    const users = Array.from({ length: 5001 }, (_, index) => `u${index}`).join(',');
    const response = await call('POST', '/api/admin/playground/advanced', {
      body: { environments: ['development'], projects: [P], context: { appName: 'a', userId: users } },
    });
    const body = await expectError(response, 400, 'BadDataError');
    const flags = (await bodyOf(await playground({ environment: 'development', projects: [P], context: { appName: 'a' } }))).features
      .length;
    const reason = `Rejecting evaluation as it would generate ${5001 * flags} combinations exceeding 15000 limit. Please reduce the number of selected environments (1), features (${flags}), context field combinations (5001).`;
    expect(body.message).toBe(`Request validation failed: your request body or params contain invalid data: ${reason}`);
    expect(body.details).toEqual([{ message: reason }]);
  });

  it('refuses an empty environment list and a malformed environment name', async () => {
    const empty = await expectError(
      await call('POST', '/api/admin/playground/advanced', { body: { environments: [], context: { appName: 'a' } } }),
      400,
      'BadDataError',
    );
    expect(empty.details).toEqual([
      { path: '/body/environments', message: 'The `/body/environments` property must NOT have fewer than 1 items. You sent [].' },
    ]);
    const malformed = await expectError(
      await call('POST', '/api/admin/playground/advanced', { body: { environments: ['a b'], context: { appName: 'a' } } }),
      400,
      'BadDataError',
    );
    expect(malformed.details).toEqual([
      {
        path: '/body/environments/0',
        message: 'The `/body/environments/0` property must match pattern "^[a-zA-Z0-9~_.-]+$". You sent "a b".',
      },
    ]);
  });
});

const ROUNDS = 150;

describe('the playground and the frontend API agree', () => {
  let frontendKey: string;

  beforeAll(async () => {
    await createProject(R, ['development']);
    frontendKey = await createToken({ tokenName: unique('pg-fe'), type: 'frontend', environment: 'development', projects: [R] });
    const segment = await seedSegment(unique('pgr-seg'), [{ contextName: 'region', operator: 'IN', values: ['eu', 'asia'] }]);
    const variants = [
      { name: 'red', weight: 300, weightType: 'variable', stickiness: 'userId', payload: { type: 'string', value: 'R' } },
      {
        name: 'green',
        weight: 700,
        weightType: 'variable',
        stickiness: 'userId',
        overrides: [{ contextName: 'region', values: ['asia'] }],
      },
    ];
    const on = (strategies: unknown[], extra: Record<string, unknown> = {}) => ({
      development: { enabled: true, strategies: strategies as never, ...extra },
    });
    const flags = [
      { name: `${R}.users`, environments: on([{ name: 'userWithId', parameters: { userIds: '1, 2, 3, 5, 8' } }]) },
      {
        name: `${R}.rollout`,
        environments: on([{ name: 'flexibleRollout', parameters: { rollout: '40', stickiness: 'userId', groupId: 'g' } }]),
      },
      { name: `${R}.gradual-user`, environments: on([{ name: 'gradualRolloutUserId', parameters: { percentage: '50', groupId: 'h' } }]) },
      {
        name: `${R}.gradual-session`,
        environments: on([{ name: 'gradualRolloutSessionId', parameters: { percentage: '30', groupId: 'i' } }]),
      },
      { name: `${R}.remote`, environments: on([{ name: 'remoteAddress', parameters: { IPs: '10.0.0.1, 10.0.1.0/24' } }]) },
      {
        name: `${R}.constrained`,
        environments: on([
          { name: 'default', constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }] },
          { name: 'default', constraints: [{ contextName: 'userId', operator: 'NUM_GT', value: '6' }] },
        ]),
      },
      { name: `${R}.segmented`, environments: on([{ name: 'default', segments: [segment] }]) },
      {
        name: `${R}.custom`,
        environments: on([
          { name: 'pgCustom', parameters: {} },
          { name: 'userWithId', parameters: { userIds: '4' } },
        ]),
      },
      {
        name: `${R}.disabled-strategy`,
        environments: on([
          { name: 'default', disabled: true },
          { name: 'userWithId', parameters: { userIds: '2' } },
        ]),
      },
      {
        name: `${R}.feature-variants`,
        environments: on([{ name: 'flexibleRollout', parameters: { rollout: '70', stickiness: 'default', groupId: 'v' } }], { variants }),
      },
      {
        name: `${R}.strategy-variants`,
        environments: on([
          {
            name: 'flexibleRollout',
            parameters: { rollout: '80', stickiness: 'userId', groupId: 'sv' },
            variants: [
              { name: 'a', weight: 500, weightType: 'variable', stickiness: 'userId' },
              { name: 'b', weight: 500, weightType: 'variable', stickiness: 'userId', payload: { type: 'json', value: '{"b":1}' } },
            ],
          },
        ]),
      },
      { name: `${R}.off`, environments: { development: { enabled: false, strategies: [{ name: 'default' }] } } },
      { name: `${R}.no-strategies`, environments: { development: { enabled: true, strategies: [] } } },
    ];
    for (const flag of flags) await seedFlag({ ...flag, project: R });
    await seedFlag({ name: `${R}.child`, project: R, environments: on([{ name: 'default' }]), dependencies: [{ parent: `${R}.users` }] });
    await seedFlag({
      name: `${R}.child-off`,
      project: R,
      environments: on([{ name: 'default' }]),
      dependencies: [{ parent: `${R}.rollout`, enabled: false }],
    });
    await seedFlag({
      name: `${R}.child-variant`,
      project: R,
      environments: on([{ name: 'default' }]),
      dependencies: [{ parent: `${R}.feature-variants`, variants: ['red'] }],
    });
  });

  it(`on ${ROUNDS} random contexts, by the same flags and variants`, async () => {
    const next = seededRandom(20);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    let compared = 0;
    let enabledSeen = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const context: Record<string, unknown> = {
        appName: pick(['web', 'ios']),
        userId: String(Math.floor(next() * 12)),
        sessionId: `s${Math.floor(next() * 1000)}`,
        remoteAddress: pick(['10.0.0.1', '10.0.1.77', '10.0.2.1', '192.168.1.1']),
        properties: { region: pick(['eu', 'us', 'asia']) },
      };
      const front = await call('POST', '/api/frontend', { token: frontendKey, body: { context } });
      expect(front.status).toBe(200);
      const toggles = (await bodyOf<{ toggles: { name: string; variant: { name: string; enabled: boolean; payload?: unknown } }[] }>(front))
        .toggles;
      const played = await bodyOf(await playground({ environment: 'development', projects: [R], context }));
      const fromPlayground = played.features
        .filter((feature: { isEnabled: boolean }) => feature.isEnabled)
        .map((feature: { name: string; variant: { name: string; enabled: boolean; payload?: unknown } }) => ({
          name: feature.name,
          variant: { name: feature.variant.name, enabled: feature.variant.enabled, payload: feature.variant.payload },
        }));
      const fromFrontend = toggles.map((toggle) => ({
        name: toggle.name,
        variant: { name: toggle.variant.name, enabled: toggle.variant.enabled, payload: toggle.variant.payload },
      }));
      expect({ context, flags: fromPlayground }).toEqual({ context, flags: fromFrontend });
      // The overall strategy result agrees too wherever Unleash's rule can be applied.
      for (const feature of played.features) {
        if (feature.strategies.result !== 'unknown' && !feature.hasUnsatisfiedDependency)
          expect([feature.name, feature.isEnabled]).toEqual([
            feature.name,
            feature.strategies.result === true && feature.isEnabledInCurrentEnvironment,
          ]);
      }
      compared += played.features.length;
      enabledSeen += fromPlayground.length;
    }
    // Enough flags, and both answers, were seen for the comparison to mean something.
    expect(compared).toBe(ROUNDS * 16);
    expect(enabledSeen).toBeGreaterThan(ROUNDS * 3);
    expect(enabledSeen).toBeLessThan(ROUNDS * 14);
  });
});
