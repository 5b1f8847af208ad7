import { asc, sql } from 'drizzle-orm';
import { getDb } from '../../db/client';
import { environments } from '../../db/schema';
import { json } from '../../http/responses';
import { authenticated, route, type Route, type AdminContext } from '../../http/route';
import { GetAllEnvironmentsResponse } from './schema';

/** All environments in sort order, with the counts Unleash 6 reports. */
export async function list({ env }: AdminContext): Promise<Response> {
  const db = getDb(env);
  const rows = await db
    .select({
      name: environments.name,
      type: environments.type,
      sortOrder: environments.sortOrder,
      enabled: environments.enabled,
      protected: environments.protected,
      projectCount: sql<number>`(SELECT count(*) FROM project_environments pe WHERE pe.environment_name = ${environments.name})`,
      enabledToggleCount: sql<number>`(SELECT count(*) FROM feature_environments fe JOIN features f ON f.name = fe.feature_name
        WHERE fe.environment = ${environments.name} AND fe.enabled = 1 AND f.archived_at IS NULL)`,
    })
    .from(environments)
    .orderBy(asc(environments.sortOrder), asc(environments.name));
  return json({
    version: 1,
    environments: rows.map((row) => ({
      name: row.name,
      type: row.type,
      sortOrder: row.sortOrder,
      enabled: row.enabled,
      protected: row.protected,
      requiredApprovals: null,
      projectCount: row.projectCount,
      enabledToggleCount: row.enabledToggleCount,
    })),
  });
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/environments',
    access: authenticated(),
    tag: 'Environments',
    operationId: 'getAllEnvironments',
    summary: 'List environments',
    responses: { 200: { description: 'Success', schema: GetAllEnvironmentsResponse } },
    handler: list,
  }),
];
