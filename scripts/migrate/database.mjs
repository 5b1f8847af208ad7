// `--from-db`: the Unleash 8.1+ v2 tokens of the source, read from its PostgreSQL. Unleash keeps
// only `sha256(secret)` (base64url) per selector, which our key check accepts as it is; the API
// never shows it. Read only: one READ ONLY transaction, rolled back, nothing else sent.

/** Every v2 token of the source: selector, verifier, name, type, environment, projects, expiry. */
export async function readV2Tokens(connectionString) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString, application_name: 'unleash-migrate (read only)' });
  await client.connect();
  try {
    await client.query('BEGIN TRANSACTION READ ONLY');
    const exists = await client.query("SELECT to_regclass('public.api_tokens_v2') IS NOT NULL AS present");
    if (!exists.rows[0].present) return [];
    const { rows } = await client.query(
      `SELECT t.selector, t.verifier, t.token_name, t.type, t.environment, t.expires_at,
              coalesce(array_agg(p.project ORDER BY p.project) FILTER (WHERE p.project IS NOT NULL), '{}') AS projects
         FROM api_tokens_v2 t LEFT JOIN api_tokens_v2_project p ON p.selector = t.selector
        GROUP BY t.selector ORDER BY t.token_name, t.selector`,
    );
    return rows.map((row) => ({
      selector: row.selector,
      verifier: row.verifier,
      tokenName: row.token_name,
      type: String(row.type).toLowerCase(),
      environment: row.environment,
      // No project rows: an admin token, or one for all projects (Unleash lists it as `*`).
      projects: row.projects.length > 0 ? row.projects : ['*'],
      expiresAt: row.expires_at ? new Date(row.expires_at).toISOString() : null,
    }));
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    await client.end();
  }
}
