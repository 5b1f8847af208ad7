/**
 * The search's plan: the total and the page of names, as SQL that details.ts reads with
 * everything the page shows in one statement. Lists travel as one JSON parameter read with
 * `json_each`, so no statement comes near D1's 100 bound parameters (text terms, at most 20,
 * are the only per-item parameters).
 */
import type { SearchParams } from './params';

export interface Fragment {
  sql: string;
  params: unknown[];
}

const IN_LIST = 'SELECT value FROM json_each(?)';
const PAIRS = "SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)";
/**
 * Joins that start from a filter's matches must look each feature up by name. Without
 * statistics SQLite may instead pick an index on another filtered column (project, type) and
 * scan it once per match, so the name index is named outright.
 */
const BY_NAME = 'features f INDEXED BY features_name_archived_idx';
const LATEST_STAGE = `(SELECT fl.stage FROM feature_lifecycles fl WHERE fl.feature = f.name ORDER BY fl.created_at DESC, fl.rowid DESC LIMIT 1)`;

function isInclusion(operator: string): boolean {
  return operator === 'IS' || operator === 'IS_ANY_OF';
}

/** project/type/createdBy: the column is (not) in the list. */
function listCondition(column: string, filter: { operator: string; values: unknown[] }): Fragment {
  const inclusion = isInclusion(filter.operator);
  const values = [...new Set(filter.values)];
  // A single value as `=` lets SQLite pick the column's index with confidence.
  if (values.length === 1) return { sql: `${column} ${inclusion ? '=' : '!='} ?`, params: values };
  return { sql: `${column} ${inclusion ? '' : 'NOT '}IN (${IN_LIST})`, params: [JSON.stringify(values)] };
}

/**
 * `state`: a feature is `stale` when stale, `potentially-stale` when not stale but flagged
 * by the job, `active` when not stale; any other value means stale (as Unleash reads it).
 */
function stateCondition(filter: { operator: string; values: string[] }): Fragment {
  const predicates = [...new Set(filter.values)].map((value) => {
    if (value === 'active') return 'f.stale = 0';
    if (value === 'potentially-stale') return '(f.stale = 0 AND f.potentially_stale = 1)';
    return 'f.stale = 1';
  });
  const any = `(${predicates.join(' OR ')})`;
  return { sql: isInclusion(filter.operator) ? any : `NOT ${any}`, params: [] };
}

/**
 * A filter condition on `f`. Inclusive set filters also name their matches as a subquery of
 * distinct feature names (`names`), which the count can start from instead of visiting every
 * feature: SQLite, without statistics, would otherwise walk the archived_at index.
 */
interface Condition extends Fragment {
  names?: Fragment;
  /** The same test correlated on `f`, cheap for a handful of rows (see `countOf`). */
  correlated?: Fragment;
}

function included(names: Fragment, correlated?: Fragment): Condition {
  return { sql: `f.name IN (${names.sql})`, params: names.params, names, correlated };
}

/** Tag and segment set operators over a subquery that lists (feature, matched item). */
function setCondition(
  operator: string,
  matches: string,
  distinctItem: string,
  params: unknown[],
  wanted: number,
  correlatedAny?: string,
): Condition {
  const any = `SELECT DISTINCT feature FROM (${matches})`;
  const all = `SELECT feature FROM (${matches}) GROUP BY feature HAVING count(DISTINCT ${distinctItem}) = ?`;
  switch (operator) {
    case 'INCLUDE':
    case 'INCLUDE_ANY_OF':
      return included({ sql: any, params }, correlatedAny === undefined ? undefined : { sql: correlatedAny, params });
    case 'DO_NOT_INCLUDE':
    case 'EXCLUDE_IF_ANY_OF':
      return { sql: `f.name NOT IN (${any})`, params };
    case 'INCLUDE_ALL_OF':
      return included({ sql: all, params: [...params, wanted] });
    default:
      return { sql: `f.name NOT IN (${all})`, params: [...params, wanted] };
  }
}

