/** Feature flag types, in the order Unleash lists them (the create-flag form's choices). */
import { getDb } from '../../db/client';
import { json } from '../../http/responses';
import { authenticated, route, type Route, type AdminContext } from '../../http/route';
import { GetAllFeatureTypesResponse } from './schema';
import * as service from './service';

export async function list({ env }: AdminContext): Promise<Response> {
  return json(await service.listFeatureTypes(getDb(env)));
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
