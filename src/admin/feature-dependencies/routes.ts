/** Flag dependencies: add and remove a child's parent, and the options the UI offers for both. */
import { UPDATE_FEATURE_DEPENDENCY } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, authenticated, route, type Route, type Scope, type ScopeInput } from '../../http/route';
import { DependencySchema, ListParentOptionsResponse, ListParentVariantOptionsResponse } from './schema';
import * as service from './service';

const inProject = ({ params }: ScopeInput): Scope => ({ project: params.projectId });

export const routes: Route[] = [
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/dependencies',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_DEPENDENCY, inProject),
    tag: 'Dependencies',
    operationId: 'addFeatureDependency',
    summary: 'Make a flag depend on a parent flag',
    body: DependencySchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 403, 404, 413],
    handler: async ({ env, principal, params, body }) => {
      await service.addDependency(getDb(env), principal, params.projectId, params.featureName, body);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/features/:featureName/dependencies',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_DEPENDENCY, inProject),
    tag: 'Dependencies',
    operationId: 'deleteFeatureDependencies',
    summary: "Remove all of a flag's dependencies",
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.removeDependency(getDb(env), principal, params.projectId, params.featureName);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/features/:featureName/dependencies/:parent',
    badRequestName: 'BadDataError',
    access: admin(UPDATE_FEATURE_DEPENDENCY, inProject),
    tag: 'Dependencies',
    operationId: 'deleteFeatureDependency',
    summary: 'Remove one dependency of a flag',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.removeDependency(getDb(env), principal, params.projectId, params.featureName, params.parent);
      return empty(200);
    },
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
    handler: async ({ env, params }) => json(await service.possibleParentVariants(getDb(env), params.featureName)),
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
];
