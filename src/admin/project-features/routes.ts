/**
 * Flag operations on a project as a whole (Unleash's project feature and project archive
 * controllers): the project's flag list, clone, and bulk archive/validate/delete.
 */
import { CREATE_FEATURE, DELETE_FEATURE } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, authenticated, route, type Route, type Scope, type ScopeInput } from '../../http/route';
import { CloneFeatureSchema, GetFeaturesResponse, ProjectFeaturesQuery, ValidateArchiveFeaturesResponse } from './schema';
import { BatchFeaturesSchema, CreateFeature201Response } from '../features/schema';
import * as service from './service';

const inProject = ({ params }: ScopeInput): Scope => ({ project: params.projectId });

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
];
