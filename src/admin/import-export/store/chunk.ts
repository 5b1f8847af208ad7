/**
 * D1 access for import and export. Writes are set-based: each table gets one statement per
 * chunk that reads its rows from a single JSON parameter with json_each, so a chunk of a
 * thousand features is a dozen statements whatever its size, far under D1's 100 bound
 * parameters, and every statement is an idempotent upsert (a redelivered chunk is a no-op).
 */
import { sql, type SQL } from 'drizzle-orm';
import type { ChunkRows, ImportContext, PartKey } from '../plan';
import { prepare, rowsOf, runStatements, type Statement } from './statements';

export interface Writer {
  userId: number;
  /** Who the audit events name (the importing user or token). */
  actorName: string;
  now: string;
}

/**
 * Where a chunk's rows come from: bound as JSON parameters (the synchronous path), or read
 * by D1 itself from the chunk's staged parts (the queue consumer), so that the Worker never
 * downloads and re-uploads a stored chunk's megabytes.
 */
export type ChunkSource = { rows: ChunkRows } | { jobId: string; chunkIndex: number };

/**
 * The table of one array of the chunk, as `j` with a `value` column per element. Staged
 * parts are JSONB, walked by `jsonb_each` without parsing: a dozen statements read the same
 * megabyte of rows, and re-parsing it as text cost each of them ~6 ms (half a chunk's time).
 */
function chunkRows(source: ChunkSource, key: PartKey): SQL {
  if ('rows' in source) return sql`json_each(${`[${source.rows[key].join(',')}]`}) AS j`;
  return sql`(SELECT e.value AS value FROM import_job_parts p, jsonb_each(p.payload, ${`$.${key}`}) e
    WHERE p.job_id = ${source.jobId} AND p.chunk_index = ${source.chunkIndex}) AS j`;
}

/** Leaves out the rows of features skipped as archived (usually none, and then costs nothing). */
function notSkipped(context: ImportContext, name: SQL): SQL {
  if (context.skip.length === 0) return sql`true`;
  return sql`${name} NOT IN (SELECT value FROM json_each(${JSON.stringify(context.skip)}))`;
}

/** Is the named feature in the target project (a primary-key lookup per row)? */
function inProject(project: string, name: SQL): SQL {
  return sql`EXISTS (SELECT 1 FROM features f WHERE f.name = ${name} AND f.project = ${project})`;
}

