/**
 * The shapes an import is staged and applied in. The request never holds the whole payload:
 * each element is validated as it streams in, normalised into a *staged* item that needs no
 * knowledge of the rest of the payload, and appended to the chunk of its feature. What does
 * depend on the whole payload or on the target (the project's default stickiness, segment ids
 * remapped by name, archived features to skip, the auto-strategy, new tag types and context
 * fields) is the job's `ImportContext`, bound into the chunk statements when they run.
 *
 * A chunk holds whole features (a feature with its strategies, environment settings and tags,
 * wherever in the body they came), so no write in one chunk depends on another chunk —
 * except dependencies, which go in chunks of their own applied once every feature chunk of
 * the job is done.
 */
import type { ConstraintDoc, LegalValueDoc, StrategyVariantDoc, VariantDoc } from '../../db/schema';

export interface StagedFeature {
  name: string;
  description: string | null;
  type: string;
  stale: boolean;
  impressionData: boolean;
  archived: boolean;
}

export interface StagedStrategy {
  /** Generated when the element is read, so a redelivered chunk writes the same rows. */
  id: string;
  featureName: string;
  name: string;
  title: string | null;
  /**
   * A flexibleRollout without `stickiness` carries `null` there: the project's default is
   * only known once the body has been read, and `json_set` fills it in place (key order kept).
   */
  parameters: Record<string, string | null>;
  constraints: ConstraintDoc[];
  variants: StrategyVariantDoc[];
  sortOrder: number;
  disabled: boolean;
  /** Segment ids as the payload numbers them; remapped to local ids by name when applied. */
  segments: number[];
}

export interface StagedEnvironment {
  featureName: string;
  enabled: boolean;
  /** Empty means "leave the stored variants as they are" (Unleash's rule). */
  variants: VariantDoc[];
  /** The id of the strategy added if the feature ends up enabled without an enabled strategy. */
  autoId?: string;
}

export interface StagedTag {
  featureName: string;
  type: string;
  value: string;
}

/**
 * A flag's links as the payload's `data.links` lists them (Unleash 7.0+): the flag's stored
 * links are replaced by these, so an entry with no links clears them. Ids are made when the
 * element is read, so a redelivered chunk writes the same rows.
 */
export interface StagedLinks {
  feature: string;
  links: { id: string; url: string; title: string | null; domain: string | null }[];
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

/** What enabling a feature with no enabled strategy adds (the project default, else a 100% rollout). */
export interface AutoStrategyTemplate {
  name: string;
  title: string | null;
  /** For a flexibleRollout, `groupId` is set to each feature's name in place. */
  parameters: Record<string, string>;
  constraints: ConstraintDoc[];
  variants: StrategyVariantDoc[];
}

export interface ImportTarget {
  project: string;
  environment: string;
}

/** Everything a chunk's statements need besides the chunk's own rows. */
export interface ImportContext extends ImportTarget {
  defaultStickiness: string;
  /** Payload segment id -> local segment id (matched by name). */
  segmentMap: Record<string, number>;
  /** Features left out because they are archived here (reported as a warning). */
  skip: string[];
  auto: AutoStrategyTemplate;
  /** Created if missing, by every feature chunk (idempotent), so that each chunk stands alone. */
  tagTypes: PreparedTagType[];
  contextFields: PreparedContextField[];
}

/** The arrays a chunk's rows come in; every element is a staged item as JSON text. */
export const PART_KEYS = ['features', 'strategies', 'environments', 'tags', 'links', 'dependencies'] as const;
export type PartKey = (typeof PART_KEYS)[number];
export type ChunkKind = 'features' | 'dependencies';

/** A chunk held in memory (the synchronous path): per array, the JSON text of each element. */
export type ChunkRows = Record<PartKey, string[]>;

export function emptyRows(): ChunkRows {
  return { features: [], strategies: [], environments: [], tags: [], links: [], dependencies: [] };
}

/** A part as stored: one JSON object of the arrays that have elements. */
export function partText(rows: ChunkRows): string {
  const fields: string[] = [];
  for (const key of PART_KEYS) if (rows[key].length > 0) fields.push(`"${key}":[${rows[key].join(',')}]`);
  return `{${fields.join(',')}}`;
}

/**
 * Chunk limits: features per chunk (one chunk is one D1 batch when applied), and what an
 * import may hold in memory before it is staged in D1 and queued instead of applied at once.
 */
export const CHUNK_FEATURES = 2_000;
export const SYNC_MAX_FEATURES = 2_000;
export const SYNC_MAX_BYTES = 1_800_000;
/** Dependencies per dependency chunk (each is a small row). */
export const DEPENDENCIES_PER_CHUNK = 5_000;
