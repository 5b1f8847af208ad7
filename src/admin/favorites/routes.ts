/**
 * Favourite flags and projects. Unleash refuses these writes when their content type is not
 * JSON, although they have no body (415).
 */
import { getDb } from '../../db/client';
import { requireJsonContentType } from '../../http/body';
import { empty } from '../../http/responses';
import { authenticated, route, type Route } from '../../http/route';
import * as service from './service';

export const routes: Route[] = [
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/favorites',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Features',
    operationId: 'addFavoriteFeature',
    summary: 'Mark a feature flag as a favourite',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404, 415],
    handler: async ({ request, env, principal, params }) => {
      requireJsonContentType(request);
      await service.setFeatureFavorite(getDb(env), principal, params.projectId, params.featureName, true);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/features/:featureName/favorites',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Features',
    operationId: 'removeFavoriteFeature',
    summary: 'Unmark a favourite feature flag',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404, 415],
    handler: async ({ request, env, principal, params }) => {
      requireJsonContentType(request);
      await service.setFeatureFavorite(getDb(env), principal, params.projectId, params.featureName, false);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/favorites',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Features',
    operationId: 'addFavoriteProject',
    summary: 'Mark a project as a favourite',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 404, 415],
    handler: async ({ request, env, principal, params }) => {
      requireJsonContentType(request);
      await service.setProjectFavorite(getDb(env), principal, params.projectId, true);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/favorites',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Features',
    operationId: 'removeFavoriteProject',
    summary: 'Unmark a favourite project',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 415],
    handler: async ({ request, env, principal, params }) => {
      requireJsonContentType(request);
      await service.setProjectFavorite(getDb(env), principal, params.projectId, false);
      return empty(200);
    },
  }),
];