/** The archived/lifecycle pair, which Unleash treats together (unleash-behaviour §5.5). */
function archivedAndLifecycle(params: SearchParams, unindexed: boolean): Fragment {
  // `+` keeps SQLite off the archived_at index where a scan or another index is cheaper.
  const column = unindexed ? '+f.archived_at' : 'f.archived_at';
  const archivedOnly = `${column} IS NOT NULL`;
  const activeOnly = `${column} IS NULL`;
  const lifecycle = params.lifecycle;
  if (!lifecycle) return { sql: params.archived ? archivedOnly : activeOnly, params: [] };
  const stages = [...new Set(lifecycle.values)];
  const mentionsArchived = stages.includes('archived');
  const others = JSON.stringify(stages.filter((stage) => stage !== 'archived'));
  if (isInclusion(lifecycle.operator)) {
    if (params.archived) {
      return mentionsArchived
        ? { sql: archivedOnly, params: [] }
        : { sql: `${archivedOnly} AND ${LATEST_STAGE} IN (${IN_LIST})`, params: [others] };
    }
    const active = `(${activeOnly} AND ${LATEST_STAGE} IN (${IN_LIST}))`;
    return mentionsArchived ? { sql: `(${active} OR ${archivedOnly})`, params: [others] } : { sql: active, params: [others] };
  }
  if (params.archived && !mentionsArchived) return { sql: archivedOnly, params: [] };
  return { sql: `${activeOnly} AND ${LATEST_STAGE} IS NOT NULL AND ${LATEST_STAGE} NOT IN (${IN_LIST})`, params: [JSON.stringify(stages)] };
}

/** Production D1 refuses LIKE patterns longer than 50 bytes. */
const MAX_LIKE_PATTERN_BYTES = 50;

/**
 * "Any of `columns` contains `term`", case-insensitively, with `%` and `_` taken literally.
 * LIKE is about twice as fast as instr(lower(..)) over a full scan, so it is used whenever
 * the escaped pattern fits D1's limit; longer terms fall back to instr.
 */
