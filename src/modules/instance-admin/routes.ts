/** The instance statistics page (Admin > Instance stats): counts of what this instance holds. */
import { sql } from 'drizzle-orm';
import { getDb } from '../../db/client';
import { json } from '../../http/responses';
import { sha256Hex } from '../../lib/encoding';
import { instanceId, UNLEASH_VERSION } from '../ui-config/routes';
import { authenticated, route, type Route, type AdminContext } from '../../http/route';
import { GetInstanceAdminStatsResponse } from './schema';

interface Counts {
  users: number;
  serviceAccounts: number;
  clientTokens: number;
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

export async function statistics({ env }: AdminContext): Promise<Response> {
  const db = getDb(env);
  const since = (days: number) => new Date(Date.now() - days * 24 * 60 * 60 * 1000).toISOString();
  const [counts] = await db.all<Counts>(sql`SELECT
    (SELECT count(*) FROM users WHERE deleted_at IS NULL AND is_service = 0 AND is_system = 0) AS users,
    (SELECT count(*) FROM users WHERE deleted_at IS NULL AND is_service = 1) AS serviceAccounts,
    (SELECT count(*) FROM api_tokens WHERE type = 'client') AS clientTokens,
    (SELECT count(*) FROM api_tokens WHERE type = 'admin') AS adminTokens,
    (SELECT count(*) FROM api_tokens WHERE type = 'frontend') AS frontendTokens,
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
  const c = counts!;
  const stats = {
    timestamp: new Date().toISOString(),
    instanceId: await instanceId(db),
    versionOSS: UNLEASH_VERSION,
    versionEnterprise: '',
    users: c.users,
    serviceAccounts: c.serviceAccounts,
    apiTokens: { client: c.clientTokens, admin: c.adminTokens, frontend: c.frontendTokens },
    activeUsers: { last7: c.active7, last30: c.active30, last60: c.active60, last90: c.active90 },
    licensedUsers: 0,
    featureToggles: c.features,
    archivedFeatureToggles: c.archived,
    projects: c.projects,
    contextFields: c.contextFields,
    roles: c.roles,
    customRootRoles: c.customRootRoles,
    customRootRolesInUse: c.customRootRolesInUse,
    groups: 0,
    environments: c.environments,
    segments: c.segments,
    strategies: c.strategies,
    SAMLenabled: false,
    OIDCenabled: false,
    passwordAuthEnabled: true,
    SCIMenabled: false,
    clientApps: [
      { range: '7d', count: c.apps7 },
      { range: '30d', count: c.apps30 },
      { range: 'allTime', count: c.appsAll },
    ],
    featureExports: c.exports,
    featureImports: c.imports,
    productionChanges: { last30: c.production30, last60: c.production60, last90: c.production90 },
    previousDayMetricsBucketsCount: { enabledCount: 0, variantCount: 0 },
    maxEnvironmentStrategies: c.maxEnvironmentStrategies,
    maxConstraintValues: c.maxConstraintValues,
    maxConstraints: c.maxConstraints,
  };
  // Unleash signs the statistics with a SHA-256 over them so a copy can be checked.
  return json({ ...stats, sum: await sha256Hex(JSON.stringify(stats)) });
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/instance-admin/statistics',
    access: authenticated(),
    tag: 'Instance Admin',
    operationId: 'getInstanceAdminStats',
    summary: 'Counts of what this instance holds',
    responses: { 200: { description: 'Success', schema: GetInstanceAdminStatsResponse } },
    handler: statistics,
  }),
];
