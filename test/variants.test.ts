/**
 * Feature and environment variants as Unleash 6.10.1 answers them with its default settings:
 * new environment variants are refused as deprecated (strategy variants replace them), the
 * feature-level PUT and the batch still write them, and PATCH takes a JSON Patch.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { signInAs } from './support/users';
import { maxEventId } from './support/import';
import { eventsSince, rows } from './support/db';
import { unique } from './support/names';

const P = '/api/admin/projects/default/features';
let viewer: string;

async function createFeature(name: string) {
  const response = await call('POST', P, { body: { name } });
  if (response.status !== 201) throw new Error(`create ${name}: ${response.status} ${await response.text()}`);
}

async function storedVariants(flag: string) {
  return (
    await rows<{ environment: string; variants: string }>(
      'SELECT environment, variants FROM feature_environments WHERE feature_name = ? ORDER BY environment',
      flag,
    )
  ).map((row) => [row.environment, JSON.parse(row.variants).map((variant: { name: string }) => variant.name)]);
}

const TWO = [
  { name: 'a', weight: 0, weightType: 'variable', stickiness: 'default' },
  { name: 'b', weight: 0, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'x' } },
];

beforeAll(async () => {
  viewer = await signInAs('Viewer');
});

describe('GET /api/admin/projects/:projectId/features/:featureName/variants', () => {
  it('answers an empty list for a new flag and 404 for an unknown one', async () => {
    const flag = unique('fv-get');
    await createFeature(flag);
    const response = await call('GET', `${P}/${flag}/variants`);
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({ version: 1, variants: [] });
    const missing = await expectError(await call('GET', `${P}/no-such-flag/variants`), 404, 'NotFoundError');
    expect(missing.message).toBeTypeOf('string');
  });
});

describe('PUT /api/admin/projects/:projectId/features/:featureName/variants', () => {
  it('sets balanced variants in every environment, with feature-variants-updated', async () => {
    const flag = unique('fv-put');
    await createFeature(flag);
    const before = await maxEventId();
    const response = await call('PUT', `${P}/${flag}/variants`, { body: TWO });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body).toEqual({
      version: 1,
      variants: [
        { name: 'a', weight: 500, weightType: 'variable', stickiness: 'default' },
        { name: 'b', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'x' } },
      ],
    });
    expect(await bodyOf(await call('GET', `${P}/${flag}/variants`))).toEqual(body);
    expect(await bodyOf(await call('GET', `${P}/${flag}/environments/production/variants`))).toEqual(body);
    const events = await eventsSince(before);
    expect(events.map((event) => event.type)).toEqual(['feature-variants-updated']);
    expect(JSON.parse(events[0]!.pre_data!)).toEqual({ variants: [] });
  });

  it('refuses bad weights (400), an unknown flag (404) and a viewer (403), writing nothing', async () => {
    const flag = unique('fv-put-bad');
    await createFeature(flag);
    const before = await maxEventId();
    const fixed = await expectError(
      await call('PUT', `${P}/${flag}/variants`, { body: [{ name: 'a', weight: 500, weightType: 'fix' }] }),
      400,
      'BadDataError',
    );
    expect(fixed.details[0]!.message).toContain('There must be at least one "variable" variant');
    await expectError(await call('PUT', `${P}/${flag}/variants`, { body: { x: 1 } }), 400, 'BadDataError');
    await expectError(await call('PUT', `${P}/no-such-flag/variants`, { body: TWO }), 404, 'NotFoundError');
    await expectError(await call('PUT', `${P}/${flag}/variants`, { token: viewer, body: TWO }), 403, 'NoAccessError');
    expect(await maxEventId()).toBe(before);
    expect(await storedVariants(flag)).toEqual([
      ['development', []],
      ['production', []],
    ]);
  });
});

describe('PUT /api/admin/projects/:projectId/features/:featureName/environments/:environment/variants', () => {
  it('refuses new environment variants as deprecated (403), pointing to strategy variants, and writes nothing', async () => {
    const flag = unique('fv-env-put');
    await createFeature(flag);
    const before = await maxEventId();
    const refused = await expectError(
      await call('PUT', `${P}/${flag}/environments/development/variants`, { body: TWO }),
      403,
      'InvalidOperationError',
    );
    expect(refused.message).toBe(`Environment variants deprecated for feature: ${flag}. Use strategy variants instead.`);
    expect(await maxEventId()).toBe(before);
    expect(await storedVariants(flag)).toEqual([
      ['development', []],
      ['production', []],
    ]);
  });
});

describe('PATCH /api/admin/projects/:projectId/features/:featureName/environments/:environment/variants', () => {
  it('is refused as deprecated (403) while the flag has no environment variants', async () => {
    const flag = unique('fv-env-patch-new');
    await createFeature(flag);
    const before = await maxEventId();
    await expectError(
      await call('PATCH', `${P}/${flag}/environments/development/variants`, {
        body: [{ op: 'add', path: '/0', value: { name: 'a', weight: 0, weightType: 'variable' } }],
      }),
      403,
      'InvalidOperationError',
    );
    expect(await maxEventId()).toBe(before);
  });

  it('applies the patch to one environment once the flag has variants, rebalancing weights', async () => {
    const flag = unique('fv-env-patch');
    await createFeature(flag);
    await call('PUT', `${P}/${flag}/variants`, { body: TWO });
    const before = await maxEventId();
    const response = await call('PATCH', `${P}/${flag}/environments/production/variants`, { body: [{ op: 'remove', path: '/0' }] });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({
      version: 1,
      variants: [{ name: 'b', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'x' } }],
    });
    expect(await storedVariants(flag)).toEqual([
      ['development', ['a', 'b']],
      ['production', ['b']],
    ]);
    const events = await eventsSince(before);
    expect(events.map((event) => [event.type, event.environment])).toEqual([['feature-environment-variants-updated', 'production']]);
  });

  it('refuses a patch that cannot be applied or leaves invalid variants (400), writing nothing', async () => {
    const flag = unique('fv-env-patch-bad');
    await createFeature(flag);
    await call('PUT', `${P}/${flag}/variants`, { body: TWO });
    const before = await maxEventId();
    const path = `${P}/${flag}/environments/development/variants`;
    const unapplied = await expectError(
      await call('PATCH', path, { body: [{ op: 'replace', path: '/9/name', value: 'z' }] }),
      400,
      'BadDataError',
    );
    expect(unapplied.message).toContain('Could not apply provided patch');
    await expectError(await call('PATCH', path, { body: [{ op: 'replace', path: '/0/weight', value: 'heavy' }] }), 400, 'BadDataError');
    await expectError(await call('PATCH', path, { body: [{ op: 'jump', path: '/0' }] }), 400, 'BadDataError');
    await expectError(await call('PATCH', path, { token: viewer, body: [{ op: 'remove', path: '/0' }] }), 403, 'NoAccessError');
    expect(await maxEventId()).toBe(before);
    expect(await storedVariants(flag)).toEqual([
      ['development', ['a', 'b']],
      ['production', ['a', 'b']],
    ]);
  });
});

describe('PATCH /api/admin/projects/:projectId/features/:featureName/variants', () => {
  it('applies the patch in every environment and answers the first one’s variants', async () => {
    const flag = unique('fv-patch');
    await createFeature(flag);
    await call('PUT', `${P}/${flag}/variants`, { body: TWO });
    const before = await maxEventId();
    const response = await call('PATCH', `${P}/${flag}/variants`, { body: [{ op: 'replace', path: '/0/name', value: 'c' }] });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    // Renamed, then sorted by name as Unleash 6.10.1 answers the same patch.
    expect(body.variants.map((variant: { name: string }) => variant.name)).toEqual(['b', 'c']);
    expect(await storedVariants(flag)).toEqual([
      ['development', ['b', 'c']],
      ['production', ['b', 'c']],
    ]);
    expect((await eventsSince(before)).map((event) => event.type)).toEqual([
      'feature-environment-variants-updated',
      'feature-environment-variants-updated',
    ]);
  });

  it('is refused as deprecated (403) for a flag without environment variants, and 403 for a viewer', async () => {
    const flag = unique('fv-patch-new');
    await createFeature(flag);
    const before = await maxEventId();
    const refused = await expectError(
      await call('PATCH', `${P}/${flag}/variants`, { body: [{ op: 'add', path: '/0', value: { name: 'a', weight: 0 } }] }),
      403,
      'InvalidOperationError',
    );
    expect(refused.message).toBe(`Environment variants deprecated for feature: ${flag}. Use strategy variants instead.`);
    await expectError(await call('PATCH', `${P}/${flag}/variants`, { token: viewer, body: [] }), 403, 'NoAccessError');
    expect(await maxEventId()).toBe(before);
  });
});

describe('PUT /api/admin/projects/:projectId/features/:featureName/variants-batch', () => {
  it('sets the same variants in the environments named, with one event each', async () => {
    const flag = unique('fv-batch');
    await createFeature(flag);
    const before = await maxEventId();
    const response = await call('PUT', `${P}/${flag}/variants-batch`, {
      body: {
        environments: ['development'],
        variants: [
          { name: 'a', weight: 0 },
          { name: 'b', weight: 0 },
        ],
      },
    });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({
      version: 1,
      variants: [
        { name: 'a', weight: 500, weightType: 'variable', stickiness: 'default' },
        { name: 'b', weight: 500, weightType: 'variable', stickiness: 'default' },
      ],
    });
    expect(await storedVariants(flag)).toEqual([
      ['development', ['a', 'b']],
      ['production', []],
    ]);
    expect((await eventsSince(before)).map((event) => [event.type, event.environment])).toEqual([
      ['feature-environment-variants-updated', 'development'],
    ]);
  });

  it('refuses no environments (400), an unknown environment (404) and a viewer (403), writing nothing', async () => {
    const flag = unique('fv-batch-bad');
    await createFeature(flag);
    const before = await maxEventId();
    const none = await expectError(
      await call('PUT', `${P}/${flag}/variants-batch`, { body: { environments: [], variants: TWO } }),
      400,
      'BadDataError',
    );
    expect(none.details[0]!.message).toBe('No environments provided');
    await expectError(
      await call('PUT', `${P}/${flag}/variants-batch`, { body: { environments: ['nowhere'], variants: TWO } }),
      404,
      'NotFoundError',
    );
    await expectError(
      await call('PUT', `${P}/${flag}/variants-batch`, { token: viewer, body: { environments: ['development'], variants: TWO } }),
      403,
      'NoAccessError',
    );
    expect(await maxEventId()).toBe(before);
    expect(await storedVariants(flag)).toEqual([
      ['development', []],
      ['production', []],
    ]);
  });
});
