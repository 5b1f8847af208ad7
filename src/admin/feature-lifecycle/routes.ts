/** A flag's lifecycle: its stages, completing it and taking that back, and the count per stage. */
import { UPDATE_FEATURE } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, authenticated, route, type Route, type Scope, type ScopeInput } from '../../http/route';
import { CompleteLifecycleSchema, GetFeatureLifecycleResponse, GetFeatureLifecycleStageCountResponse } from './schema';
import * as service from './service';

const inProject = ({ params }: ScopeInput): Scope => ({ project: params.projectId });

export const routes: Route[] = [
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
    handler: async ({ env, params }) => json(await service.getLifecycle(getDb(env), params.featureName)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/lifecycle/complete',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE, inProject),
    tag: 'Unstable',
    operationId: 'complete',
    summary: "Mark a flag's lifecycle complete",
    body: CompleteLifecycleSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 413],
    handler: async ({ env, principal, params, body }) => {
      await service.completeFeature(getDb(env), principal, params.projectId, params.featureName, body.status, body.statusValue ?? null);
      return empty(200);
    },
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
