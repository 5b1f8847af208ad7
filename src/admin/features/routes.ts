import type * as v from 'valibot';
import { getDb } from '../../db/client';
import { readJsonBody, requireJsonContentType } from '../../http/body';
import { pathParam } from '../../http/params';
import { empty, json } from '../../http/responses';
import { parseInput } from '../../http/validation';
import {
  CompleteLifecycleSchema,
  ReviveSchema,
  StaleSchema,
  StrategySchema,
  StrategySortOrderSchema,
  VariantsBatchSchema,
  VariantsSchema,
} from './schema';
import { JsonPatchSchema, type JsonPatch } from '../../http/json-patch';
import * as service from './service';
import { featureProject } from '../../auth/scopes';
import {
  CREATE_FEATURE,
  CREATE_FEATURE_STRATEGY,
  DELETE_FEATURE,
  DELETE_FEATURE_STRATEGY,
  UPDATE_FEATURE,
  UPDATE_FEATURE_DEPENDENCY,
  UPDATE_FEATURE_ENVIRONMENT,
  UPDATE_FEATURE_ENVIRONMENT_VARIANTS,
  UPDATE_FEATURE_STRATEGY,
  UPDATE_FEATURE_VARIANTS,
} from '../../auth/permissions';
import { admin, authenticated, route, type Route, type AdminContext } from '../../http/route';
import {
  CreateFeature201Response,
  GetFeatureResponse,
  UpdateFeatureResponse,
  PatchFeatureResponse,
  GetArchivedFeaturesResponse,
  GetArchivedFeaturesByProjectIdResponse,
  GetFeatureStrategiesResponse,
  AddFeatureStrategyResponse,
  UpdateFeatureStrategyResponse,
  GetEnvironmentFeatureVariantsResponse,
  OverwriteEnvironmentFeatureVariantsResponse,
  GetFeatureLifecycleResponse,
  GetFeatureEnvironmentResponse,
  ListParentVariantOptionsResponse,
} from './schema';

const project = (request: AdminContext['request']) => pathParam(request, 'projectId');
const feature = (request: AdminContext['request']) => pathParam(request, 'featureName');
const environment = (request: AdminContext['request']) => pathParam(request, 'environment');

export async function create({ request, env, principal }: AdminContext): Promise<Response> {
  const body = await readJsonBody(request);
  const created = await service.createFeature(getDb(env), principal, project(request), body);
  return json(created, 201, {
    location: `/api/admin/projects/${encodeURIComponent(created.project)}/features/${encodeURIComponent(created.name)}`,
  });
}

export async function get({ request, env, principal }: AdminContext): Promise<Response> {
  const withEnvironmentVariants = new URL(request.url).searchParams.get('variantEnvironments') === 'true';
  const userId = principal.kind === 'user' ? principal.userId : undefined;
  return json(await service.getFeature(getDb(env), project(request), feature(request), withEnvironmentVariants, userId));
}

export async function update({ request, env, principal }: AdminContext): Promise<Response> {
  const body = await readJsonBody(request);
  return json(await service.updateFeature(getDb(env), principal, project(request), feature(request), body));
}

export async function patch({ request, env, principal }: AdminContext): Promise<Response> {
  const body = await readJsonBody(request);
  return json(await service.patchFeature(getDb(env), principal, project(request), feature(request), body));
}

export async function archive({ request, env, principal }: AdminContext): Promise<Response> {
  await service.archiveFeature(getDb(env), principal, project(request), feature(request));
  return empty(202);
}

export async function stale({ request, env, principal, body }: AdminContext<v.InferOutput<typeof StaleSchema>>): Promise<Response> {
  await service.setStale(getDb(env), principal, project(request), body.features, body.stale);
  return empty(202);
}

export async function reviveOne({ request, env, principal }: AdminContext): Promise<Response> {
  await service.reviveFeatures(getDb(env), principal, [pathParam(request, 'featureName')]);
  return empty(200);
}

export async function reviveInProject({
  request,
  env,
  principal,
  body,
}: AdminContext<v.InferOutput<typeof ReviveSchema>>): Promise<Response> {
  await service.reviveFeatures(getDb(env), principal, body.features, project(request));
  return empty(200);
}

