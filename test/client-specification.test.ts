/**
 * The official Unleash client-specification suite (npm @unleash/client-specification), run
 * against our evaluator: every test and variant test of every specification file, in the
 * order of its index. The two delta files ship their state as delta events; they are folded
 * into a state here the way an SDK applies them, so they run too.
 */
import { describe, expect, it } from 'vitest';
import index from '@unleash/client-specification/specifications/index.json';
import { Evaluator } from '../src/sdk/evaluation/engine';
import type { Feature, Segment } from '../src/sdk/evaluation/types';
import { specFile, type SpecFile } from './support/client-specification';

function stateOf(spec: SpecFile): { features: Feature[]; segments: Segment[] } {
  if (!spec.state.events) return { features: spec.state.features ?? [], segments: spec.state.segments ?? [] };
  const features = new Map<string, Feature>();
  const segments = new Map<number, Segment>();
  for (const event of spec.state.events) {
    if (event.type === 'hydration') {
      features.clear();
      segments.clear();
      for (const feature of event.features) features.set(feature.name, feature);
      for (const segment of event.segments) segments.set(segment.id, segment);
    } else if (event.type === 'feature-updated') features.set(event.feature.name, event.feature);
    else if (event.type === 'feature-removed') features.delete(event.featureName);
    else if (event.type === 'segment-updated') segments.set(event.segment.id, event.segment);
    else segments.delete(event.segmentId);
  }
  return { features: [...features.values()], segments: [...segments.values()] };
}

describe('@unleash/client-specification', () => {
  it('has the 22 specification files we expect', () => {
    expect(index).toHaveLength(22);
    let tests = 0;
    let variantTests = 0;
    for (const name of index) {
      tests += specFile(name).tests?.length ?? 0;
      variantTests += specFile(name).variantTests?.length ?? 0;
    }
    // The 6.1.0 suite: 227 isEnabled tests (4 of them in the delta files) and 52 variant tests.
    expect({ tests, variantTests }).toEqual({ tests: 227, variantTests: 52 });
  });

  for (const name of index) {
    const spec = specFile(name);
    describe(`${name}: ${spec.name}`, () => {
      const { features, segments } = stateOf(spec);
      const evaluator = new Evaluator(features, segments);
      for (const test of spec.tests ?? []) {
        it(`isEnabled: ${test.description}`, () => {
          expect(evaluator.isEnabled(test.toggleName, test.context)).toBe(test.expectedResult);
        });
      }
      for (const test of spec.variantTests ?? []) {
        it(`getVariant: ${test.description}`, () => {
          const expected = { ...test.expectedResult, featureEnabled: test.expectedResult.feature_enabled };
          expect(evaluator.getVariant(test.toggleName, test.context)).toEqual(expected);
        });
      }
    });
  }
});
