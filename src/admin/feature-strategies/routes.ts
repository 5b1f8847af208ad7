/** A flag's strategies in one environment: list, read, add, replace, patch, reorder, remove. */
import { CREATE_FEATURE_STRATEGY, DELETE_FEATURE_STRATEGY, UPDATE_FEATURE_STRATEGY } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { JsonPatchSchema } from '../../http/json-patch';
import { empty, json } from '../../http/responses';
import { admin, authenticated, route, type Route, type Scope, type ScopeInput } from '../../http/route';
import {
  AddFeatureStrategyResponse,
  GetFeatureStrategiesResponse,
  StrategySchema,
  StrategySortOrderSchema,
  UpdateFeatureStrategyResponse,
} from './schema';
import * as service from './service';

const inEnvironment = ({ params }: ScopeInput): Scope => ({ project: params.projectId, environment: params.environment });

export const routes: Route[] = [
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
    handler: async ({ env, params }) =>
      json(await service.listStrategies(getDb(env), params.projectId, params.featureName, params.environment)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies',
    badRequestName: 'BadDataError',
    access: admin(CREATE_FEATURE_STRATEGY, inEnvironment),
    tag: 'Features',
    operationId: 'addFeatureStrategy',
    summary: 'Add a strategy to a flag in an environment',
    body: StrategySchema,
    responses: { 200: { description: 'Success', schema: AddFeatureStrategyResponse } },
    errors: [400, 403, 404, 413],
    handler: async ({ env, principal, params, body }) =>
      json(await service.addStrategy(getDb(env), principal, params.projectId, params.featureName, params.environment, body)),
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
    handler: async ({ env, params }) =>
      json(await service.getStrategy(getDb(env), params.projectId, params.featureName, params.environment, params.strategyId)),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_STRATEGY, inEnvironment),
    tag: 'Features',
    operationId: 'updateFeatureStrategy',
    summary: 'Replace a strategy of a flag',
    body: StrategySchema,
    responses: { 200: { description: 'Success', schema: UpdateFeatureStrategyResponse } },
    errors: [400, 404, 413],
    handler: async ({ env, principal, params, body }) =>
      json(
        await service.updateStrategy(
          getDb(env),
          principal,
          params.projectId,
          params.featureName,
          params.environment,
          params.strategyId,
          body,
        ),
      ),
  }),
  route({
    method: 'PATCH',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_STRATEGY, inEnvironment),
    tag: 'Features',
    operationId: 'patchFeatureStrategy',
    summary: 'Change a strategy of a flag with a JSON Patch',
    body: JsonPatchSchema,
    responses: { 200: { description: 'Success', schema: UpdateFeatureStrategyResponse } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ env, principal, params, body }) =>
      json(
        await service.patchStrategy(
          getDb(env),
          principal,
          params.projectId,
          params.featureName,
          params.environment,
          params.strategyId,
          body,
        ),
      ),
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/set-sort-order',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_STRATEGY, inEnvironment),
    tag: 'Features',
    operationId: 'setStrategySortOrder',
    summary: "Reorder a flag's strategies in an environment",
    body: StrategySortOrderSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.setStrategySortOrder(getDb(env), principal, params.projectId, params.featureName, params.environment, body);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId',
    badRequestName: 'BadDataError',
    access: admin(DELETE_FEATURE_STRATEGY, inEnvironment),
    tag: 'Features',
    operationId: 'deleteFeatureStrategy',
    summary: 'Remove a strategy from a flag',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.deleteStrategy(getDb(env), principal, params.projectId, params.featureName, params.environment, params.strategyId);
      return empty(200);
    },
  }),
];
