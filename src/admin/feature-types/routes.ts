/** Feature flag types, in the order Unleash lists them (the create-flag form's choices). */
import { getDb } from '../../db/client';
import { json } from '../../http/responses';
import type * as v from 'valibot';
import { ADMIN } from '../../auth/permissions';
import { admin, authenticated, route, type Route, type AdminContext } from '../../http/route';
import { FeatureTypeLifetimeSchema, GetAllFeatureTypesResponse, UpdateFeatureTypeLifetimeResponse } from './schema';
import * as service from './service';

async function setLifetime({ env, principal, params, body }: AdminContext<v.InferOutput<typeof FeatureTypeLifetimeSchema>>) {
  return json(await service.setLifetime(getDb(env), principal, params.id!, body.lifetimeDays));
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
    handler: async ({ env }) => json(await service.listFeatureTypes(getDb(env))),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/feature-types/:id/lifetime',
    access: admin(ADMIN),
    tag: 'Feature Types',
    operationId: 'updateFeatureTypeLifetime',
    summary: 'Set how long flags of a type live before they are potentially stale',
    body: FeatureTypeLifetimeSchema,
    responses: { 200: { description: 'The feature type', schema: UpdateFeatureTypeLifetimeResponse } },
    errors: [400, 404, 413, 415],
    handler: setLifetime,
  }),
];
