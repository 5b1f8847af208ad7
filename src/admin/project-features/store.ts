/**
 * Queries of the project-scoped flag operations. Lists of names travel as one JSON parameter
 * (`json_each`), so a bulk call is a fixed number of bound parameters however many flags it names.
 */
import { asc, sql, type SQL } from 'drizzle-orm';
import { d1Statement, runD1Batch, type Db } from '../../db/client';
import type { Actor } from '../../db/events';
import { features } from '../../db/schema';

export interface OverviewFilter {
  projectId: string;
  namePrefix?: string;
  tags?: [string, string][];
}

interface OverviewFeatureRow {
  name: string;
  description: string | null;
  type: string;
  created_at: string;
  stale: number;
  impression_data: number;
  last_seen_at: string | null;
}

interface OverviewEnvironmentRow {
  feature_name: string;
  name: string;
  enabled: number;
  type: string;
  sort_order: number;
  variant_count: number;
  last_seen_at: string | null;
  has_strategies: number;
  has_enabled_strategies: number;
}

/** The project's active flags that the filter keeps, with their environments, tags and (for a user) favourites. */
export async function featureOverview(db: Db, filter: OverviewFilter, userId: number | undefined) {
  const conditions: SQL[] = [sql`f.project = ${filter.projectId}`, sql`f.archived_at IS NULL`];
  if (filter.namePrefix !== undefined && filter.namePrefix.trim() !== '') {
    const pattern = filter.namePrefix.endsWith('%') ? filter.namePrefix : `${filter.namePrefix}%`;
    conditions.push(sql`f.name LIKE ${pattern}`);
  }
  if (filter.tags !== undefined) {
    conditions.push(sql`EXISTS (SELECT 1 FROM feature_tag t, json_each(${JSON.stringify(filter.tags)}) w
      WHERE t.feature_name = f.name AND t.tag_type = json_extract(w.value, '$[0]') AND t.tag_value = json_extract(w.value, '$[1]'))`);
  }
  const where = sql.join(conditions, sql` AND `);
  const picked = sql`SELECT f.name FROM features f WHERE ${where}`;
  // One D1 batch: the four reads see the same state.
  const [features, environments, tags, favorites] = await runD1Batch(db, [
    d1Statement(
      db,
      sql`SELECT f.name, f.description, f.type, f.created_at, f.stale, f.impression_data, f.last_seen_at
        FROM features f WHERE ${where} ORDER BY f.created_at, f.name`,
    ),
    d1Statement(
      db,
      sql`SELECT fe.feature_name, e.name, fe.enabled, e.type, e.sort_order,
        json_array_length(fe.variants) AS variant_count, fe.last_seen_at,
        EXISTS (SELECT 1 FROM feature_strategies s WHERE s.feature_name = fe.feature_name AND s.environment = fe.environment) AS has_strategies,
        EXISTS (SELECT 1 FROM feature_strategies s WHERE s.feature_name = fe.feature_name AND s.environment = fe.environment AND s.disabled = 0) AS has_enabled_strategies
      FROM feature_environments fe JOIN environments e ON e.name = fe.environment
      WHERE fe.feature_name IN (${picked}) ORDER BY e.sort_order, e.name`,
    ),
    d1Statement(
      db,
      sql`SELECT t.feature_name, t.tag_type, t.tag_value FROM feature_tag t WHERE t.feature_name IN (${picked}) ORDER BY t.created_at, t.rowid`,
    ),
    d1Statement(
      db,
      userId === undefined
        ? sql`SELECT NULL AS feature WHERE 0`
        : sql`SELECT feature FROM favorite_features WHERE user_id = ${userId} AND feature IN (${picked})`,
    ),
  ]);
  const featureRows = features!.results as OverviewFeatureRow[];
  const environmentRows = environments!.results as OverviewEnvironmentRow[];
  const tagRows = tags!.results as { feature_name: string; tag_type: string; tag_value: string }[];
  const favoriteRows = favorites!.results as { feature: string }[];
  return { featureRows, environmentRows, tagRows, favoriteRows };
}

/** The flags of `names` that exist, archived or not. */
export async function featuresNamed(db: Db, names: readonly string[]) {
  if (names.length === 0) return [];
  return db
    .select()
    .from(features)
    .where(sql`${features.name} IN (SELECT value FROM json_each(${JSON.stringify(names)}))`)
    .orderBy(asc(features.createdAt), asc(features.name));
}

/**
 * Unleash's "orphan parents": the flags of `names` that some flag outside `names` depends on,
 * which archiving or deleting `names` would leave without their parent.
 */
export async function orphanParents(db: Db, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const list = JSON.stringify(names);
  const rows = await db.all<{ parent: string }>(sql`SELECT DISTINCT parent FROM dependent_features
    WHERE parent IN (SELECT value FROM json_each(${list})) AND child NOT IN (SELECT value FROM json_each(${list})) ORDER BY parent`);
  return rows.map((row) => row.parent);
}

