/**
 * Variant weights as Unleash computes them (checked on 6.10.1 and 8.2.0: three `variable`
 * variants given as c, b, a get c 334, b 333, a 333, listed by name; seven get 143 × 6 and 142),
 * and an import that keeps an equal split the source already made (a migration must not move
 * users: an export lists 333/334/333 by name, splitting again would make it 334/333/333).
 */
import { describe, expect, it } from 'vitest';
import { adminOk, createFeature } from './support/admin';
import { bodyOf, call } from './support/http';
import { payload } from './support/import';
import { unique } from './support/names';

const variant = (name: string, weight = 0, weightType = 'variable') => ({ name, weight, weightType, stickiness: 'default' });
const rollout = { rollout: '100', stickiness: 'default', groupId: 'g' };

async function strategyWeights(feature: string) {
  const flag = await bodyOf<{ environments: { name: string; strategies: { variants: { name: string; weight: number }[] }[] }[] }>(
    await adminOk('GET', `/api/admin/projects/default/features/${feature}`),
  );
  const development = flag.environments.find((environment) => environment.name === 'development')!;
  return development.strategies.map((strategy) => strategy.variants.map(({ name, weight }) => [name, weight]));
}

describe('variable variant weights', () => {
  it('the admin API splits as Unleash does: remainder to the first given, answered by name', async () => {
    const feature = unique('weights');
    await createFeature(feature);
    const path = `/api/admin/projects/default/features/${feature}/environments/development/strategies`;
    const three = await bodyOf<{ variants: { name: string; weight: number }[] }>(
      await adminOk('POST', path, { name: 'flexibleRollout', parameters: rollout, variants: ['c', 'b', 'a'].map((n) => variant(n)) }),
    );
    expect(three.variants.map(({ name, weight }) => [name, weight])).toEqual([
      ['a', 333],
      ['b', 333],
      ['c', 334],
    ]);
    const seven = await bodyOf<{ variants: { weight: number }[] }>(
      await adminOk('POST', path, {
        name: 'flexibleRollout',
        parameters: rollout,
        variants: ['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6'].map((n) => variant(n)),
      }),
    );
    expect(seven.variants.map(({ weight }) => weight)).toEqual([143, 143, 143, 143, 143, 143, 142]);
  });

  it('the import keeps an equal split as given, and splits any other list again', async () => {
    const kept = unique('kept');
    const split = unique('split');
    const response = await call('POST', '/api/admin/features-batch/import', {
      body: payload({
        features: [{ name: kept }, { name: split }],
        featureStrategies: [
          {
            name: 'flexibleRollout',
            featureName: kept,
            parameters: rollout,
            variants: [variant('a', 333), variant('b', 334), variant('c', 333)],
          },
          {
            name: 'flexibleRollout',
            featureName: split,
            parameters: rollout,
            variants: [variant('a', 100), variant('b', 900), variant('c', 0)],
          },
        ],
      }),
    });
    expect(response.status).toBe(200);
    expect(await strategyWeights(kept)).toEqual([
      [
        ['a', 333],
        ['b', 334],
        ['c', 333],
      ],
    ]);
    expect(await strategyWeights(split)).toEqual([
      [
        ['a', 334],
        ['b', 333],
        ['c', 333],
      ],
    ]);
  });
});
