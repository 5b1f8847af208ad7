/**
 * A flag itself: create, read, update, patch, archive, mark stale, validate a new name, and
 * the archive (list, revive, delete for good). Its parts have their own modules:
 * feature-strategies, feature-variants, feature-environments, feature-dependencies,
 * feature-lifecycle and favorites.
 */
import { featureProject } from '../../auth/scopes';
import { CREATE_FEATURE, DELETE_FEATURE, UPDATE_FEATURE } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, authenticated, route, type Route, type Scope, type ScopeInput } from '../../http/route';
import {
  CreateFeature201Response,
  CreateFeatureSchema,
  GetArchivedFeaturesByProjectIdResponse,
  GetArchivedFeaturesResponse,
  GetFeatureQuery,
  GetFeatureResponse,
  PatchFeatureResponse,
  PatchFeatureSchema,
  ReviveSchema,
  StaleSchema,
  UpdateFeatureResponse,
  UpdateFeatureSchema,
  ValidateFeatureNameSchema,
} from './schema';
import * as service from './service';

const inProject = ({ params }: ScopeInput): Scope => ({ project: params.projectId });

export const routes: Route[] = [
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features',
    badRequestName: 'BadDataError',
    access: admin(CREATE_FEATURE, inProject),
    tag: 'Features',
    operationId: 'createFeature',
    summary: 'Create a feature flag',
    body: CreateFeatureSchema,
    responses: { 201: { description: 'Created', schema: CreateFeature201Response } },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      const created = await service.createFeature(getDb(env), principal, params.projectId, body);
      return json(created, 201, {
        location: `/api/admin/projects/${encodeURIComponent(created.project)}/features/${encodeURIComponent(created.name)}`,
      });
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/features/:featureName',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Features',
    operationId: 'getFeature',
    summary: 'Get a feature flag with its environments and strategies',
    query: GetFeatureQuery,
    responses: { 200: { description: 'Success', schema: GetFeatureResponse } },
    errors: [400, 404],
    handler: async ({ env, principal, params, query }) => {
      const userId = principal.kind === 'user' ? principal.userId : undefined;
      const asked = query.variantEnvironments;
      const withEnvironmentVariants = (Array.isArray(asked) ? asked[0] : asked) === 'true';
      return json(await service.getFeature(getDb(env), params.projectId, params.featureName, withEnvironmentVariants, userId));
    },
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/features/:featureName',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE, inProject),
    tag: 'Features',
    operationId: 'updateFeature',
    summary: 'Update a feature flag',
    body: UpdateFeatureSchema,
    responses: { 200: { description: 'Success', schema: UpdateFeatureResponse } },
    errors: [400, 404, 413],
    handler: async ({ env, principal, params, body }) =>
      json(await service.updateFeature(getDb(env), principal, params.projectId, params.featureName, body)),
  }),
  route({
    method: 'PATCH',
    path: '/api/admin/projects/:projectId/features/:featureName',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE, inProject),
    tag: 'Features',
    operationId: 'patchFeature',
    summary: 'Change a feature flag with JSON Patch',
    body: PatchFeatureSchema,
    responses: { 200: { description: 'Success', schema: PatchFeatureResponse } },
    errors: [400, 404, 413],
    handler: async ({ env, principal, params, body }) =>
      json(await service.patchFeature(getDb(env), principal, params.projectId, params.featureName, body)),
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/features/:featureName',
    badRequestName: 'BadDataError',
    access: admin(DELETE_FEATURE, inProject),
    tag: 'Features',
    operationId: 'archiveFeature',
    summary: 'Archive a feature flag',
    responses: { 202: { description: 'Accepted', schema: null } },
    errors: [400, 403, 404],
    handler: async ({ env, principal, params }) => {
      await service.archiveFeature(getDb(env), principal, params.projectId, params.featureName);
      return empty(202);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/stale',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE, inProject),
    tag: 'Features',
    operationId: 'staleFeatures',
    summary: 'Mark feature flags stale or active',
    body: StaleSchema,
    responses: { 202: { description: 'Accepted', schema: null } },
    errors: [400, 404, 413],
    handler: async ({ env, principal, params, body }) => {
      await service.setStale(getDb(env), principal, params.projectId, body.features, body.stale);
      return empty(202);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/revive',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE, inProject),
    tag: 'Archive',
    operationId: 'reviveFeatures',
    summary: 'Revive archived feature flags',
    body: ReviveSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 413],
    handler: async ({ env, principal, params, body }) => {
      await service.reviveFeatures(getDb(env), principal, body.features, params.projectId);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/archive/revive/:featureName',
    access: admin(UPDATE_FEATURE, featureProject('featureName')),
    tag: 'Archive',
    operationId: 'reviveFeature',
    summary: 'Revive an archived feature flag',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.reviveFeature(getDb(env), principal, params.featureName);
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/archive/features',
    access: authenticated(),
    tag: 'Archive',
    operationId: 'getArchivedFeatures',
    summary: 'List archived feature flags',
    responses: { 200: { description: 'Success', schema: GetArchivedFeaturesResponse } },
    handler: async ({ env }) => json(await service.listArchived(getDb(env))),
  }),
  route({
    method: 'GET',
    path: '/api/admin/archive/features/:projectId',
    access: authenticated(),
    tag: 'Archive',
    operationId: 'getArchivedFeaturesByProjectId',
    summary: "List a project's archived feature flags",
    responses: { 200: { description: 'Success', schema: GetArchivedFeaturesByProjectIdResponse } },
    errors: [400],
    handler: async ({ env, params }) => json(await service.listArchived(getDb(env), params.projectId)),
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/archive/:featureName',
    access: admin(DELETE_FEATURE, featureProject('featureName')),
    tag: 'Archive',
    operationId: 'deleteFeature',
    summary: 'Delete an archived feature flag for good',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.deleteArchived(getDb(env), principal, params.featureName);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/features/validate',
    access: authenticated(),
    tag: 'Features',
    operationId: 'validateFeature',
    summary: 'Check that a feature flag name is free and valid',
    body: ValidateFeatureNameSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 409, 413],
    handler: async ({ env, body }) => {
      await service.validateNewName(getDb(env), body);
      return empty(200);
    },
  }),
];