/** Whether any flag of `names` is a parent or a child in a dependency. */
export async function haveDependencies(db: Db, names: readonly string[]): Promise<boolean> {
  if (names.length === 0) return false;
  const list = JSON.stringify(names);
  const rows = await db.all<{ one: number }>(sql`SELECT 1 AS one FROM dependent_features
    WHERE parent IN (SELECT value FROM json_each(${list})) OR child IN (SELECT value FROM json_each(${list})) LIMIT 1`);
  return rows.length > 0;
}

/**
 * Archives the named active flags of the project, unless a flag outside the list depends on
 * one inside it — re-checked in SQL, so a dependency added since the service's checks leaves
 * nothing archived. Drops the archived flags' own parents (an archived flag depends on
 * nothing, and Unleash says so), enters their `archived` stage and records `feature-archived`.
 * Returns whether it archived any.
 */
export async function archiveUnlessOrphaning(db: Db, actor: Actor, projectId: string, active: readonly string[], archivedAt: string) {
  const list = JSON.stringify(active);
  const archivedNow = sql`SELECT name FROM features WHERE name IN (SELECT value FROM json_each(${list})) AND archived_at = ${archivedAt}`;
  const [archived] = await runD1Batch(db, [
    d1Statement(
      db,
      sql`UPDATE features SET archived_at = ${archivedAt}
        WHERE name IN (SELECT value FROM json_each(${list})) AND archived_at IS NULL AND project = ${projectId}
          AND NOT EXISTS (SELECT 1 FROM dependent_features WHERE parent IN (SELECT value FROM json_each(${list}))
            AND child NOT IN (SELECT value FROM json_each(${list})))`,
    ),
    // An archived flag no longer depends on anything: Unleash drops its parents and says so.
    d1Statement(
      db,
      sql`INSERT INTO events (type, created_by, created_by_user_id, project, environment, feature_name, data, pre_data)
        SELECT 'feature-dependencies-removed', ${actor.actorName}, ${actor.userId}, ${projectId}, NULL, child, NULL, NULL
        FROM (SELECT DISTINCT child FROM dependent_features WHERE child IN (${archivedNow}) ORDER BY child)`,
    ),
    d1Statement(db, sql`DELETE FROM dependent_features WHERE child IN (${archivedNow})`),
    d1Statement(
      db,
      sql`INSERT INTO feature_lifecycles (feature, stage, created_at) SELECT name, 'archived', ${archivedAt} FROM features
        WHERE name IN (${archivedNow}) ORDER BY name
        ON CONFLICT (feature, stage) DO UPDATE SET created_at = excluded.created_at, status = NULL, status_value = NULL`,
    ),
    d1Statement(
      db,
      sql`INSERT INTO events (type, created_by, created_by_user_id, project, environment, feature_name, data, pre_data)
        SELECT 'feature-archived', ${actor.actorName}, ${actor.userId}, project, NULL, name, NULL, NULL
        FROM features WHERE name IN (${archivedNow}) ORDER BY created_at, name`,
    ),
  ]);
  return archived!.meta.changes > 0;
}

/**
 * Deletes the named archived flags of the project for good, unless a flag outside `names`
 * depends on one of them (re-checked in SQL), recording `feature-deleted` with each flag as it
 * was. Returns whether it deleted any.
 */
export async function deleteUnlessOrphaning(
  db: Db,
  actor: Actor,
  projectId: string,
  eligible: readonly string[],
  names: readonly string[],
) {
  const list = JSON.stringify(eligible);
  const all = JSON.stringify([...new Set(names)]);
  const stillAllowed = sql`NOT EXISTS (SELECT 1 FROM dependent_features WHERE parent IN (SELECT value FROM json_each(${all}))
    AND child NOT IN (SELECT value FROM json_each(${all})))`;
  const doomed = sql`SELECT name FROM features WHERE name IN (SELECT value FROM json_each(${list})) AND archived_at IS NOT NULL AND project = ${projectId} AND ${stillAllowed}`;
  const [recorded] = await runD1Batch(db, [
    d1Statement(
      db,
      sql`INSERT INTO events (type, created_by, created_by_user_id, project, environment, feature_name, data, pre_data)
        SELECT 'feature-deleted', ${actor.actorName}, ${actor.userId}, project, NULL, name, NULL,
          json_object('name', name, 'description', description, 'type', type, 'project', project,
            'stale', json(CASE WHEN stale THEN 'true' ELSE 'false' END), 'createdAt', created_at, 'lastSeenAt', last_seen_at,
            'impressionData', json(CASE WHEN impression_data THEN 'true' ELSE 'false' END), 'archived', json('true'), 'archivedAt', archived_at)
        FROM features WHERE name IN (${doomed}) ORDER BY created_at, name`,
    ),
    // The rows that still name a deleted flag as parent belong to children in the same list.
    d1Statement(db, sql`DELETE FROM dependent_features WHERE parent IN (${doomed})`),
    d1Statement(db, sql`DELETE FROM features WHERE name IN (${doomed})`),
  ]);
  return recorded!.meta.changes > 0;
}
