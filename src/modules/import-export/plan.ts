/**
 * The validated, normalised form of an import, cut into self-contained chunks. A chunk holds
 * whole features (the feature with its strategies, environment settings and tags), so no
 * write in one chunk depends on another chunk — except dependencies, which go in chunks of
 * their own that are applied once every feature chunk of the job is done.
 */
import type { ConstraintDoc, LegalValueDoc, StrategyVariantDoc, VariantDoc } from '../../db/schema';

export interface PreparedFeature {
  name: string;
  description: string | null;
  type: string;
  stale: boolean;
  impressionData: boolean;
  archived: boolean;
}

export interface PreparedStrategy {
  /** Generated when the import is validated, so a redelivered chunk writes the same rows. */
  id: string;
  featureName: string;
  name: string;
  title: string | null;
  parameters: Record<string, string>;
  constraints: ConstraintDoc[];
  variants: StrategyVariantDoc[];
  sortOrder: number;
  disabled: boolean;
  /** Local segment ids (remapped by name). */
  segments: number[];
}

export interface PreparedEnvironment {
  featureName: string;
  enabled: boolean;
  /** Empty means "leave the stored variants as they are" (Unleash's rule). */
  variants: VariantDoc[];
}

export interface PreparedTag {
  featureName: string;
  type: string;
  value: string;
}

export interface PreparedDependency {
  child: string;
  parent: string;
  enabled: boolean;
  variants: string[];
}

export interface PreparedTagType {
  name: string;
  description: string | null;
  icon: string | null;
  color: string | null;
}

export interface PreparedContextField {
  name: string;
  description: string | null;
  stickiness: boolean;
  sortOrder: number;
  legalValues: LegalValueDoc[];
  project: string | null;
}

export interface ChunkPayload {
  kind: 'features' | 'dependencies';
  /** Repeated in every feature chunk (idempotent inserts), so each chunk stands alone. */
  tagTypes: PreparedTagType[];
  contextFields: PreparedContextField[];
  /** Features created or updated; their target-environment strategies and tags are replaced. */
  features: PreparedFeature[];
  strategies: PreparedStrategy[];
  environments: PreparedEnvironment[];
  /** Added when a feature is enabled with no enabled strategy (Unleash's auto-strategy). */
  autoStrategies: PreparedStrategy[];
  tags: PreparedTag[];
  dependencies: PreparedDependency[];
  /** Strategy-segment links, apart so that a chunk without segments costs nothing there. */
  segmentLinks: { strategyId: string; segmentId: number }[];
}

export interface ImportTarget {
  project: string;
  environment: string;
}

/**
 * Chunk limits: one chunk is one D1 batch and one stored row, and both a row and a bound
 * value must stay under D1's 2 MB; an import that fits one chunk is applied synchronously.
 */
export const MAX_CHUNK_FEATURES = 2_000;
export const MAX_CHUNK_BYTES = 1_800_000;
const MAX_DEPENDENCIES_PER_CHUNK = 5_000;

function emptyChunk(kind: ChunkPayload['kind'], tagTypes: PreparedTagType[], contextFields: PreparedContextField[]): ChunkPayload {
  return { kind, tagTypes, contextFields, features: [], strategies: [], environments: [], autoStrategies: [], tags: [], dependencies: [], segmentLinks: [] };
}

export interface FeatureSlice {
  name: string;
  feature: PreparedFeature | null;
  strategies: PreparedStrategy[];
  environment: PreparedEnvironment | null;
  autoStrategy: PreparedStrategy | null;
  tags: PreparedTag[];
}

export interface PreparedImport {
  tagTypes: PreparedTagType[];
  contextFields: PreparedContextField[];
  slices: FeatureSlice[];
  dependencies: PreparedDependency[];
  featureCount: number;
}

function sliceBytes(slice: FeatureSlice): number {
  return JSON.stringify(slice).length;
}

/**
 * Cuts a prepared import into chunks. `single` is true when everything fits one chunk
 * (dependencies included), which is the synchronous, all-or-nothing path.
 */
export function toChunks(prepared: PreparedImport): { chunks: ChunkPayload[]; single: boolean } {
  const sharedBytes = JSON.stringify(prepared.tagTypes).length + JSON.stringify(prepared.contextFields).length;
  const chunks: ChunkPayload[] = [];
  let current = emptyChunk('features', prepared.tagTypes, prepared.contextFields);
  let bytes = sharedBytes;
  let slicesInCurrent = 0;
  for (const slice of prepared.slices) {
    const size = sliceBytes(slice);
    if (slicesInCurrent > 0 && (slicesInCurrent >= MAX_CHUNK_FEATURES || bytes + size > MAX_CHUNK_BYTES)) {
      chunks.push(current);
      current = emptyChunk('features', prepared.tagTypes, prepared.contextFields);
      bytes = sharedBytes;
      slicesInCurrent = 0;
    }
    if (slice.feature) current.features.push(slice.feature);
    current.strategies.push(...slice.strategies);
    for (const strategy of slice.strategies) {
      for (const segmentId of strategy.segments) current.segmentLinks.push({ strategyId: strategy.id, segmentId });
    }
    if (slice.environment) current.environments.push(slice.environment);
    if (slice.autoStrategy) current.autoStrategies.push(slice.autoStrategy);
    current.tags.push(...slice.tags);
    bytes += size;
    slicesInCurrent++;
  }
  const dependencyBytes = JSON.stringify(prepared.dependencies).length;
  if (chunks.length === 0 && bytes + dependencyBytes <= MAX_CHUNK_BYTES && prepared.dependencies.length <= MAX_DEPENDENCIES_PER_CHUNK) {
    current.dependencies = prepared.dependencies;
    return { chunks: [current], single: true };
  }
  chunks.push(current);
  for (let i = 0; i < prepared.dependencies.length; i += MAX_DEPENDENCIES_PER_CHUNK) {
    const chunk = emptyChunk('dependencies', [], []);
    chunk.dependencies = prepared.dependencies.slice(i, i + MAX_DEPENDENCIES_PER_CHUNK);
    chunks.push(chunk);
  }
  return { chunks, single: false };
}