export async function listArchived({ env }: AdminContext): Promise<Response> {
  return json(await service.listArchived(getDb(env)));
}

export async function listArchivedInProject({ request, env }: AdminContext): Promise<Response> {
  return json(await service.listArchived(getDb(env), project(request)));
}

export async function deleteArchived({ request, env, principal }: AdminContext): Promise<Response> {
  await service.deleteArchived(getDb(env), principal, feature(request));
  return empty(200);
}

export async function environmentOn({ request, env, principal }: AdminContext): Promise<Response> {
  await service.setEnvironmentEnabled(getDb(env), principal, project(request), feature(request), environment(request), true);
  return empty(200);
}

export async function environmentOff({ request, env, principal }: AdminContext): Promise<Response> {
  await service.setEnvironmentEnabled(getDb(env), principal, project(request), feature(request), environment(request), false);
  return empty(200);
}

export async function listStrategies({ request, env }: AdminContext): Promise<Response> {
  return json(await service.listStrategies(getDb(env), project(request), feature(request), environment(request)));
}

export async function getStrategy({ request, env }: AdminContext): Promise<Response> {
  return json(
    await service.getStrategy(getDb(env), project(request), feature(request), environment(request), pathParam(request, 'strategyId')),
  );
}

export async function addStrategy({
  request,
  env,
  principal,
  body,
}: AdminContext<v.InferOutput<typeof StrategySchema>>): Promise<Response> {
  return json(await service.addStrategy(getDb(env), principal, project(request), feature(request), environment(request), body));
}

export async function updateStrategy({
  request,
  env,
  principal,
  body,
}: AdminContext<v.InferOutput<typeof StrategySchema>>): Promise<Response> {
  const strategyId = pathParam(request, 'strategyId');
  return json(
    await service.updateStrategy(getDb(env), principal, project(request), feature(request), environment(request), strategyId, body),
  );
}

export async function getFeatureEnvironment({ request, env }: AdminContext): Promise<Response> {
  return json(await service.getFeatureEnvironment(getDb(env), project(request), feature(request), environment(request)));
}

export async function patchStrategy({ request, env, principal, body }: AdminContext<JsonPatch>): Promise<Response> {
  const strategyId = pathParam(request, 'strategyId');
  return json(
    await service.patchStrategy(getDb(env), principal, project(request), feature(request), environment(request), strategyId, body),
  );
}

export async function setStrategySortOrder({
  request,
  env,
  principal,
  body,
}: AdminContext<v.InferOutput<typeof StrategySortOrderSchema>>): Promise<Response> {
  await service.setStrategySortOrder(getDb(env), principal, project(request), feature(request), environment(request), body);
  return empty(200);
}

export async function deleteStrategy({ request, env, principal }: AdminContext): Promise<Response> {
  await service.deleteStrategy(
    getDb(env),
    principal,
    project(request),
    feature(request),
    environment(request),
    pathParam(request, 'strategyId'),
  );
  return empty(200);
}

export async function getVariants({ request, env }: AdminContext): Promise<Response> {
  return json(await service.getEnvironmentVariants(getDb(env), project(request), feature(request), environment(request)));
}

export async function putVariants({
  request,
  env,
  principal,
  body,
}: AdminContext<v.InferOutput<typeof VariantsSchema>>): Promise<Response> {
  const variants = body;
  return json(
    await service.setEnvironmentVariants(getDb(env), principal, project(request), feature(request), environment(request), variants),
  );
}

export async function patchEnvironmentVariants({ request, env, principal, body }: AdminContext<JsonPatch>): Promise<Response> {
  return json(
    await service.patchEnvironmentVariants(getDb(env), principal, project(request), feature(request), environment(request), body),
  );
}

export async function getFeatureVariants({ request, env }: AdminContext): Promise<Response> {
  return json(await service.getFeatureVariants(getDb(env), project(request), feature(request)));
}

export async function putFeatureVariants({
  request,
  env,
  principal,
  body,
}: AdminContext<v.InferOutput<typeof VariantsSchema>>): Promise<Response> {
  return json(await service.setFeatureVariants(getDb(env), principal, project(request), feature(request), body));
}