/** The statements that apply one chunk; order matters (features before what hangs off them). */
export function chunkStatements(d1: D1Database, context: ImportContext, writer: Writer, source: ChunkSource): Statement[] {
  const { project, environment } = context;
  const { userId, actorName, now } = writer;
  const statements: Statement[] = [];
  // Rows held in memory show which arrays are empty; a staged chunk runs every statement.
  const has = (key: PartKey) => !('rows' in source) || source.rows[key].length > 0;
  const rows = (key: PartKey) => chunkRows(source, key);
  const features = sql`SELECT j.value->>'name' FROM ${rows('features')} WHERE ${notSkipped(context, sql`j.value->>'name'`)}`;
  const featureRows = has('features') || has('strategies') || has('environments') || has('tags') || has('links');
  if (featureRows && context.tagTypes.length > 0) {
    statements.push(
      prepare(
        d1,
        sql`INSERT INTO tag_types (name, description, icon, color)
        SELECT value->>'name', value->>'description', value->>'icon', value->>'color' FROM json_each(${JSON.stringify(context.tagTypes)}) WHERE true
        ON CONFLICT(name) DO NOTHING`,
      ),
    );
  }
  if (featureRows && context.contextFields.length > 0) {
    statements.push(
      prepare(
        d1,
        sql`INSERT INTO context_fields (name, description, sort_order, legal_values, stickiness, project, created_at)
        SELECT value->>'name', value->>'description', value->>'sortOrder', value->'legalValues', value->>'stickiness', value->>'project', ${now}
        FROM json_each(${JSON.stringify(context.contextFields)}) WHERE true
        ON CONFLICT(name) DO NOTHING`,
      ),
    );
  }
  if (has('features')) {
    statements.push(
      // Every stored field but name and project is overwritten (Unleash resets missing ones);
      // the WHERE keeps a feature that moved to another project meanwhile out of reach.
      prepare(
        d1,
        sql`INSERT INTO features (name, description, type, project, stale, impression_data, created_at, created_by_user_id, archived_at)
        SELECT j.value->>'name', j.value->>'description', j.value->>'type', ${project}, j.value->>'stale', j.value->>'impressionData', ${now}, ${userId},
          CASE WHEN j.value->>'archived' THEN ${now} END
        FROM ${rows('features')} WHERE ${notSkipped(context, sql`j.value->>'name'`)}
        ON CONFLICT(name) DO UPDATE SET description = excluded.description, type = excluded.type, stale = excluded.stale,
          impression_data = excluded.impression_data, archived_at = excluded.archived_at
        WHERE features.project = excluded.project`,
      ),
    );
  }
  // The payload's environment settings go in before the default rows, which then skip them:
  // one write per feature instead of an insert and an update.
  if (has('environments')) {
    statements.push(
      prepare(
        d1,
        sql`INSERT INTO feature_environments (feature_name, environment, enabled, variants)
        SELECT j.value->>'featureName', ${environment}, j.value->>'enabled', j.value->'variants' FROM ${rows('environments')}
        WHERE ${notSkipped(context, sql`j.value->>'featureName'`)} AND ${inProject(project, sql`j.value->>'featureName'`)}
        ON CONFLICT(feature_name, environment) DO UPDATE SET enabled = excluded.enabled,
          variants = CASE WHEN json_array_length(excluded.variants) > 0 THEN excluded.variants ELSE feature_environments.variants END`,
      ),
    );
  }
  if (has('features')) {
    statements.push(
      prepare(
        d1,
        sql`INSERT INTO feature_environments (feature_name, environment, enabled)
        SELECT f.name, pe.environment_name, 0
        FROM features f JOIN project_environments pe ON pe.project_id = f.project
        WHERE f.project = ${project} AND f.name IN (${features})
        ON CONFLICT DO NOTHING`,
      ),
      prepare(
        d1,
        sql`INSERT INTO feature_lifecycles (feature, stage, created_at)
        SELECT f.name, 'initial', f.created_at
        FROM features f
        WHERE f.name IN (${features}) AND f.archived_at IS NULL AND NOT EXISTS (SELECT 1 FROM feature_lifecycles l WHERE l.feature = f.name)
        ON CONFLICT DO NOTHING`,
      ),
      // Only features of the target project: one that moved elsewhere after validation keeps
      // its strategies and tags (the consumer also fails such a chunk before it applies).
      prepare(
        d1,
        sql`DELETE FROM feature_strategies WHERE environment = ${environment}
        AND feature_name IN (SELECT f.name FROM features f WHERE f.project = ${project} AND f.name IN (${features}))`,
      ),
      prepare(
        d1,
        sql`DELETE FROM feature_tag WHERE feature_name IN (SELECT f.name FROM features f WHERE f.project = ${project} AND f.name IN (${features}))`,
      ),
    );
  }
  if (has('strategies')) {
    const strategyRows = rows('strategies');
    statements.push(
      prepare(
        d1,
        sql`INSERT INTO feature_strategies (id, feature_name, project_name, environment, strategy_name, title, parameters, constraints, variants,
          sort_order, disabled, created_at, created_by_user_id)
        SELECT j.value->>'id', j.value->>'featureName', ${project}, ${environment}, j.value->>'name', j.value->>'title',
          CASE WHEN json_type(j.value, '$.parameters.stickiness') = 'null'
            THEN json_set(j.value->'parameters', '$.stickiness', ${context.defaultStickiness}) ELSE j.value->'parameters' END,
          j.value->'constraints', j.value->'variants', j.value->>'sortOrder', j.value->>'disabled', ${now}, ${userId}
        FROM ${strategyRows} WHERE ${notSkipped(context, sql`j.value->>'featureName'`)} AND ${inProject(project, sql`j.value->>'featureName'`)}
        ON CONFLICT(id) DO NOTHING`,
      ),
    );
    if (Object.keys(context.segmentMap).length > 0) {
      statements.push(
        prepare(
          d1,
          sql`INSERT INTO feature_strategy_segment (feature_strategy_id, segment_id, created_at)
          SELECT j.value->>'id', m.value, ${now}
          FROM ${rows('strategies')}, json_each(j.value->'segments') s, json_each(${JSON.stringify(context.segmentMap)}) m
          WHERE m.key = CAST(s.value AS TEXT) AND ${notSkipped(context, sql`j.value->>'featureName'`)}
          ON CONFLICT DO NOTHING`,
        ),
      );
    }
  }
  if (has('environments')) statements.push(autoStrategyInsert(d1, context, writer, rows('environments')));
  if (has('tags')) {
    statements.push(
      prepare(
        d1,
        sql`INSERT INTO tags (type, value, created_at)
        SELECT DISTINCT j.value->>'type', j.value->>'value', ${now} FROM ${rows('tags')} WHERE ${notSkipped(context, sql`j.value->>'featureName'`)}
        ON CONFLICT DO NOTHING`,
      ),
      prepare(
        d1,
        sql`INSERT INTO feature_tag (feature_name, tag_type, tag_value, created_at, created_by_user_id)
        SELECT j.value->>'featureName', j.value->>'type', j.value->>'value', ${now}, ${userId} FROM ${rows('tags')}
        WHERE ${notSkipped(context, sql`j.value->>'featureName'`)} AND ${inProject(project, sql`j.value->>'featureName'`)}
        ON CONFLICT DO NOTHING`,
      ),
    );
  }
  if (has('links')) {
    // Unleash replaces the links of every flag `data.links` names (an entry with no links
    // clears them) and writes a `feature-link-added` event per link; flags that moved to
    // another project or were archived since validation are left alone.
    const target = sql`${notSkipped(context, sql`j.value->>'feature'`)} AND EXISTS (SELECT 1 FROM features f
      WHERE f.name = j.value->>'feature' AND f.project = ${project} AND f.archived_at IS NULL)`;
    const links = sql`${rows('links')}, json_each(j.value->'links') l WHERE ${target}`;
    statements.push(
      prepare(d1, sql`DELETE FROM feature_links WHERE feature_name IN (SELECT j.value->>'feature' FROM ${rows('links')} WHERE ${target})`),
      prepare(
        d1,
        sql`INSERT INTO feature_links (id, feature_name, url, title, domain)
        SELECT l.value->>'id', j.value->>'feature', l.value->>'url', l.value->>'title', l.value->>'domain' FROM ${links}
        ORDER BY l.value->>'id'
        ON CONFLICT(id) DO NOTHING`,
      ),
      prepare(
        d1,
        sql`INSERT INTO events (type, created_at, created_by, created_by_user_id, project, environment, feature_name, data)
        SELECT 'feature-link-added', ${now}, ${actorName}, ${userId}, ${project}, NULL, j.value->>'feature',
          CASE WHEN l.value->>'title' IS NULL THEN json_object('url', l.value->>'url')
            ELSE json_object('url', l.value->>'url', 'title', l.value->>'title') END
        FROM ${links} ORDER BY l.value->>'id'`,
      ),
    );
  }
  if (has('dependencies')) {
    statements.push(
      prepare(
        d1,
        sql`INSERT INTO dependent_features (parent, child, enabled, variants)
        SELECT j.value->>'parent', j.value->>'child', j.value->>'enabled', j.value->'variants' FROM ${rows('dependencies')}
        WHERE ${inProject(project, sql`j.value->>'child'`)}
        ON CONFLICT(parent, child) DO UPDATE SET enabled = excluded.enabled, variants = excluded.variants`,
      ),
    );
  }
  return statements;
}

