/** The Drizzle queries of the instance statistics: counts over the whole instance. */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';

export interface Counts {
  users: number;
  serviceAccounts: number;
  clientTokens: number;
  backendTokens: number;
  adminTokens: number;
  frontendTokens: number;
  active7: number;
  active30: number;
  active60: number;
  active90: number;
  features: number;
  archived: number;
  projects: number;
  contextFields: number;
  roles: number;
  customRootRoles: number;
  customRootRolesInUse: number;
  environments: number;
  segments: number;
  strategies: number;
  apps7: number;
  apps30: number;
  appsAll: number;
  exports: number;
  imports: number;
  production30: number;
  production60: number;
  production90: number;
  maxEnvironmentStrategies: number;
  maxConstraints: number;
  maxConstraintValues: number;
}

/** Every count of the statistics page, in one query; `now` is when the windows end. */
export async function counts(db: Db, now: number): Promise<Counts> {
  const since = (days: number) => new Date(now - days * 24 * 60 * 60 * 1000).toISOString();
  const [row] = await db.all<Counts>(sql`SELECT
    (SELECT count(*) FROM users WHERE deleted_at IS NULL AND is_service = 0 AND is_system = 0) AS users,
    (SELECT count(*) FROM users WHERE deleted_at IS NULL AND is_service = 1) AS serviceAccounts,
    (SELECT count(*) FROM api_tokens WHERE type = 'client') AS clientTokens,
    (SELECT count(*) FROM api_tokens WHERE type = 'admin') AS adminTokens,
    (SELECT count(*) FROM api_tokens WHERE type = 'frontend') AS frontendTokens,
    (SELECT count(*) FROM api_tokens WHERE type = 'backend') AS backendTokens,
    (SELECT count(*) FROM users WHERE deleted_at IS NULL AND seen_at >= ${since(7)}) AS active7,
    (SELECT count(*) FROM users WHERE deleted_at IS NULL AND seen_at >= ${since(30)}) AS active30,
    (SELECT count(*) FROM users WHERE deleted_at IS NULL AND seen_at >= ${since(60)}) AS active60,
    (SELECT count(*) FROM users WHERE deleted_at IS NULL AND seen_at >= ${since(90)}) AS active90,
    (SELECT count(*) FROM features WHERE archived_at IS NULL) AS features,
    (SELECT count(*) FROM features WHERE archived_at IS NOT NULL) AS archived,
    (SELECT count(*) FROM projects WHERE archived_at IS NULL) AS projects,
    (SELECT count(*) FROM context_fields) AS contextFields,
    (SELECT count(*) FROM roles) AS roles,
    (SELECT count(*) FROM roles WHERE type = 'root-custom') AS customRootRoles,
    (SELECT count(DISTINCT ru.role_id) FROM role_user ru JOIN roles r ON r.id = ru.role_id WHERE r.type = 'root-custom') AS customRootRolesInUse,
    (SELECT count(*) FROM environments) AS environments,
    (SELECT count(*) FROM segments) AS segments,
    (SELECT count(*) FROM strategies) AS strategies,
    (SELECT count(*) FROM client_applications WHERE coalesce(seen_at, created_at) >= ${since(7)}) AS apps7,
    (SELECT count(*) FROM client_applications WHERE coalesce(seen_at, created_at) >= ${since(30)}) AS apps30,
    (SELECT count(*) FROM client_applications) AS appsAll,
    (SELECT count(*) FROM events WHERE type = 'features-exported') AS exports,
    (SELECT count(*) FROM events WHERE type = 'features-imported') AS imports,
    (SELECT count(*) FROM events e JOIN environments en ON en.name = e.environment WHERE en.type = 'production' AND e.created_at >= ${since(30)}) AS production30,
    (SELECT count(*) FROM events e JOIN environments en ON en.name = e.environment WHERE en.type = 'production' AND e.created_at >= ${since(60)}) AS production60,
    (SELECT count(*) FROM events e JOIN environments en ON en.name = e.environment WHERE en.type = 'production' AND e.created_at >= ${since(90)}) AS production90,
    (SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM feature_strategies GROUP BY feature_name, environment)) AS maxEnvironmentStrategies,
    (SELECT coalesce(max(json_array_length(constraints)), 0) FROM feature_strategies) AS maxConstraints,
    (SELECT coalesce(max(json_array_length(json_extract(c.value, '$.values'))), 0) FROM feature_strategies fs, json_each(fs.constraints) c) AS maxConstraintValues`);
  return row!;
}
