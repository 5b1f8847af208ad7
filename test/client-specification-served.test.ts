/**
 * The client-specification suite once more, end to end through our storage: each file's
 * state is written into D1, served by GET /api/client/features (as an SDK announcing spec
 * 5.2.0 gets it), and the served JSON is what gets evaluated. This checks that nothing the
 * SDKs rely on is lost or changed between the tables and the wire.
 *
 * Two kinds of state cannot exist in the database, because foreign keys forbid them: a
 * strategy linked to a segment that does not exist, and a dependency on a flag that does
 * not exist. Flags built on those are named below and stay covered by
 * client-specification.test.ts, which runs the states as given. The delta files are there too.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import index from '@unleash/client-specification/specifications/index.json';
import { Evaluator } from '../src/sdk/evaluation/engine';
import type { Feature, Segment } from '../src/sdk/evaluation/types';
import { bodyOf, call, createToken } from './support/http';
import { specFile } from './support/client-specification';
import { storeSpecState as store, unrepresentable } from './support/client-specification-store';

let clientToken: string;
beforeAll(async () => {
  clientToken = await createToken({ tokenName: 'spec-served', type: 'client', environment: 'development' });
});

const STATE_FILES = index.filter((name) => !specFile(name).state.events);

describe('client specification, served from D1 by /api/client/features', () => {
  it('leaves out only the flags the database cannot hold', () => {
    const skipped = STATE_FILES.flatMap((name) =>
      [...unrepresentable(specFile(name).state.features ?? [], specFile(name).state.segments ?? [])].map((flag) => `${name}: ${flag}`),
    );
    expect(skipped).toEqual([
      '15-global-constraints.json: F9.withMissingSegment',
      '17-dependent-features.json: parents.not.exist.child.enabled',
    ]);
  });

  for (const name of STATE_FILES) {
    it(`${name}: every test and variant test passes on the served payload`, async () => {
      const file = specFile(name);
      const features = file.state.features ?? [];
      const segments = file.state.segments ?? [];
      const skip = unrepresentable(features, segments);
      await store(features, segments, skip);
      const response = await call('GET', '/api/client/features', { token: clientToken, headers: { 'Unleash-Client-Spec': '5.2.0' } });
      expect(response.status).toBe(200);
      const served = await bodyOf<{ features: Feature[]; segments: Segment[] }>(response);
      expect(served.features.map((feature) => feature.name).sort()).toEqual(
        features
          .map((feature) => feature.name)
          .filter((flag) => !skip.has(flag))
          .sort(),
      );
      const evaluator = new Evaluator(served.features, served.segments);
      const tests = (file.tests ?? []).filter((test) => !skip.has(test.toggleName));
      expect(tests.map((test) => [test.description, evaluator.isEnabled(test.toggleName, test.context)])).toEqual(
        tests.map((test) => [test.description, test.expectedResult]),
      );
      const variantTests = (file.variantTests ?? []).filter((test) => !skip.has(test.toggleName));
      expect(variantTests.map((test) => [test.description, evaluator.getVariant(test.toggleName, test.context)])).toEqual(
        variantTests.map((test) => [test.description, { ...test.expectedResult, featureEnabled: test.expectedResult.feature_enabled }]),
      );
    });
  }
});