/** Names listed in a reason before the rest are only counted. */
const NAMES_IN_REASON = 20;

function listed(names: string[]): string {
  const shown = names.slice(0, NAMES_IN_REASON).join(', ');
  return names.length > NAMES_IN_REASON ? `${shown} and ${names.length - NAMES_IN_REASON} more` : shown;
}

/**
 * What keeps a staged chunk from applying as it was validated, checked again just before it
 * applies (the job may have waited behind others): features of the chunk that are now in
 * another project (its strategies and tags would be replaced there), features its rows hang
 * off that were deleted, segments it uses that were deleted, dependencies whose parent or
 * child is gone from the project. Empty when the chunk can apply.
 */
export async function chunkReferenceProblems(d1: D1Database, context: ImportContext, source: ChunkSource): Promise<string[]> {
  const { project } = context;
  const rows = (key: PartKey) => chunkRows(source, key);
  const keep = (name: SQL) => notSkipped(context, name);
  const mentioned = sql`SELECT j.value->>'name' AS name FROM ${rows('features')} WHERE ${keep(sql`j.value->>'name'`)}
    UNION SELECT j.value->>'featureName' FROM ${rows('strategies')} WHERE ${keep(sql`j.value->>'featureName'`)}
    UNION SELECT j.value->>'featureName' FROM ${rows('environments')} WHERE ${keep(sql`j.value->>'featureName'`)}
    UNION SELECT j.value->>'featureName' FROM ${rows('tags')} WHERE ${keep(sql`j.value->>'featureName'`)}
    UNION SELECT j.value->>'feature' FROM ${rows('links')} WHERE ${keep(sql`j.value->>'feature'`)}`;
  const hungOff = sql`SELECT j.value->>'featureName' AS name FROM ${rows('strategies')} WHERE ${keep(sql`j.value->>'featureName'`)}
    UNION SELECT j.value->>'featureName' FROM ${rows('environments')} WHERE ${keep(sql`j.value->>'featureName'`)}
    UNION SELECT j.value->>'featureName' FROM ${rows('tags')} WHERE ${keep(sql`j.value->>'featureName'`)}
    UNION SELECT j.value->>'feature' FROM ${rows('links')} WHERE ${keep(sql`j.value->>'feature'`)}`;
  const statements = [
    prepare(
      d1,
      sql`SELECT f.name || ' (in project ' || f.project || ')' AS item FROM features f
      WHERE f.project <> ${project} AND f.name IN (SELECT name FROM (${mentioned})) ORDER BY f.name`,
    ),
    prepare(
      d1,
      sql`SELECT m.name AS item FROM (${hungOff}) m
      WHERE NOT EXISTS (SELECT 1 FROM features f WHERE f.name = m.name)
        AND m.name NOT IN (SELECT j.value->>'name' FROM ${rows('features')}) ORDER BY m.name`,
    ),
    prepare(
      d1,
      sql`SELECT DISTINCT p.parent || ' -> ' || p.child AS item FROM (SELECT j.value->>'parent' AS parent, j.value->>'child' AS child FROM ${rows('dependencies')}) p
      WHERE NOT EXISTS (SELECT 1 FROM features f WHERE f.name = p.parent AND f.project = ${project})
        OR NOT EXISTS (SELECT 1 FROM features f WHERE f.name = p.child AND f.project = ${project}) ORDER BY 1`,
    ),
  ];
  if (Object.keys(context.segmentMap).length > 0) {
    statements.push(
      prepare(
        d1,
        sql`SELECT DISTINCT CAST(m.value AS TEXT) AS item
        FROM ${rows('strategies')}, json_each(j.value->'segments') s, json_each(${JSON.stringify(context.segmentMap)}) m
        WHERE m.key = CAST(s.value AS TEXT) AND ${keep(sql`j.value->>'featureName'`)} AND NOT EXISTS (SELECT 1 FROM segments g WHERE g.id = m.value)
        ORDER BY m.value`,
      ),
    );
  }
  const results = await runStatements(d1, statements);
  const items = results.map((result) => rowsOf<{ item: string }>(result).map((row) => row.item));
  const problems: string[] = [];
  const [moved = [], deleted = [], dependencies = [], segments = []] = items;
  if (moved.length > 0) problems.push(`these features are now in another project: ${listed(moved)}.`);
  if (deleted.length > 0) problems.push(`these features were deleted: ${listed(deleted)}.`);
  if (dependencies.length > 0)
    problems.push(`these dependencies name a feature that is no longer in project ${project}: ${listed(dependencies)}.`);
  if (segments.length > 0) problems.push(`these segments were deleted (ids): ${listed(segments)}.`);
  return problems;
}