export async function patchFeatureVariants({ request, env, principal, body }: AdminContext<JsonPatch>): Promise<Response> {
  return json(await service.patchFeatureVariants(getDb(env), principal, project(request), feature(request), body));
}

export async function putVariantsBatch({
  request,
  env,
  principal,
  body,
}: AdminContext<v.InferOutput<typeof VariantsBatchSchema>>): Promise<Response> {
  return json(await service.setVariantsOnEnvironments(getDb(env), principal, principal, project(request), feature(request), body));
}

/** Unleash refuses a favourite write whose content type is not JSON, although it has no body (415). */
export async function addFavorite({ request, env, principal }: AdminContext): Promise<Response> {
  requireJsonContentType(request);
  await service.setFavorite(getDb(env), principal, project(request), feature(request), true);
  return empty(200);
}

export async function removeFavorite({ request, env, principal }: AdminContext): Promise<Response> {
  requireJsonContentType(request);
  await service.setFavorite(getDb(env), principal, project(request), feature(request), false);
  return empty(200);
}

export async function addDependency({ request, env, principal }: AdminContext): Promise<Response> {
  const body = await readJsonBody(request);
  await service.addDependency(getDb(env), principal, project(request), feature(request), body);
  return empty(200);
}

export async function removeDependency({ request, env, principal }: AdminContext): Promise<Response> {
  await service.removeDependency(getDb(env), principal, project(request), feature(request), pathParam(request, 'parent'));
  return empty(200);
}

export async function removeDependencies({ request, env, principal }: AdminContext): Promise<Response> {
  await service.removeDependency(getDb(env), principal, project(request), feature(request));
  return empty(200);
}

export async function getLifecycle({ request, env }: AdminContext): Promise<Response> {
  return json(await service.getLifecycle(getDb(env), project(request), feature(request)));
}

export async function complete({
  request,
  env,
  principal,
  body,
}: AdminContext<v.InferOutput<typeof CompleteLifecycleSchema>>): Promise<Response> {
  await service.completeFeature(getDb(env), principal, project(request), feature(request), body.status, body.statusValue ?? null);
  return empty(200);
}

export async function validateName({ request, env }: AdminContext): Promise<Response> {
  await service.validateNewName(getDb(env), await readJsonBody(request));
  return empty(200);
}

export async function parentVariants({ request, env }: AdminContext): Promise<Response> {
  return json(await service.possibleParentVariants(getDb(env), feature(request)));
}

