/** A flag's environment variants: in one environment, in all of them, and in several at once. */
import { UPDATE_FEATURE_ENVIRONMENT_VARIANTS, UPDATE_FEATURE_VARIANTS } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { JsonPatchSchema } from '../../http/json-patch';
import { json } from '../../http/responses';
import { admin, authenticated, route, type Route, type Scope, type ScopeInput } from '../../http/route';
import {
  GetEnvironmentFeatureVariantsResponse,
  OverwriteEnvironmentFeatureVariantsResponse,
  VariantsBatchSchema,
  VariantsSchema,
} from './schema';
import * as service from './service';

const inProject = ({ params }: ScopeInput): Scope => ({ project: params.projectId });
const inEnvironment = ({ params }: ScopeInput): Scope => ({ project: params.projectId, environment: params.environment });

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/variants',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Features',
    operationId: 'getEnvironmentFeatureVariants',
    summary: "Get a flag's variants in an environment",
    responses: { 200: { description: 'Success', schema: GetEnvironmentFeatureVariantsResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) =>
      json(await service.getEnvironmentVariants(getDb(env), params.projectId, params.featureName, params.environment)),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/variants',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_ENVIRONMENT_VARIANTS, inEnvironment),
    tag: 'Features',
    operationId: 'overwriteEnvironmentFeatureVariants',
    summary: "Replace a flag's variants in an environment",
    body: VariantsSchema,
    responses: { 200: { description: 'Success', schema: OverwriteEnvironmentFeatureVariantsResponse } },
    errors: [400, 403, 404, 413],
    handler: async ({ env, principal, params, body }) =>
      json(await service.setEnvironmentVariants(getDb(env), principal, params.projectId, params.featureName, params.environment, body)),
  }),
  route({
    method: 'PATCH',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/variants',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_ENVIRONMENT_VARIANTS, inEnvironment),
    tag: 'Features',
    operationId: 'patchEnvironmentsFeatureVariants',
    summary: "Change a flag's variants in an environment with a JSON Patch",
    body: JsonPatchSchema,
    responses: { 200: { description: 'Success', schema: OverwriteEnvironmentFeatureVariantsResponse } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ env, principal, params, body }) =>
      json(await service.patchEnvironmentVariants(getDb(env), principal, params.projectId, params.featureName, params.environment, body)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/features/:featureName/variants',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Features',
    operationId: 'getFeatureVariants',
    summary: "Get a flag's variants (those of its first environment)",
    responses: { 200: { description: 'Success', schema: GetEnvironmentFeatureVariantsResponse } },
    errors: [400, 401, 404],
    handler: async ({ env, params }) => json(await service.getFeatureVariants(getDb(env), params.projectId, params.featureName)),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/features/:featureName/variants',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_VARIANTS, inProject),
    tag: 'Features',
    operationId: 'overwriteFeatureVariants',
    summary: "Replace a flag's variants in all its environments",
    body: VariantsSchema,
    responses: { 200: { description: 'Success', schema: OverwriteEnvironmentFeatureVariantsResponse } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ env, principal, params, body }) =>
      json(await service.setFeatureVariants(getDb(env), principal, params.projectId, params.featureName, body)),
  }),
  route({
    method: 'PATCH',
    path: '/api/admin/projects/:projectId/features/:featureName/variants',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_VARIANTS, inProject),
    tag: 'Features',
    operationId: 'patchFeatureVariants',
    summary: "Change a flag's variants in every environment with a JSON Patch",
    body: JsonPatchSchema,
    responses: { 200: { description: 'Success', schema: OverwriteEnvironmentFeatureVariantsResponse } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ env, principal, params, body }) =>
      json(await service.patchFeatureVariants(getDb(env), principal, params.projectId, params.featureName, body)),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/features/:featureName/variants-batch',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Features',
    operationId: 'overwriteFeatureVariantsOnEnvironments',
    summary: 'Set the same variants in several environments of a flag',
    body: VariantsBatchSchema,
    responses: { 200: { description: 'Success', schema: OverwriteEnvironmentFeatureVariantsResponse } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ env, principal, params, body }) =>
      json(await service.setVariantsOnEnvironments(getDb(env), principal, principal, params.projectId, params.featureName, body)),
  }),
];