/**
 * Unleash's auto-strategy: a feature enabled in the target environment with no enabled
 * strategy there (after this chunk's strategies are in) gets the project's default one. It
 * reads the state the statements before it left, so it needs no knowledge of the payload.
 */
function autoStrategyInsert(d1: D1Database, context: ImportContext, writer: Writer, environmentRows: SQL): Statement {
  const { auto, environment } = context;
  const parameters = JSON.stringify(auto.parameters);
  const featureName = sql`j.value->>'featureName'`;
  return prepare(
    d1,
    sql`INSERT INTO feature_strategies (id, feature_name, project_name, environment, strategy_name, title, parameters, constraints, variants,
      sort_order, disabled, created_at, created_by_user_id)
    SELECT j.value->>'autoId', ${featureName}, ${context.project}, ${environment}, ${auto.name}, ${auto.title},
      ${auto.name === 'flexibleRollout' ? sql`json_set(${parameters}, '$.groupId', ${featureName})` : sql`${parameters}`},
      ${JSON.stringify(auto.constraints)}, ${JSON.stringify(auto.variants)}, 0, 0, ${writer.now}, ${writer.userId}
    FROM ${environmentRows}
    WHERE j.value->>'autoId' IS NOT NULL AND ${notSkipped(context, featureName)} AND ${inProject(context.project, featureName)}
      AND EXISTS (SELECT 1 FROM feature_environments fe WHERE fe.feature_name = ${featureName} AND fe.environment = ${environment} AND fe.enabled = 1)
      AND NOT EXISTS (SELECT 1 FROM feature_strategies s WHERE s.feature_name = ${featureName} AND s.environment = ${environment} AND s.disabled = 0)
    GROUP BY ${featureName}
    ON CONFLICT(id) DO NOTHING`,
  );
}
