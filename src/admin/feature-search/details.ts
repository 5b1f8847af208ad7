/**
 * What a page of the flag search shows besides the names (environments with strategy flags,
 * tags, segments, lifecycle, metrics, favourites, dependencies), read with the page in ONE
 * statement (`pageWithDetails`): the page is a materialized CTE and every list comes back as
 * one JSON array column. In local D1 each statement costs a few milliseconds whatever its SQL
 * (10 statements were 20-30 of a search's 30-45 ms at load 9, their SQL about 1.5 ms;
 * bench/search/RESULTS.md), so one statement instead of two batches of ten is most of what a
 * search can save.
 */
import type { Fragment } from './query';

/** The page's names (the `page` CTE of `pageWithDetails`). */
const NAMES = 'SELECT name FROM page';

/** D1 refuses statements with more than 100 bound parameters. */
const MAX_BOUND_PARAMETERS = 100;

interface Detail {
  key: 'features' | 'environments' | 'tags' | 'segments' | 'lifecycle' | 'metrics' | 'favorites' | 'dependencies';
  /** The result columns, in order: the packed form is a JSON array of them per row. */
  columns: readonly string[];
  /** The list's SELECT, over the page's names (`NAMES`), and its parameters in order. */
  sql: string;
  params?: (userId: number, metricsSince: string) => unknown[];
}

const DETAILS: readonly Detail[] = [
  {
    key: 'features',
    columns: [
      'name',
      'type',
      'description',
      'project',
      'stale',
      'created_at',
      'archived_at',
      'impression_data',
      'last_seen_at',
      'created_by_user_id',
      'user_id',
      'user_name',
      'user_username',
      'user_email',
    ],
    sql: `SELECT f.name, f.type, f.description, f.project, f.stale, f.created_at, f.archived_at, f.impression_data, f.last_seen_at,
         f.created_by_user_id, u.id AS user_id, u.name AS user_name, u.username AS user_username, u.email AS user_email
       FROM features f LEFT JOIN users u ON u.id = f.created_by_user_id
       WHERE f.name IN (${NAMES})`,
  },
  {
    key: 'environments',
    columns: [
      'feature_name',
      'name',
      'type',
      'sort_order',
      'enabled',
      'variant_count',
      'last_seen_at',
      'has_strategies',
      'has_enabled_strategies',
    ],
    sql: `SELECT fe.feature_name, e.name, e.type, e.sort_order, fe.enabled, json_array_length(fe.variants) AS variant_count, fe.last_seen_at,
         EXISTS (SELECT 1 FROM feature_strategies fs WHERE fs.feature_name = fe.feature_name AND fs.environment = fe.environment) AS has_strategies,
         EXISTS (SELECT 1 FROM feature_strategies fs WHERE fs.feature_name = fe.feature_name AND fs.environment = fe.environment AND fs.disabled = 0) AS has_enabled_strategies
       FROM feature_environments fe JOIN environments e ON e.name = fe.environment
       WHERE fe.feature_name IN (${NAMES})
       ORDER BY e.sort_order, e.name`,
  },
  {
    key: 'tags',
    columns: ['feature_name', 'tag_value', 'tag_type', 'color'],
    sql: `SELECT ft.feature_name, ft.tag_value, ft.tag_type, tt.color
       FROM feature_tag ft LEFT JOIN tag_types tt ON tt.name = ft.tag_type
       WHERE ft.feature_name IN (${NAMES})
       ORDER BY ft.rowid`,
  },
  {
    key: 'segments',
    columns: ['feature_name', 'name'],
    sql: `SELECT DISTINCT fs.feature_name, s.name
       FROM feature_strategies fs
       JOIN feature_strategy_segment fss ON fss.feature_strategy_id = fs.id
       JOIN segments s ON s.id = fss.segment_id
       WHERE fs.feature_name IN (${NAMES})
       ORDER BY s.name`,
  },
  {
    key: 'lifecycle',
    columns: ['feature', 'stage', 'status', 'created_at'],
    sql: `SELECT feature, stage, status, created_at FROM feature_lifecycles WHERE feature IN (${NAMES}) ORDER BY created_at, rowid`,
  },
  {
    key: 'metrics',
    columns: ['feature_name', 'environment', 'yes', 'no'],
    sql: `SELECT feature_name, environment, sum(yes) AS yes, sum(no) AS no FROM client_metrics_env
       WHERE feature_name IN (${NAMES}) AND timestamp >= ? GROUP BY feature_name, environment`,
    params: (_userId, metricsSince) => [metricsSince],
  },
  {
    key: 'favorites',
    columns: ['feature'],
    sql: `SELECT feature FROM favorite_features WHERE user_id = ? AND feature IN (${NAMES})`,
    params: (userId) => [userId],
  },
  {
    key: 'dependencies',
    columns: ['parent', 'child'],
    sql: `SELECT parent, child FROM dependent_features WHERE parent IN (${NAMES}) OR child IN (${NAMES})`,
  },
];

type DetailKey = Detail['key'];
export type DetailRows = Record<DetailKey, Record<string, unknown>[]>;

/**
 * One statement for a page and what it shows: `page` selects `name` (and, when `total` is
 * undefined, `total` on every row, as a windowed count does) in page order; `total` counts the
 * matches. Answers one row: `total`, `names` (a JSON array in page order) and one JSON array
 * of packed rows per list.
 */
export function pageWithDetails(
  db: D1Database,
  page: Fragment,
  total: Fragment | undefined,
  userId: number,
  metricsSince: string,
): D1PreparedStatement {
  const lists = DETAILS.map((detail) => ({
    sql: `(SELECT json_group_array(json_array(${detail.columns.map((column) => `d.${column}`).join(', ')})) FROM (${detail.sql}) d) AS ${detail.key}`,
    params: detail.params?.(userId, metricsSince) ?? [],
  }));
  const totalSql = total ? `(${total.sql})` : '(SELECT total FROM page LIMIT 1)';
  const params = [...page.params, ...(total?.params ?? []), ...lists.flatMap((list) => list.params)];
  // The plans keep well within it (the test searching with every filter at once shows each).
  if (params.length > MAX_BOUND_PARAMETERS)
    throw new Error(`feature search: ${params.length} bound parameters, D1 takes ${MAX_BOUND_PARAMETERS}`);
  return db
    .prepare(
      `WITH page AS MATERIALIZED (${page.sql})
       SELECT ${totalSql} AS total, (SELECT json_group_array(name) FROM page) AS names, ${lists.map((list) => list.sql).join(', ')}`,
    )
    .bind(...params);
}

/** The row of `pageWithDetails`: the total, the page's names and each list unpacked. */
export function unpackPage(row: Record<string, unknown>): { total: number; names: string[]; details: DetailRows } {
  const details = Object.fromEntries(
    DETAILS.map((detail) => [
      detail.key,
      (JSON.parse(row[detail.key] as string) as unknown[][]).map((values) =>
        Object.fromEntries(detail.columns.map((column, index) => [column, values[index]])),
      ),
    ]),
  ) as DetailRows;
  return { total: (row.total as number | null) ?? 0, names: JSON.parse(row.names as string) as string[], details };
}
