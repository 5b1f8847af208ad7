/// <reference types="vite/client" />
/** The files of the official Unleash client-specification suite (npm @unleash/client-specification). */
import type { Context, Feature, Segment } from '../../src/sdk/evaluation/types';

export type DeltaEvent =
  | { type: 'hydration'; features: Feature[]; segments: Segment[] }
  | { type: 'feature-updated'; feature: Feature }
  | { type: 'feature-removed'; featureName: string }
  | { type: 'segment-updated'; segment: Segment }
  | { type: 'segment-removed'; segmentId: number };

export interface SpecState {
  features?: Feature[];
  segments?: Segment[];
  /** The two delta files ship their state as delta events instead. */
  events?: DeltaEvent[];
}

export interface SpecFile {
  name: string;
  state: SpecState;
  tests?: { description: string; context: Context; toggleName: string; expectedResult: boolean }[];
  variantTests?: {
    description: string;
    context: Context;
    toggleName: string;
    expectedResult: { name: string; enabled: boolean; feature_enabled: boolean; payload?: unknown };
  }[];
}

const files = import.meta.glob<SpecFile>('../../node_modules/@unleash/client-specification/specifications/*.json', {
  eager: true,
  import: 'default',
});

/** A specification file by its name in the suite's index. */
export function specFile(name: string): SpecFile {
  const file = files[`../../node_modules/@unleash/client-specification/specifications/${name}`];
  if (!file) throw new Error(`specification file ${name} not found`);
  return file;
}