function containsTerm(term: string, columns: readonly string[]): Fragment {
  const pattern = `%${term.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
  if (new TextEncoder().encode(pattern).length <= MAX_LIKE_PATTERN_BYTES) {
    return { sql: `(${columns.map((column) => `${column} LIKE ? ESCAPE '\\'`).join(' OR ')})`, params: columns.map(() => pattern) };
  }
  const lowered = term.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
  return { sql: `(${columns.map((column) => `instr(lower(${column}), ?) > 0`).join(' OR ')})`, params: columns.map(() => lowered) };
}

function conditions(params: SearchParams, userId: number, unindexedArchived = false): Condition[] {
  const parts: Condition[] = [archivedAndLifecycle(params, unindexedArchived)];
  if (params.query.length > 0) {
    // Each term is a literal substring (no wildcards), matched case-insensitively (ASCII, as
    // SQLite folds case) against name, description or any tag value; any term may match.
    const terms = [...new Set(params.query)];
    const text = terms.map((term) => containsTerm(term, ['f.name', 'f.description']));
    const tag = terms.map((term) => containsTerm(term, ['t.value']));
    // Tag values are matched in the small `tags` table first, then their features looked up.
    parts.push({
      sql: `(${text.map((part) => part.sql).join(' OR ')} OR f.name IN (SELECT ft.feature_name FROM tags t CROSS JOIN feature_tag ft ON ft.tag_type = t.type AND ft.tag_value = t.value WHERE ${tag.map((part) => part.sql).join(' OR ')}))`,
      params: [...text.flatMap((part) => part.params), ...tag.flatMap((part) => part.params)],
    });
  }
  if (params.project) parts.push(listCondition('f.project', params.project));
  if (params.type) parts.push(listCondition('f.type', params.type));
  if (params.createdBy) parts.push(listCondition('f.created_by_user_id', params.createdBy));
  if (params.state) parts.push(stateCondition(params.state));
  if (params.tag) {
    const pairs = params.tag.values.map((tag) => [tag.type, tag.value]);
    const wanted = new Set(pairs.map((pair) => JSON.stringify(pair))).size;
    const matches = `SELECT ft.feature_name AS feature, ft.tag_type || ':' || ft.tag_value AS item FROM feature_tag ft WHERE (ft.tag_type, ft.tag_value) IN (${PAIRS})`;
    const correlated = `EXISTS (SELECT 1 FROM feature_tag ft WHERE ft.feature_name = f.name AND (ft.tag_type, ft.tag_value) IN (${PAIRS}))`;
    parts.push(setCondition(params.tag.operator, matches, 'item', [JSON.stringify(pairs)], wanted, correlated));
  }
  if (params.segment) {
    const names = [...new Set(params.segment.values)];
    const matches = `SELECT fs.feature_name AS feature, s.name AS item FROM segments s
      JOIN feature_strategy_segment fss ON fss.segment_id = s.id
      JOIN feature_strategies fs ON fs.id = fss.feature_strategy_id
      WHERE s.name IN (${IN_LIST})`;
    parts.push(setCondition(params.segment.operator, matches, 'item', [JSON.stringify(names)], names.length));
  }
  if (params.status.length > 0) {
    const pairs = JSON.stringify(params.status.map((item) => [item.environment, item.enabled ? 1 : 0]));
    // One row per feature and environment: duplicates only come from several environments.
    const distinct = new Set(params.status.map((item) => item.environment)).size > 1 ? 'DISTINCT ' : '';
    parts.push(
      included(
        {
          sql: `SELECT ${distinct}fe.feature_name AS feature FROM feature_environments fe WHERE (fe.environment, fe.enabled) IN (${PAIRS})`,
          params: [pairs],
        },
        {
          sql: `EXISTS (SELECT 1 FROM feature_environments fe WHERE fe.feature_name = f.name AND (fe.environment, fe.enabled) IN (${PAIRS}))`,
          params: [pairs],
        },
      ),
    );
  }
  if (params.createdAt) {
    parts.push({ sql: `f.created_at ${params.createdAt.operator === 'IS_BEFORE' ? '<' : '>='} ?`, params: [params.createdAt.date] });
  }
  if (params.lastSeenAt) {
    const op = params.lastSeenAt.operator === 'IS_BEFORE' ? '<' : '>=';
    // Never-seen features (NULL everywhere) match neither side, as in Unleash.
    parts.push({
      sql: `(f.last_seen_at ${op} ? OR EXISTS (SELECT 1 FROM feature_environments fe WHERE fe.feature_name = f.name AND fe.last_seen_at ${op} ?))`,
      params: [params.lastSeenAt.date, params.lastSeenAt.date],
    });
  }
  if (params.favorite === true) {
    parts.push(
      included(
        { sql: 'SELECT ff.feature FROM favorite_features ff WHERE ff.user_id = ?', params: [userId] },
        { sql: 'EXISTS (SELECT 1 FROM favorite_features ff WHERE ff.feature = f.name AND ff.user_id = ?)', params: [userId] },
      ),
    );
  } else if (params.favorite === false) {
    parts.push({ sql: 'NOT EXISTS (SELECT 1 FROM favorite_features ff WHERE ff.feature = f.name AND ff.user_id = ?)', params: [userId] });
  }
  return parts;
}

function and(parts: readonly Fragment[]): Fragment {
  return { sql: parts.map((part) => part.sql).join('\n  AND '), params: parts.flatMap((part) => part.params) };
}

function orderClause(params: SearchParams, userId: number, favoritesFirst = params.favoritesFirst): Fragment {
  const direction = params.sortOrder === 'desc' ? 'DESC' : 'ASC';
  const keys: Fragment[] = [];
  if (favoritesFirst) {
    keys.push({ sql: 'EXISTS (SELECT 1 FROM favorite_features ff WHERE ff.feature = f.name AND ff.user_id = ?) DESC', params: [userId] });
  }
  const tieBreak = { sql: 'f.created_at ASC, f.name ASC', params: [] };
  const sortBy = params.sortBy;
  if (sortBy === 'name') {
    keys.push({ sql: `f.name ${direction}`, params: [] });
  } else if (sortBy === 'type' || sortBy === 'stale' || sortBy === 'project') {
    keys.push({ sql: `f.${sortBy} ${direction}`, params: [] }, tieBreak);
  } else if (sortBy.startsWith('environment:')) {
    keys.push(
      {
        sql: `(SELECT fe.enabled FROM feature_environments fe WHERE fe.feature_name = f.name AND fe.environment = ?) ${direction} NULLS LAST`,
        params: [sortBy.slice('environment:'.length)],
      },
      tieBreak,
    );
  } else if (sortBy === 'lastSeenAt' && direction === 'DESC') {
    // Latest sighting first: the feature's own last_seen_at is never older than any of its
    // environments' (triggers keep it so), which makes it the key, read in index order.
    keys.push({ sql: 'f.last_seen_at DESC NULLS LAST', params: [] }, tieBreak);
  } else if (sortBy === 'lastSeenAt') {
    // Earliest sighting first: the feature's earliest environment row wins.
    const pick = 'min';
    keys.push(
      {
        sql: `coalesce((SELECT ${pick}(coalesce(fe.last_seen_at, f.last_seen_at)) FROM feature_environments fe WHERE fe.feature_name = f.name), f.last_seen_at) ${direction} NULLS LAST`,
        params: [],
      },
      tieBreak,
    );
  } else {
    keys.push({ sql: `f.created_at ${direction}, f.name ASC`, params: [] });
  }
  return { sql: keys.map((key) => key.sql).join(', '), params: keys.flatMap((key) => key.params) };
}

export interface PagePlan {
  /**
   * Selects `name` in page order; when `total` is undefined, also `total` on every row (a
   * windowed count). details.ts `pageWithDetails` reads it with everything the page shows.
   */
  page: Fragment;
  /** Counts the matches, where the page's rows do not carry the count. */
  total?: Fragment;
  /** A windowed page's count, for a page past the end, which has no row to carry it. */
  pastEnd?: Fragment;
}

/**
 * Counts the matches, starting from the smallest set a filter names where one does (SQLite,
 * without statistics, would otherwise walk the archived_at index).
 */
function countOf(params: SearchParams, parts: Condition[]): Fragment {
  const driverIndex = parts.findIndex((part) => part.names !== undefined);
  if (driverIndex < 0) {
    const where = and(parts);
    return { sql: `SELECT count(*) AS total FROM features f WHERE ${where.sql}`, params: where.params };
  }
  const driver = parts[driverIndex]!.names!;
  const correlated = parts[driverIndex]!.correlated;
  if (parts.length === 2 && !params.archived && !params.lifecycle && correlated) {
    // Only "not archived" besides this filter: all its matches minus the archived ones,
    // which are few, instead of looking up every match.
    return {
      sql: `SELECT (SELECT count(*) FROM (${driver.sql})) - (SELECT count(*) FROM features f WHERE f.archived_at IS NOT NULL AND ${correlated.sql}) AS total`,
      params: [...driver.params, ...correlated.params],
    };
  }
  const where = and(parts.filter((_, index) => index !== driverIndex));
  return {
    sql: `SELECT count(*) AS total FROM (${driver.sql}) d CROSS JOIN ${BY_NAME} ON f.name = d.feature WHERE ${where.sql}`,
    params: [...driver.params, ...where.params],
  };
}

/**
 * Favourites first and environment sorts, as one page SELECT. The order is cut into walks, each
 * a materialized CTE: the caller's matching favourites, then the other features in sort order
 * from the right offset, or, for an environment sort, one walk per group (disabled, enabled,
 * no row for the environment; enabled first when descending), each in creation order through
 * its index. A walk reads only the rows still wanted after the walks before it (LIMIT 0 reads
 * nothing, so the last group, which finds nothing by reading every feature, is read only when
 * the others leave the page short). The page then orders those few rows by walk, then by the
 * sort, instead of ranking every feature.
 */
function walkedPage(params: SearchParams, userId: number, parts: Condition[], where: Fragment): Fragment {
  const walks: Fragment[] = [];
  const counted = () => walks.map((_, index) => ` - (SELECT count(*) FROM w${index})`).join('');
  const others: Fragment[] = [];
  if (params.favoritesFirst) {
    const matching = and(parts);
    walks.push({
      sql: `SELECT f.name AS name FROM favorite_features ff CROSS JOIN ${BY_NAME} ON f.name = ff.feature WHERE ff.user_id = ? AND ${matching.sql}`,
      params: [userId, ...matching.params],
    });
    others.push({ sql: 'f.name NOT IN (SELECT name FROM w0)', params: [] });
  }
  const order = orderClause(params, userId, false);
  // Rows the walks skipped themselves; the page skips the rest of the offset.
  let skipped = { sql: '0', params: [] as unknown[] };
  if (params.sortBy.startsWith('environment:')) {
    const environment = params.sortBy.slice('environment:'.length);
    // Correlated, so a group stops probing once it has its rows.
    const state = (enabled: number) => ({
      sql: `EXISTS (SELECT 1 FROM feature_environments fe WHERE fe.feature_name = f.name AND fe.environment = ? AND fe.enabled = ${enabled})`,
      params: [environment],
    });
    const missing = {
      sql: 'NOT EXISTS (SELECT 1 FROM feature_environments fe WHERE fe.feature_name = f.name AND fe.environment = ?)',
      params: [environment],
    };
    for (const group of params.sortOrder === 'desc' ? [state(1), state(0), missing] : [state(0), state(1), missing]) {
      const filtered = and([...parts, group, ...others]);
      walks.push({
        sql: `SELECT f.name AS name FROM features f WHERE ${filtered.sql} ORDER BY f.created_at ASC, f.name ASC LIMIT max(0, ?${counted()})`,
        params: [...filtered.params, params.offset + params.limit],
      });
    }
  } else {
    const filtered = and([where, ...others]);
    skipped = { sql: `max(0, ?${counted()})`, params: [params.offset] };
    walks.push({
      sql: `SELECT f.name AS name FROM features f WHERE ${filtered.sql} ORDER BY ${order.sql} LIMIT ? OFFSET ${skipped.sql}`,
      params: [...filtered.params, ...order.params, params.limit, ...skipped.params],
    });
  }
  const ctes = walks.map((walk, index) => `w${index} AS MATERIALIZED (${walk.sql})`).join(',\n  ');
  const rows = walks.map((_, index) => `SELECT ${index} AS walk, name FROM w${index}`).join(' UNION ALL ');
  return {
    sql: `WITH ${ctes}
      SELECT f.name AS name FROM (${rows}) p CROSS JOIN features f ON f.name = p.name
      ORDER BY p.walk, ${order.sql} LIMIT ? OFFSET ? - ${skipped.sql}`,
    params: [...walks.flatMap((walk) => walk.params), ...order.params, params.limit, params.offset, ...skipped.params],
  };
}

/**
 * The total and the page of names. A text query has to read every feature row, so then one
 * statement reads them once and carries the total on each row (COUNT(*) OVER ()). Otherwise
 * the count starts from the smallest set a filter names, and the page walks the sort order
 * (favourites first and environment sorts: several walks, see `walkedPage`).
 */
export function pagePlan(params: SearchParams, userId: number): PagePlan {
  if (params.query.length > 0) {
    const order = orderClause(params, userId);
    const where = and(conditions(params, userId, true));
    return {
      page: {
        sql: `SELECT f.name AS name, count(*) OVER () AS total FROM features f WHERE ${where.sql} ORDER BY ${order.sql} LIMIT ? OFFSET ?`,
        params: [...where.params, ...order.params, params.limit, params.offset],
      },
      pastEnd: countOf(params, conditions(params, userId)),
    };
  }
  const parts = conditions(params, userId);
  const total = countOf(params, parts);
  // Walking the name index backwards or forwards beats sorting every active feature.
  const where = and(params.sortBy === 'name' ? conditions(params, userId, true) : parts);
  if (params.favoritesFirst || params.sortBy.startsWith('environment:')) {
    return { page: walkedPage(params, userId, parts, where), total };
  }
  const order = orderClause(params, userId);
  return {
    page: {
      sql: `SELECT f.name AS name FROM features f WHERE ${where.sql} ORDER BY ${order.sql} LIMIT ? OFFSET ?`,
      params: [...where.params, ...order.params, params.limit, params.offset],
    },
    total,
  };
}