export const routes: Route[] = [
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features',
    badRequestName: 'BadDataError',
    access: admin(CREATE_FEATURE, ({ params }) => ({ project: params.projectId })),
    tag: 'Features',
    operationId: 'createFeature',
    summary: 'Create a feature flag',
    responses: { 201: { description: 'Created', schema: CreateFeature201Response } },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: create,
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/features/:featureName',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Features',
    operationId: 'getFeature',
    summary: 'Get a feature flag with its environments and strategies',
    responses: { 200: { description: 'Success', schema: GetFeatureResponse } },
    errors: [400, 404],
    handler: get,
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/features/:featureName',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE, ({ params }) => ({ project: params.projectId })),
    tag: 'Features',
    operationId: 'updateFeature',
    summary: 'Update a feature flag',
    responses: { 200: { description: 'Success', schema: UpdateFeatureResponse } },
    errors: [400, 404, 413],
    handler: update,
  }),
  route({
    method: 'PATCH',
    path: '/api/admin/projects/:projectId/features/:featureName',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE, ({ params }) => ({ project: params.projectId })),
    tag: 'Features',
    operationId: 'patchFeature',
    summary: 'Change a feature flag with JSON Patch',
    responses: { 200: { description: 'Success', schema: PatchFeatureResponse } },
    errors: [400, 404, 413],
    handler: patch,
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/features/:featureName',
    badRequestName: 'BadDataError',
    access: admin(DELETE_FEATURE, ({ params }) => ({ project: params.projectId })),
    tag: 'Features',
    operationId: 'archiveFeature',
    summary: 'Archive a feature flag',
    responses: { 202: { description: 'Accepted', schema: null } },
    errors: [400, 403, 404],
    handler: archive,
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/stale',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE, ({ params }) => ({ project: params.projectId })),
    tag: 'Features',
    operationId: 'staleFeatures',
    summary: 'Mark feature flags stale or active',
    body: StaleSchema,
    responses: { 202: { description: 'Accepted', schema: null } },
    errors: [400, 404, 413],
    handler: stale,
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/revive',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE, ({ params }) => ({ project: params.projectId })),
    tag: 'Archive',
    operationId: 'reviveFeatures',
    summary: 'Revive archived feature flags',
    body: ReviveSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 413],
    handler: reviveInProject,
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
    handler: reviveOne,
  }),
  route({
    method: 'GET',
    path: '/api/admin/archive/features',
    access: authenticated(),
    tag: 'Archive',
    operationId: 'getArchivedFeatures',
    summary: 'List archived feature flags',
    responses: { 200: { description: 'Success', schema: GetArchivedFeaturesResponse } },
    handler: listArchived,
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
    handler: listArchivedInProject,
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
    handler: deleteArchived,
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/on',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_ENVIRONMENT, ({ params }) => ({ project: params.projectId, environment: params.environment })),
    tag: 'Features',
    operationId: 'toggleFeatureEnvironmentOn',
    summary: 'Turn a feature flag on in an environment',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 403, 404],
    handler: environmentOn,
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/off',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_ENVIRONMENT, ({ params }) => ({ project: params.projectId, environment: params.environment })),
    tag: 'Features',
    operationId: 'toggleFeatureEnvironmentOff',
    summary: 'Turn a feature flag off in an environment',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404],
    handler: environmentOff,
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Features',
    operationId: 'getFeatureStrategies',
    summary: "List a flag's strategies in an environment",
    responses: { 200: { description: 'Success', schema: GetFeatureStrategiesResponse } },
    errors: [400, 404],
    handler: listStrategies,
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies',
    badRequestName: 'BadDataError',
    access: admin(CREATE_FEATURE_STRATEGY, ({ params }) => ({ project: params.projectId, environment: params.environment })),
    tag: 'Features',
    operationId: 'addFeatureStrategy',
    summary: 'Add a strategy to a flag in an environment',
    body: StrategySchema,
    responses: { 200: { description: 'Success', schema: AddFeatureStrategyResponse } },
    errors: [400, 403, 404, 413],
    handler: addStrategy,
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Features',
    operationId: 'getFeatureStrategy',
    summary: 'Get one strategy of a flag',
    responses: { 200: { description: 'Success', schema: AddFeatureStrategyResponse } },
    errors: [400, 404],
    handler: getStrategy,
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_STRATEGY, ({ params }) => ({ project: params.projectId, environment: params.environment })),
    tag: 'Features',
    operationId: 'updateFeatureStrategy',
    summary: 'Replace a strategy of a flag',
    body: StrategySchema,
    responses: { 200: { description: 'Success', schema: UpdateFeatureStrategyResponse } },
    errors: [400, 404, 413],
    handler: updateStrategy,
  }),
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
    handler: getFeatureEnvironment,
  }),
  route({
    method: 'PATCH',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_STRATEGY, ({ params }) => ({ project: params.projectId, environment: params.environment })),
    tag: 'Features',
    operationId: 'patchFeatureStrategy',
    summary: 'Change a strategy of a flag with a JSON Patch',
    body: JsonPatchSchema,
    responses: { 200: { description: 'Success', schema: UpdateFeatureStrategyResponse } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: patchStrategy,
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/set-sort-order',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_STRATEGY, ({ params }) => ({ project: params.projectId, environment: params.environment })),
    tag: 'Features',
    operationId: 'setStrategySortOrder',
    summary: "Reorder a flag's strategies in an environment",
    body: StrategySortOrderSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: setStrategySortOrder,
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId',
    badRequestName: 'BadDataError',
    access: admin(DELETE_FEATURE_STRATEGY, ({ params }) => ({ project: params.projectId, environment: params.environment })),
    tag: 'Features',
    operationId: 'deleteFeatureStrategy',
    summary: 'Remove a strategy from a flag',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404],
    handler: deleteStrategy,
  }),
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
    handler: getVariants,
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/variants',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_ENVIRONMENT_VARIANTS, ({ params }) => ({ project: params.projectId, environment: params.environment })),
    tag: 'Features',
    operationId: 'overwriteEnvironmentFeatureVariants',
    summary: "Replace a flag's variants in an environment",
    body: VariantsSchema,
    responses: { 200: { description: 'Success', schema: OverwriteEnvironmentFeatureVariantsResponse } },
    errors: [400, 403, 404, 413],
    handler: putVariants,
  }),
  route({
    method: 'PATCH',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/variants',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_ENVIRONMENT_VARIANTS, ({ params }) => ({ project: params.projectId, environment: params.environment })),
    tag: 'Features',
    operationId: 'patchEnvironmentsFeatureVariants',
    summary: "Change a flag's variants in an environment with a JSON Patch",
    body: JsonPatchSchema,
    responses: { 200: { description: 'Success', schema: OverwriteEnvironmentFeatureVariantsResponse } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: patchEnvironmentVariants,
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
    handler: getFeatureVariants,
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/features/:featureName/variants',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_VARIANTS, ({ params }) => ({ project: params.projectId })),
    tag: 'Features',
    operationId: 'overwriteFeatureVariants',
    summary: "Replace a flag's variants in all its environments",
    body: VariantsSchema,
    responses: { 200: { description: 'Success', schema: OverwriteEnvironmentFeatureVariantsResponse } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: putFeatureVariants,
  }),
  route({
    method: 'PATCH',
    path: '/api/admin/projects/:projectId/features/:featureName/variants',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_VARIANTS, ({ params }) => ({ project: params.projectId })),
    tag: 'Features',
    operationId: 'patchFeatureVariants',
    summary: "Change a flag's variants in every environment with a JSON Patch",
    body: JsonPatchSchema,
    responses: { 200: { description: 'Success', schema: OverwriteEnvironmentFeatureVariantsResponse } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: patchFeatureVariants,
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
    handler: putVariantsBatch,
  }),
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
    handler: addFavorite,
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
    handler: removeFavorite,
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/dependencies',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_DEPENDENCY, ({ params }) => ({ project: params.projectId })),
    tag: 'Dependencies',
    operationId: 'addFeatureDependency',
    summary: 'Make a flag depend on a parent flag',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 403, 404, 413],
    handler: addDependency,
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/features/:featureName/dependencies',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_DEPENDENCY, ({ params }) => ({ project: params.projectId })),
    tag: 'Dependencies',
    operationId: 'deleteFeatureDependencies',
    summary: "Remove all of a flag's dependencies",
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404],
    handler: removeDependencies,
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/features/:featureName/dependencies/:parent',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_DEPENDENCY, ({ params }) => ({ project: params.projectId })),
    tag: 'Dependencies',
    operationId: 'deleteFeatureDependency',
    summary: 'Remove one dependency of a flag',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404],
    handler: removeDependency,
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/features/:featureName/lifecycle',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Unstable',
    operationId: 'getFeatureLifecycle',
    summary: "Get a flag's lifecycle stages",
    responses: { 200: { description: 'Success', schema: GetFeatureLifecycleResponse } },
    errors: [400, 404],
    handler: getLifecycle,
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/lifecycle/complete',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE, ({ params }) => ({ project: params.projectId })),
    tag: 'Unstable',
    operationId: 'complete',
    summary: "Mark a flag's lifecycle complete",
    body: CompleteLifecycleSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 413],
    handler: complete,
  }),
  route({
    method: 'POST',
    path: '/api/admin/features/validate',
    access: authenticated(),
    tag: 'Features',
    operationId: 'validateFeature',
    summary: 'Check that a feature flag name is free and valid',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 409, 413],
    handler: validateName,
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/features/:featureName/parent-variants',
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Dependencies',
    operationId: 'listParentVariantOptions',
    summary: "List the variants of a flag's parent",
    responses: { 200: { description: 'Success', schema: ListParentVariantOptionsResponse } },
    errors: [400],
    handler: parentVariants,
  }),
];
