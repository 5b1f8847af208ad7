/**
 * Unleash 8 additions to what flags hold: IN_CIDR on every write path, as Unleash 8.3 added it
 * to the admin API (the client specification's `22-cidr-constraint-operators` flags go in
 * through the import, as a user would load them, and are served to SDKs so that the
 * specification's tests pass), and 8.0's `sunset` flag type.
 */
import { describe, expect, it } from 'vitest';
import { Evaluator } from '../src/sdk/evaluation/engine';
import type { Feature, Segment } from '../src/sdk/evaluation/types';
import { createFeature } from './support/admin';
import { specFile } from './support/client-specification';
import { bodyOf, call, createToken } from './support/http';
import { unique } from './support/names';

const CIDR = { contextName: 'remoteAddress', operator: 'IN_CIDR', values: ['10.0.0.0/8', '2001:db8::/32'] };

describe('IN_CIDR (Unleash 8.3)', () => {
  it('is accepted on a strategy, a segment and a strategy update, and stored as sent', async () => {
    const flag = unique('cidr-flag');
    await createFeature(flag);
    const path = `/api/admin/projects/default/features/${flag}/environments/development/strategies`;
    const created = await call('POST', path, { body: { name: 'default', constraints: [CIDR] } });
    expect(created.status).toBe(200);
    const strategy = await bodyOf(created);
    expect(strategy.constraints).toEqual([expect.objectContaining(CIDR)]);
    const inverted = { ...CIDR, inverted: true, values: ['192.168.0.0/16'] };
    const updated = await call('PUT', `${path}/${strategy.id}`, { body: { name: 'default', constraints: [inverted] } });
    expect(updated.status).toBe(200);
    expect((await bodyOf(updated)).constraints).toEqual([expect.objectContaining(inverted)]);
    const segment = await call('POST', '/api/admin/segments', { body: { name: unique('cidr-seg'), constraints: [CIDR] } });
    expect(segment.status).toBe(201);
    expect((await bodyOf(segment)).constraints).toEqual([expect.objectContaining(CIDR)]);
  });

  it('loads the specification’s 22-cidr-constraint-operators flags through the import and serves them to pass its tests', async () => {
    const file = specFile('22-cidr-constraint-operators.json');
    const features = file.state.features ?? [];
    const data = {
      features: features.map((feature) => ({ name: feature.name })),
      featureStrategies: features.flatMap((feature) =>
        (feature.strategies ?? []).map((strategy) => ({
          name: strategy.name,
          featureName: feature.name,
          parameters: strategy.parameters ?? {},
          constraints: strategy.constraints ?? [],
        })),
      ),
      featureEnvironments: features.map((feature) => ({ name: feature.name, featureName: feature.name, enabled: feature.enabled })),
      tagTypes: [],
    };
    const imported = await call('POST', '/api/admin/features-batch/import', {
      body: { project: 'default', environment: 'development', data },
    });
    expect(imported.status, await imported.clone().text()).toBe(200);

    const token = await createToken({ tokenName: unique('cidr-client'), type: 'client', environment: 'development' });
    const served = await bodyOf<{ features: Feature[]; segments: Segment[] }>(
      await call('GET', '/api/client/features', { token, headers: { 'Unleash-Client-Spec': '5.2.0' } }),
    );
    const names = new Set(features.map((feature) => feature.name));
    const evaluator = new Evaluator(
      served.features.filter((feature) => names.has(feature.name)),
      served.segments,
    );
    const tests = file.tests ?? [];
    expect(tests.length).toBeGreaterThan(0);
    expect(tests.map((test) => [test.description, evaluator.isEnabled(test.toggleName, test.context)])).toEqual(
      tests.map((test) => [test.description, test.expectedResult]),
    );
  });
});

describe('the sunset flag type (Unleash 8.0)', () => {
  it('is listed after 6.10.1’s five with 8.2.0’s text, and flags can be created with it and moved to it', async () => {
    const types = (await bodyOf(await call('GET', '/api/admin/feature-types'))).types;
    expect(types.at(-1)).toEqual({
      id: 'sunset',
      name: 'Sunset',
      description: 'Coordinate the planned removal of an existing feature. Expected lifetime: ~90 days',
      lifetimeDays: 90,
    });
    const created = await createFeature(unique('sunset-flag'), { type: 'sunset' });
    expect(created.type).toBe('sunset');
    const other = unique('sunset-later');
    await createFeature(other);
    expect((await call('PUT', `/api/admin/projects/default/features/${other}`, { body: { type: 'sunset' } })).status).toBe(200);
    expect((await bodyOf(await call('GET', `/api/admin/projects/default/features/${other}`))).type).toBe('sunset');
  });
});
