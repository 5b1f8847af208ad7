/** The reads that validate an import: the target, the features it names, the catalogue, segments and dependencies. */
import { sql } from 'drizzle-orm';
import type { ImportTarget } from '../plan';
import { prepare, rowsOf, runStatements } from './statements';

export interface TargetRows {
  project: {
    id: string;
    archivedAt: string | null;
    defaultStickiness: string;
    featureLimit: number | null;
    featureNamingPattern: string | null;
    featureNamingExample: string | null;
    featureNamingDescription: string | null;
  } | null;
  environmentExists: boolean;
  attached: boolean;
  defaultStrategy: unknown;
  activeFeatureCount: number;
  activeJob: string | null;
}

export async function readTarget(d1: D1Database, target: ImportTarget): Promise<TargetRows> {
  const results = await runStatements(d1, [
    prepare(
      d1,
      sql`SELECT id, archived_at, default_stickiness, feature_limit, feature_naming_pattern, feature_naming_example, feature_naming_description
      FROM projects WHERE id = ${target.project}`,
    ),
    prepare(d1, sql`SELECT name FROM environments WHERE name = ${target.environment}`),
    prepare(
      d1,
      sql`SELECT default_strategy FROM project_environments WHERE project_id = ${target.project} AND environment_name = ${target.environment}`,
    ),
    prepare(d1, sql`SELECT count(*) AS n FROM features WHERE project = ${target.project} AND archived_at IS NULL`),
    prepare(
      d1,
      sql`SELECT id FROM import_jobs WHERE project = ${target.project} AND environment = ${target.environment} AND status IN ('queued', 'running') LIMIT 1`,
    ),
  ]);
  const projectRows = rowsOf<{
    id: string;
    archived_at: string | null;
    default_stickiness: string;
    feature_limit: number | null;
    feature_naming_pattern: string | null;
    feature_naming_example: string | null;
    feature_naming_description: string | null;
  }>(results[0]);
  const envRows = rowsOf<{ name: string }>(results[1]);
  const attachRows = rowsOf<{ default_strategy: string | null }>(results[2]);
  const countRows = rowsOf<{ n: number }>(results[3]);
  const jobRows = rowsOf<{ id: string }>(results[4]);
  const project = projectRows[0];
  const attach = attachRows[0];
  let defaultStrategy: unknown = null;
  if (attach?.default_strategy) {
    try {
      defaultStrategy = JSON.parse(attach.default_strategy) as unknown;
    } catch {
      defaultStrategy = null;
    }
  }
  return {
    project: project
      ? {
          id: project.id,
          archivedAt: project.archived_at,
          defaultStickiness: project.default_stickiness,
          featureLimit: project.feature_limit,
          featureNamingPattern: project.feature_naming_pattern,
          featureNamingExample: project.feature_naming_example,
          featureNamingDescription: project.feature_naming_description,
        }
      : null,
    environmentExists: envRows.length > 0,
    attached: attach !== undefined,
    defaultStrategy,
    activeFeatureCount: countRows[0]?.n ?? 0,
    activeJob: jobRows[0]?.id ?? null,
  };
}

export interface ExistingFeature {
  name: string;
  project: string;
  archived: boolean;
  hasStrategies: boolean;
}

/** Names per lookup statement: the JSON array stays far below D1's 2 MB value limit. */
const NAMES_PER_LOOKUP = 10_000;

export async function readExistingFeatures(
  d1: D1Database,
  names: readonly string[],
  environment: string,
): Promise<Map<string, ExistingFeature>> {
  const found = new Map<string, ExistingFeature>();
  if (names.length === 0) return found;
  const lookups = [];
  for (let i = 0; i < names.length; i += NAMES_PER_LOOKUP) {
    const slice = JSON.stringify(names.slice(i, i + NAMES_PER_LOOKUP));
    lookups.push(
      prepare(
        d1,
        sql`
        SELECT f.name, f.project, f.archived_at IS NOT NULL AS archived,
          EXISTS (SELECT 1 FROM feature_strategies s WHERE s.feature_name = f.name AND s.environment = ${environment}) AS has_strategies
        FROM features f WHERE f.name IN (SELECT value FROM json_each(${slice}))`,
      ),
    );
  }
  const results = await runStatements(d1, lookups);
  for (const result of results) {
    for (const row of rowsOf<{ name: string; project: string; archived: number; has_strategies: number }>(result)) {
      found.set(row.name, { name: row.name, project: row.project, archived: row.archived === 1, hasStrategies: row.has_strategies === 1 });
    }
  }
  return found;
}

export interface Catalogue {
  strategies: Map<string, { builtIn: boolean }>;
  contextFields: Map<string, { legalValues: string[]; project: string | null }>;
  tagTypes: Set<string>;
}

/** What the elements are checked against while they stream in. */
export async function readCatalogue(d1: D1Database): Promise<Catalogue> {
  const results = await runStatements(d1, [
    prepare(d1, sql`SELECT name, built_in FROM strategies`),
    prepare(d1, sql`SELECT name, legal_values, project FROM context_fields`),
    prepare(d1, sql`SELECT name FROM tag_types`),
  ]);
  const strategyRows = rowsOf<{ name: string; built_in: number }>(results[0]);
  const contextRows = rowsOf<{ name: string; legal_values: string; project: string | null }>(results[1]);
  const tagTypeRows = rowsOf<{ name: string }>(results[2]);
  return {
    strategies: new Map(strategyRows.map((row) => [row.name, { builtIn: row.built_in === 1 }])),
    contextFields: new Map(contextRows.map((row) => [row.name, { legalValues: parseLegalValues(row.legal_values), project: row.project }])),
    tagTypes: new Set(tagTypeRows.map((row) => row.name)),
  };
}

export interface SegmentsAndDependencies {
  segmentsByName: Map<string, { id: number; project: string | null }[]>;
  dependencies: { parent: string; child: string }[];
}

/** The segments the payload names, and (when it has dependencies) the existing dependency graph. */
export async function readSegmentsAndDependencies(
  d1: D1Database,
  segmentNames: readonly string[],
  withDependencies: boolean,
): Promise<SegmentsAndDependencies> {
  const results = await runStatements(d1, [
    prepare(
      d1,
      sql`SELECT id, name, segment_project_id FROM segments WHERE name IN (SELECT value FROM json_each(${JSON.stringify(segmentNames)})) ORDER BY id`,
    ),
    withDependencies
      ? prepare(d1, sql`SELECT parent, child FROM dependent_features`)
      : prepare(d1, sql`SELECT NULL AS parent, NULL AS child WHERE false`),
  ]);
  const segmentRows = rowsOf<{ id: number; name: string; segment_project_id: string | null }>(results[0]);
  const segmentsByName = new Map<string, { id: number; project: string | null }[]>();
  for (const row of segmentRows) {
    const list = segmentsByName.get(row.name) ?? [];
    list.push({ id: row.id, project: row.segment_project_id });
    segmentsByName.set(row.name, list);
  }
  return { segmentsByName, dependencies: rowsOf<{ parent: string; child: string }>(results[1]) };
}

function parseLegalValues(text: string): string[] {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed)) return [];
    return parsed.flatMap((item: unknown) =>
      typeof item === 'object' && item !== null && 'value' in item && typeof item.value === 'string' ? [item.value] : [],
    );
  } catch {
    return [];
  }
}
