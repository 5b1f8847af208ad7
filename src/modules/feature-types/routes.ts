/** Feature flag types, in the order Unleash lists them (the create-flag form's choices). */
import { sql } from 'drizzle-orm';
import { getDb } from '../../db/client';
import { featureTypes } from '../../db/schema';
import { json } from '../../http/responses';
import { authenticated, route, type Route, type AdminContext } from '../../http/route';
import { GetAllFeatureTypesResponse } from './schema';

export async function list({ env }: AdminContext): Promise<Response> {
  // Seed order (release, experiment, operational, kill-switch, permission), as Unleash's.
  const rows = await getDb(env)
    .select()
    .from(featureTypes)
    .orderBy(sql`rowid`);
  return json({
    version: 1,
    types: rows.map((row) => ({ id: row.id, name: row.name, description: row.description, lifetimeDays: row.lifetimeDays })),
  });
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/feature-types',
    access: authenticated(),
    tag: 'Feature Types',
    operationId: 'getAllFeatureTypes',
    summary: 'List feature flag types',
    responses: { 200: { description: 'Success', schema: GetAllFeatureTypesResponse } },
    handler: list,
  }),
];
