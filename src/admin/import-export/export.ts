/**
 * Export in the import's `data` shape, so an export can be imported elsewhere unchanged.
 * `featureEnvironments[].enabled` is the feature's real state in the environment (8.2.0),
 * not the environment's own flag (6.10.1's bug, which switched every flag on after a round
 * trip).
 */
import { sql, type SQL } from 'drizzle-orm';
import type { ConstraintDoc, LegalValueDoc, StrategyVariantDoc } from '../../db/schema';
import { notFound } from '../../http/errors';
import type { ExportRequest } from './schema';
import { prepare, rowsOf, runStatements } from './store/statements';

interface ExportedStrategy {
  name: string;
  id: string;
  featureName: string;
  title: string | null;
  parameters: Record<string, string>;
  constraints: ConstraintDoc[];
  variants: StrategyVariantDoc[];
  disabled: boolean;
  segments: number[];
  sortOrder: number;
}

function parseJson<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

export async function exportFeatures(d1: D1Database, query: ExportRequest) {
  const envRow = await prepare(d1, sql`SELECT name FROM environments WHERE name = ${query.environment}`).first();
  if (envRow === null) throw notFound(`Could not find environment with name: ${query.environment}`);
  const environment = query.environment;

  // Which flags, in Unleash's order of precedence: a tag's flags; else the named ones; else
  // the project's (the UI's "Export all project flags" sends `features: []` with the
  // project); else every flag.
  const filters: SQL[] = [sql`f.archived_at IS NULL`];
  if (query.tag) {
    const at = query.tag.indexOf(':');
    const type = query.tag.slice(0, at);
    const value = query.tag.slice(at + 1);
    filters.push(
      sql`EXISTS (SELECT 1 FROM feature_tag t WHERE t.feature_name = f.name AND t.tag_type = ${type} AND t.tag_value = ${value})`,
    );
  } else if (query.features && query.features.length > 0) {
    filters.push(sql`f.name IN (SELECT value FROM json_each(${JSON.stringify(query.features)}))`);
  } else if (query.project) {
    filters.push(sql`f.project = ${query.project}`);
  }
  const selected = sql`SELECT f.name FROM features f WHERE ${sql.join(filters, sql` AND `)}`;

  const first = await runStatements(d1, [
    prepare(
      d1,
      sql`SELECT name, description, type, project, stale, impression_data FROM features WHERE name IN (${selected}) ORDER BY name`,
    ),
    prepare(
      d1,
      sql`SELECT feature_name, enabled, variants FROM feature_environments WHERE environment = ${environment} AND feature_name IN (${selected}) ORDER BY feature_name`,
    ),
    prepare(
      d1,
      sql`SELECT id, feature_name, strategy_name, title, parameters, constraints, variants, disabled, sort_order FROM feature_strategies
        WHERE environment = ${environment} AND feature_name IN (${selected}) ORDER BY feature_name, sort_order, created_at, id`,
    ),
    prepare(
      d1,
      sql`SELECT l.feature_strategy_id, l.segment_id, s.name FROM feature_strategy_segment l JOIN segments s ON s.id = l.segment_id
        JOIN feature_strategies fs ON fs.id = l.feature_strategy_id
        WHERE fs.environment = ${environment} AND fs.feature_name IN (${selected}) ORDER BY l.segment_id`,
    ),
    prepare(
      d1,
      sql`SELECT feature_name, tag_type, tag_value FROM feature_tag WHERE feature_name IN (${selected}) ORDER BY feature_name, tag_type, tag_value`,
    ),
    prepare(d1, sql`SELECT parent, child, enabled, variants FROM dependent_features WHERE child IN (${selected}) ORDER BY child, parent`),
    prepare(d1, sql`SELECT id, feature_name, url, title FROM feature_links WHERE feature_name IN (${selected}) ORDER BY id`),
  ]);
  const featureRows = rowsOf<{
    name: string;
    description: string | null;
    type: string;
    project: string;
    stale: number;
    impression_data: number;
  }>(first[0]);
  const environmentRows = rowsOf<{ feature_name: string; enabled: number; variants: string }>(first[1]);
  const strategyRows = rowsOf<{
    id: string;
    feature_name: string;
    strategy_name: string;
    title: string | null;
    parameters: string;
    constraints: string;
    variants: string;
    disabled: number;
    sort_order: number;
  }>(first[2]);
  const segmentLinks = rowsOf<{ feature_strategy_id: string; segment_id: number; name: string }>(first[3]);
  const tagRows = rowsOf<{ feature_name: string; tag_type: string; tag_value: string }>(first[4]);
  const dependencyRows = rowsOf<{ parent: string; child: string; enabled: number; variants: string }>(first[5]);
  const linkRows = rowsOf<{ id: string; feature_name: string; url: string; title: string | null }>(first[6]);

  const segmentsByStrategy = new Map<string, number[]>();
  const segments = new Map<number, { id: number; name: string }>();
  for (const link of segmentLinks) {
    const list = segmentsByStrategy.get(link.feature_strategy_id) ?? [];
    list.push(link.segment_id);
    segmentsByStrategy.set(link.feature_strategy_id, list);
    segments.set(link.segment_id, { id: link.segment_id, name: link.name });
  }

  const featureStrategies: ExportedStrategy[] = strategyRows.map((row) => ({
    name: row.strategy_name,
    id: row.id,
    featureName: row.feature_name,
    title: row.title,
    parameters: parseJson<Record<string, string>>(row.parameters, {}),
    constraints: parseJson<ConstraintDoc[]>(row.constraints, []),
    variants: parseJson<StrategyVariantDoc[]>(row.variants, []),
    disabled: row.disabled === 1,
    segments: segmentsByStrategy.get(row.id) ?? [],
    sortOrder: row.sort_order,
  }));

  const contextNames = new Set<string>();
  for (const strategy of featureStrategies) {
    for (const constraint of strategy.constraints) {
      if (
        typeof constraint === 'object' &&
        constraint !== null &&
        'contextName' in constraint &&
        typeof constraint.contextName === 'string'
      ) {
        contextNames.add(constraint.contextName);
      }
    }
  }
  const tagTypeNames = [...new Set(tagRows.map((row) => row.tag_type))];
  const second = await runStatements(d1, [
    prepare(
      d1,
      sql`SELECT name, description, stickiness, sort_order, legal_values FROM context_fields
        WHERE name IN (SELECT value FROM json_each(${JSON.stringify([...contextNames])})) ORDER BY name`,
    ),
    prepare(
      d1,
      sql`SELECT name, description, icon FROM tag_types WHERE name IN (SELECT value FROM json_each(${JSON.stringify(tagTypeNames)})) ORDER BY name`,
    ),
  ]);
  const contextRows = rowsOf<{ name: string; description: string | null; stickiness: number; sort_order: number; legal_values: string }>(
    second[0],
  );
  const tagTypeRows = rowsOf<{ name: string; description: string | null; icon: string | null }>(second[1]);

  const dependencies: { feature: string; dependencies: { feature: string; enabled: boolean; variants: string[] }[] }[] = [];
  for (const row of dependencyRows) {
    let entry = dependencies[dependencies.length - 1];
    if (!entry || entry.feature !== row.child) {
      entry = { feature: row.child, dependencies: [] };
      dependencies.push(entry);
    }
    entry.dependencies.push({ feature: row.parent, enabled: row.enabled === 1, variants: parseJson<string[]>(row.variants, []) });
  }

  return {
    features: featureRows.map((row) => ({
      name: row.name,
      description: row.description,
      type: row.type,
      project: row.project,
      stale: row.stale === 1,
      impressionData: row.impression_data === 1,
      archived: false,
    })),
    featureStrategies,
    featureEnvironments: environmentRows.map((row) => ({
      enabled: row.enabled === 1,
      featureName: row.feature_name,
      environment,
      variants: parseJson<StrategyVariantDoc[]>(row.variants, []),
      name: environment,
    })),
    contextFields: contextRows.map((row) => ({
      name: row.name,
      description: row.description,
      stickiness: row.stickiness === 1,
      sortOrder: row.sort_order,
      legalValues: parseJson<LegalValueDoc[]>(row.legal_values, []),
    })),
    featureTags: tagRows.map((row) => ({ featureName: row.feature_name, tagType: row.tag_type, tagValue: row.tag_value })),
    segments: [...segments.values()].sort((a, b) => a.id - b.id),
    tagTypes: tagTypeRows.map((row) => ({ name: row.name, description: row.description, icon: row.icon })),
    dependencies,
    links: groupLinks(linkRows),
  };
}

/** An array index as a JavaScript object key (`"0"`, `"42"`): such keys come first, in numeric order. */
const INDEX_KEY = /^(0|[1-9]\d*)$/;

/**
 * `links` as 8.2.0 exports them: the flags with links, each with its links in creation order.
 * Unleash groups the links (read in id order) into an object keyed by flag name, so the flags
 * come in the order of their first link, except names that are array indexes, which come
 * first in numeric order, as a JavaScript object lists its keys.
 */
function groupLinks(rows: { id: string; feature_name: string; url: string; title: string | null }[]) {
  const byFeature = new Map<string, { id: string; url: string; title: string | null }[]>();
  for (const row of rows) {
    const list = byFeature.get(row.feature_name) ?? [];
    list.push({ id: row.id, url: row.url, title: row.title });
    byFeature.set(row.feature_name, list);
  }
  const isIndex = (name: string) => INDEX_KEY.test(name) && Number(name) < 2 ** 32 - 1;
  const names = [...byFeature.keys()];
  const ordered = [...names.filter(isIndex).sort((a, b) => Number(a) - Number(b)), ...names.filter((name) => !isIndex(name))];
  return ordered.map((feature) => ({ feature, links: byFeature.get(feature)! }));
}
