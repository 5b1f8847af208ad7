/**
 * Flag operations on a project as a whole (Unleash's project feature and project archive
 * controllers): the project's flag list, clone, bulk on/off, bulk archive/validate/delete,
 * favourite projects, a child's parent options, and the lifecycle's uncomplete and count.
 */
import { CREATE_FEATURE, DELETE_FEATURE, UPDATE_FEATURE, UPDATE_FEATURE_ENVIRONMENT } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { requireJsonContentType } from '../../http/body';
import { admin, authenticated, route, type Route, type Scope, type ScopeInput } from '../../http/route';
import {
  BatchFeaturesSchema,
  BulkToggleFeaturesSchema,
  CloneFeatureSchema,
  GetFeatureLifecycleStageCountResponse,
  GetFeaturesResponse,
  ListParentOptionsResponse,
  ProjectFeaturesQuery,
  ValidateArchiveFeaturesResponse,
} from './schema';
import { CreateFeature201Response } from '../features/schema';
import * as service from './service';

const inProject = ({ params }: ScopeInput): Scope => ({ project: params.projectId });
const inEnvironment = ({ params }: ScopeInput): Scope => ({ project: params.projectId, environment: params.environment });

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/features',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Features',
    operationId: 'getFeatures',
    summary: "List a project's active flags with their environments and tags",
    query: ProjectFeaturesQuery,
    responses: { 200: { description: 'Success', schema: GetFeaturesResponse } },
    errors: [400, 401],
    handler: async ({ env, principal, params, query }) => json(await service.listFeatures(getDb(env), principal, params.projectId, query)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/clone',
    badRequestName: 'BadDataError',
    access: admin(CREATE_FEATURE, inProject),
    tag: 'Features',
    operationId: 'cloneFeature',
    summary: 'Copy a flag, with its strategies and variants, under a new name in this project',
    body: CloneFeatureSchema,
    responses: { 201: { description: 'Created', schema: CreateFeature201Response } },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ env, principal, params, body }) =>
      json(await service.cloneFeature(getDb(env), principal, params.projectId, params.featureName, body), 201),
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
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/archive/validate',
    badRequestName: 'BadDataError',
    access: admin(DELETE_FEATURE, inProject),
    tag: 'Features',
    operationId: 'validateArchiveFeatures',
    summary: 'Say what archiving these flags would do to dependencies',
    body: BatchFeaturesSchema,
    responses: { 200: { description: 'Success', schema: ValidateArchiveFeaturesResponse } },
    errors: [400, 401, 403, 413, 415],
    handler: async ({ env, body }) => json(await service.validateArchive(getDb(env), body.features)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/archive',
    badRequestName: 'BadDataError',
    access: admin(DELETE_FEATURE, inProject),
    tag: 'Features',
    operationId: 'archiveFeatures',
    summary: "Archive several of the project's flags (all or none)",
    body: BatchFeaturesSchema,
    responses: { 202: { description: 'Accepted', schema: null } },
    errors: [400, 401, 403, 409, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.archiveFeatures(getDb(env), principal, params.projectId, body.features);
      return empty(202);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/delete',
    badRequestName: 'BadDataError',
    access: admin(DELETE_FEATURE, inProject),
    tag: 'Archive',
    operationId: 'deleteFeatures',
    summary: "Delete several of the project's archived flags for good (all or none)",
    body: BatchFeaturesSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.deleteFeatures(getDb(env), principal, params.projectId, body.features);
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
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/features/:child/parents',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Dependencies',
    operationId: 'listParentOptions',
    summary: 'List the flags a flag could depend on',
    responses: { 200: { description: 'Success', schema: ListParentOptionsResponse } },
    errors: [400, 401],
    handler: async ({ env, params }) => json(await service.parentOptions(getDb(env), params.child)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/lifecycle/uncomplete',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE, inProject),
    tag: 'Unstable',
    operationId: 'uncomplete',
    summary: "Take back a flag's completed lifecycle stage",
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403],
    handler: async ({ env, principal, params }) => {
      await service.uncompleteFeature(getDb(env), principal, params.projectId, params.featureName);
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/lifecycle/count',
    access: authenticated(),
    tag: 'Unstable',
    operationId: 'getFeatureLifecycleStageCount',
    summary: 'Count the flags in each lifecycle stage',
    responses: { 200: { description: 'Success', schema: GetFeatureLifecycleStageCountResponse } },
    errors: [401],
    handler: async ({ env }) => json(await service.lifecycleCount(getDb(env))),
  }),
];
