/**
 * What a page of the flag search shows besides the names (environments with strategy flags,
 * tags, segments, lifecycle, metrics, favourites, dependencies), written once and read two ways:
 *
 * - `detailStatements`: one statement per list, for names already known (a JSON parameter);
 * - `pageWithDetails`: one statement for the page AND everything it shows: the page is a
 *   materialized CTE and every list comes back as one JSON array column. In local D1 each
 *   statement of a batch costs a few milliseconds whatever its SQL (10 statements were 20-30
 *   of a search's 30-45 ms at load 9, their SQL about 1.5 ms; bench/search/RESULTS.md), so one
 *   statement instead of two batches of ten is most of what a filtered search can save.
 */
import type { Fragment } from './query';

const IN_LIST = 'SELECT value FROM json_each(?)';

/** D1 refuses statements with more than 100 bound parameters. */
const MAX_BOUND_PARAMETERS = 100;

interface Detail {
  key: 'features' | 'environments' | 'tags' | 'segments' | 'lifecycle' | 'metrics' | 'favorites' | 'dependencies';
  /** The result columns, in order: the packed form is a JSON array of them per row. */
  columns: readonly string[];
  /** The statement, given the SQL that lists the page's names; its parameters in order. */
  sql: (names: string) => string;
  params: (names: unknown, userId: number, metricsSince: string) => unknown[];
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
    sql: (names) =>
      `SELECT f.name, f.type, f.description, f.project, f.stale, f.created_at, f.archived_at, f.impression_data, f.last_seen_at,
         f.created_by_user_id, u.id AS user_id, u.name AS user_name, u.username AS user_username, u.email AS user_email
       FROM features f LEFT JOIN users u ON u.id = f.created_by_user_id
       WHERE f.name IN (${names})`,
    params: (names) => [names],
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
    sql: (names) =>
      `SELECT fe.feature_name, e.name, e.type, e.sort_order, fe.enabled, json_array_length(fe.variants) AS variant_count, fe.last_seen_at,
         EXISTS (SELECT 1 FROM feature_strategies fs WHERE fs.feature_name = fe.feature_name AND fs.environment = fe.environment) AS has_strategies,
         EXISTS (SELECT 1 FROM feature_strategies fs WHERE fs.feature_name = fe.feature_name AND fs.environment = fe.environment AND fs.disabled = 0) AS has_enabled_strategies
       FROM feature_environments fe JOIN environments e ON e.name = fe.environment
       WHERE fe.feature_name IN (${names})
       ORDER BY e.sort_order, e.name`,
    params: (names) => [names],
  },
  {
    key: 'tags',
    columns: ['feature_name', 'tag_value', 'tag_type', 'color'],
    sql: (names) =>
      `SELECT ft.feature_name, ft.tag_value, ft.tag_type, tt.color
       FROM feature_tag ft LEFT JOIN tag_types tt ON tt.name = ft.tag_type
       WHERE ft.feature_name IN (${names})
       ORDER BY ft.rowid`,
    params: (names) => [names],
  },
  {
    key: 'segments',
    columns: ['feature_name', 'name'],
    sql: (names) =>
      `SELECT DISTINCT fs.feature_name, s.name
       FROM feature_strategies fs
       JOIN feature_strategy_segment fss ON fss.feature_strategy_id = fs.id
       JOIN segments s ON s.id = fss.segment_id
       WHERE fs.feature_name IN (${names})
       ORDER BY s.name`,
    params: (names) => [names],
  },
  {
    key: 'lifecycle',
    columns: ['feature', 'stage', 'status', 'created_at'],
    sql: (names) =>
      `SELECT feature, stage, status, created_at FROM feature_lifecycles WHERE feature IN (${names}) ORDER BY created_at, rowid`,
    params: (names) => [names],
  },
  {
    key: 'metrics',
    columns: ['feature_name', 'environment', 'yes', 'no'],
    sql: (names) =>
      `SELECT feature_name, environment, sum(yes) AS yes, sum(no) AS no FROM client_metrics_env
       WHERE feature_name IN (${names}) AND timestamp >= ? GROUP BY feature_name, environment`,
    params: (names, _userId, metricsSince) => [names, metricsSince],
  },
  {
    key: 'favorites',
    columns: ['feature'],
    sql: (names) => `SELECT feature FROM favorite_features WHERE user_id = ? AND feature IN (${names})`,
    params: (names, userId) => [userId, names],
  },
  {
    key: 'dependencies',
    columns: ['parent', 'child'],
    sql: (names) => `SELECT parent, child FROM dependent_features WHERE parent IN (${names}) OR child IN (${names})`,
    params: (names) => [names, names],
  },
];

type DetailKey = Detail['key'];
export type DetailRows = Record<DetailKey, Record<string, unknown>[]>;

/** Everything shown for a page of features, as statements for one batch (in DETAILS order). */
export function detailStatements(db: D1Database, names: readonly string[], userId: number, metricsSince: string): D1PreparedStatement[] {
  const list = JSON.stringify(names);
  return DETAILS.map((detail) => db.prepare(detail.sql(IN_LIST)).bind(...detail.params(list, userId, metricsSince)));
}

/** The batch results of `detailStatements`, by list. */
export function detailRows(results: readonly D1Result[]): DetailRows {
  return Object.fromEntries(DETAILS.map((detail, index) => [detail.key, results[index]!.results])) as DetailRows;
}

/**
 * One statement for a page and what it shows: `page` selects `name` (and, when `total` is
 * undefined, `total` on every row, as a windowed count does) in page order; `total` counts the
 * matches. Answers one row: `total`, `names` (a JSON array in page order) and one JSON array
 * of packed rows per list. Undefined when the parameters would pass D1's limit.
 */
export function pageWithDetails(
  db: D1Database,
  page: Fragment,
  total: Fragment | undefined,
  userId: number,
  metricsSince: string,
): D1PreparedStatement | undefined {
  const names = 'SELECT name FROM page';
  const lists = DETAILS.map((detail) => ({
    sql: `(SELECT json_group_array(json_array(${detail.columns.map((column) => `d.${column}`).join(', ')})) FROM (${detail.sql(names)}) d) AS ${detail.key}`,
    params: detail.params(undefined, userId, metricsSince).filter((param) => param !== undefined),
  }));
  const totalSql = total ? `(${total.sql})` : '(SELECT total FROM page LIMIT 1)';
  const params = [...page.params, ...(total?.params ?? []), ...lists.flatMap((list) => list.params)];
  if (params.length > MAX_BOUND_PARAMETERS) return undefined;
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
