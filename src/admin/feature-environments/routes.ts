/** A flag in one environment: read it, turn it on or off, and turn several flags on or off at once. */
import { UPDATE_FEATURE_ENVIRONMENT } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, authenticated, route, type Route, type Scope, type ScopeInput } from '../../http/route';
import { BulkToggleFeaturesSchema, GetFeatureEnvironmentResponse } from './schema';
import * as service from './service';

const inEnvironment = ({ params }: ScopeInput): Scope => ({ project: params.projectId, environment: params.environment });

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Features',
    operationId: 'getFeatureEnvironment',
    summary: 'Get one environment of a flag with its strategies',
    responses: { 200: { description: 'Success', schema: GetFeatureEnvironmentResponse } },
    errors: [400, 401, 404],
    handler: async ({ env, params }) =>
      json(await service.getFeatureEnvironment(getDb(env), params.projectId, params.featureName, params.environment)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/on',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_ENVIRONMENT, inEnvironment),
    tag: 'Features',
    operationId: 'toggleFeatureEnvironmentOn',
    summary: 'Turn a feature flag on in an environment',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 403, 404],
    handler: async ({ env, principal, params }) => {
      await service.setEnvironmentEnabled(getDb(env), principal, params.projectId, params.featureName, params.environment, true);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/off',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_ENVIRONMENT, inEnvironment),
    tag: 'Features',
    operationId: 'toggleFeatureEnvironmentOff',
    summary: 'Turn a feature flag off in an environment',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.setEnvironmentEnabled(getDb(env), principal, params.projectId, params.featureName, params.environment, false);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/bulk_features/environments/:environment/on',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_ENVIRONMENT, inEnvironment),
    tag: 'Features',
    operationId: 'bulkToggleFeaturesEnvironmentOn',
    summary: 'Turn several flags on in an environment (all or none)',
    body: BulkToggleFeaturesSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.bulkToggle(getDb(env), principal, params.projectId, params.environment, body.features, true);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/bulk_features/environments/:environment/off',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_ENVIRONMENT, inEnvironment),
    tag: 'Features',
    operationId: 'bulkToggleFeaturesEnvironmentOff',
    summary: 'Turn several flags off in an environment (all or none)',
    body: BulkToggleFeaturesSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.bulkToggle(getDb(env), principal, params.projectId, params.environment, body.features, false);
      return empty(200);
    },
  }),
];
