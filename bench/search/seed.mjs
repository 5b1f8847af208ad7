// The generated data set of the search benchmark (see run.mjs).

/** The whole data set as a few INSERT ... SELECT over a generated sequence. */
export function seedSql(n) {
  const seq = `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ${n})`;
  const name = `'flag-' || printf('%06d', i)`;
  const hour = new Date();
  hour.setUTCMinutes(0, 0, 0);
  return `
INSERT INTO projects (id, name) VALUES ('bench-b', 'Bench B');
INSERT INTO project_environments (project_id, environment_name) VALUES ('default', 'default'), ('bench-b', 'default'), ('bench-b', 'development'), ('bench-b', 'production');
INSERT INTO tag_types (name, description) VALUES ('team', 'Owning team');
${seq} INSERT INTO segments (name, constraints) SELECT 'segment-' || i, '[]' FROM seq WHERE i <= 20;
${seq} INSERT INTO features (name, description, type, project, stale, potentially_stale, impression_data, created_at, created_by_user_id, archived_at)
  SELECT ${name}, 'Description of flag number ' || i,
    CASE i % 5 WHEN 0 THEN 'release' WHEN 1 THEN 'experiment' WHEN 2 THEN 'operational' WHEN 3 THEN 'kill-switch' ELSE 'permission' END,
    CASE WHEN i % 10 = 0 THEN 'bench-b' ELSE 'default' END,
    i % 7 = 0, i % 11 = 0, i % 2,
    strftime('%Y-%m-%dT%H:%M:%fZ', '2025-01-01 00:00:00', '+' || i || ' seconds'), -42,
    CASE WHEN i % 50 = 0 THEN strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01 00:00:00', '+' || i || ' seconds') END
  FROM seq;
${seq} INSERT INTO feature_environments (feature_name, environment, enabled, variants, last_seen_at)
  SELECT ${name}, e.name, (i + e.sort_order) % 3 = 0,
    CASE WHEN i % 9 = 0 THEN '[{"name":"a","weight":500,"weightType":"variable","stickiness":"default"},{"name":"b","weight":500,"weightType":"variable","stickiness":"default"}]' ELSE '[]' END,
    CASE WHEN e.name = 'development' AND i % 3 = 0 THEN strftime('%Y-%m-%dT%H:%M:%fZ', '2026-06-01 00:00:00', '+' || i || ' minutes') END
  FROM seq, environments e;
${seq} INSERT INTO feature_strategies (id, feature_name, project_name, environment, strategy_name, parameters, constraints, sort_order, disabled)
  SELECT 'strategy-' || i, ${name}, CASE WHEN i % 10 = 0 THEN 'bench-b' ELSE 'default' END, 'development', 'flexibleRollout',
    '{"rollout":"50","stickiness":"default","groupId":"g"}', '[{"contextName":"userId","operator":"IN","values":["1","2"]}]', 0, i % 6 = 0
  FROM seq;
${seq} INSERT INTO feature_strategy_segment (feature_strategy_id, segment_id) SELECT 'strategy-' || i, (i % 20) + 1 FROM seq WHERE i % 4 = 0;
${seq} INSERT INTO tags (type, value) SELECT 'simple', 'tag-' || (i - 1) FROM seq WHERE i <= 200;
${seq} INSERT INTO tags (type, value) SELECT 'team', 'team-' || (i - 1) FROM seq WHERE i <= 50;
${seq} INSERT INTO feature_tag (feature_name, tag_type, tag_value) SELECT ${name}, 'simple', 'tag-' || (i % 200) FROM seq;
${seq} INSERT INTO feature_tag (feature_name, tag_type, tag_value) SELECT ${name}, 'team', 'team-' || (i % 50) FROM seq;
${seq} INSERT INTO feature_lifecycles (feature, stage, created_at) SELECT ${name}, 'initial', strftime('%Y-%m-%dT%H:%M:%fZ', '2025-01-01 00:00:00', '+' || i || ' seconds') FROM seq;
${seq} INSERT INTO feature_lifecycles (feature, stage, status, created_at) SELECT ${name}, 'completed', 'kept', '2026-03-01T00:00:00.000Z' FROM seq WHERE i % 13 = 0;
${seq} INSERT INTO feature_lifecycles (feature, stage, created_at) SELECT ${name}, 'archived', '2026-04-01T00:00:00.000Z' FROM seq WHERE i % 50 = 0;
${seq} INSERT INTO favorite_features (feature, user_id) SELECT ${name}, -42 FROM seq WHERE i % 100 = 0;
${seq} INSERT INTO dependent_features (parent, child) SELECT 'flag-' || printf('%06d', i - 1), ${name} FROM seq WHERE i % 500 = 2;
${seq} INSERT INTO client_metrics_env (feature_name, app_name, environment, timestamp, yes, no) SELECT ${name}, 'bench-app', 'development', '${hour.toISOString()}', i % 97, i % 13 FROM seq WHERE i % 10 = 0;
`;
}

/**
 * The side-by-side data set (side.mjs): `n` flags imported through the admin API, the same
 * requests on every system (Unleash's import is its only bulk way in). Each flag: one of 5
 * types, a description, one flexibleRollout strategy in development, enabled there for one in
 * three, one `simple` tag of 20. Answers the import bodies, `chunk` flags each (Unleash takes
 * at most 500 kB a body).
 */
export function importBodies(n, chunk = 400) {
  const bodies = [];
  for (let offset = 0; offset < n; offset += chunk) {
    const features = [];
    const featureStrategies = [];
    const featureEnvironments = [];
    const featureTags = [];
    for (let i = offset; i < Math.min(n, offset + chunk); i++) {
      const name = `${SIDE_PREFIX}${String(i).padStart(6, '0')}`;
      features.push({
        name,
        type: ['release', 'experiment', 'operational', 'kill-switch', 'permission'][i % 5],
        description: `Flag number ${i}`,
      });
      featureStrategies.push({
        name: 'flexibleRollout',
        featureName: name,
        parameters: { rollout: String(i % 101), stickiness: 'default', groupId: name },
      });
      featureEnvironments.push({ name, featureName: name, environment: 'development', enabled: i % 3 === 0 });
      featureTags.push({ featureName: name, tagType: 'simple', tagValue: `tag-${i % 20}` });
    }
    bodies.push({
      project: 'default',
      environment: 'development',
      data: { features, featureStrategies, featureEnvironments, featureTags, tagTypes: [{ name: 'simple' }], contextFields: [] },
    });
  }
  return bodies;
}

/** What the side-by-side flags are named after. */
export const SIDE_PREFIX = 'sbs-';
