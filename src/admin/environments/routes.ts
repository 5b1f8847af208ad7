/** Environments: the route objects; the rules are in service.ts. */
import { ADMIN, UPDATE_PROJECT, PROJECT_DEFAULT_STRATEGY_WRITE } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, authenticated, route, type Route } from '../../http/route';
import {
  CloneEnvironmentSchema,
  CreateEnvironmentSchema,
  DefaultStrategyResponse,
  DefaultStrategySchema,
  GetAllEnvironmentsResponse,
  GetEnvironmentResponse,
  GetProjectEnvironmentsResponse,
  SortOrderSchema,
  UpdateEnvironmentSchema,
  ValidateEnvironmentNameSchema,
} from './schema';
import * as service from './service';

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/environments',
    access: authenticated(),
    tag: 'Environments',
    operationId: 'getAllEnvironments',
    summary: 'List environments',
    responses: { 200: { description: 'Success', schema: GetAllEnvironmentsResponse } },
    handler: async ({ env }) => json(await service.listEnvironments(getDb(env))),
  }),
  route({
    method: 'GET',
    path: '/api/admin/environments/:name',
    access: authenticated(),
    tag: 'Environments',
    operationId: 'getEnvironment',
    summary: 'Get an environment',
    responses: { 200: { description: 'Success', schema: GetEnvironmentResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json(await service.getEnvironment(getDb(env), params.name)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/environments/project/:projectId',
    access: authenticated(),
    tag: 'Environments',
    operationId: 'getProjectEnvironments',
    summary: 'List environments as a project uses them',
    responses: { 200: { description: 'Success', schema: GetProjectEnvironmentsResponse } },
    errors: [400],
    handler: async ({ env, params }) => json(await service.projectEnvironments(getDb(env), params.projectId)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/environments/:name/on',
    access: admin(ADMIN),
    tag: 'Environments',
    operationId: 'toggleEnvironmentOn',
    summary: 'Turn an environment on',
    responses: { 204: { description: 'Done, no content', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.setEnabled(getDb(env), principal, params.name, true);
      return empty(204);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/environments/:name/off',
    access: admin(ADMIN),
    tag: 'Environments',
    operationId: 'toggleEnvironmentOff',
    summary: 'Turn an environment off',
    responses: { 204: { description: 'Done, no content', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.setEnabled(getDb(env), principal, params.name, false);
      return empty(204);
    },
  }),
  route({
    method: 'PUT',
    path: '/api/admin/environments/sort-order',
    access: admin(ADMIN),
    tag: 'Environments',
    operationId: 'updateSortOrder',
    summary: 'Reorder environments',
    body: SortOrderSchema,
    responses: { 200: { description: 'Done, no body', schema: null } },
    errors: [400, 413, 415],
    handler: async ({ env, principal, body }) => {
      await service.setSortOrder(getDb(env), principal, body);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/environments/:environment',
    access: admin(UPDATE_PROJECT, ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'removeEnvironmentFromProject',
    summary: 'Remove an environment from a project',
    responses: { 200: { description: 'Done, no body', schema: null } },
    errors: [400],
    handler: async ({ env, principal, params }) => {
      await service.detachFromProject(getDb(env), principal, params.projectId, params.environment);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/environments/:environment/default-strategy',
    badRequestName: 'BadDataError',
    access: admin([UPDATE_PROJECT, PROJECT_DEFAULT_STRATEGY_WRITE], ({ params }) => ({
      project: params.projectId,
      environment: params.environment,
    })),
    tag: 'Projects',
    operationId: 'addDefaultStrategyToProjectEnvironment',
    summary: 'Set the strategy a flag gets when first enabled in a project environment',
    body: DefaultStrategySchema,
    responses: { 200: { description: 'The default strategy', schema: DefaultStrategyResponse } },
    errors: [400, 404, 413, 415],
    handler: async ({ env, principal, params, body }) =>
      json(await service.setDefaultStrategy(getDb(env), principal, params.projectId, params.environment, body)),
  }),
  // Beyond the open-source build, as Unleash Enterprise has them (its Terraform provider manages these).
  route({
    method: 'POST',
    path: '/api/admin/environments',
    access: admin(ADMIN),
    tag: 'Environments',
    operationId: 'createEnvironment',
    summary: 'Create an environment (as Unleash Enterprise)',
    body: CreateEnvironmentSchema,
    responses: { 201: { description: 'Created', schema: GetEnvironmentResponse, headers: { location: 'The new environment' } } },
    errors: [400, 409, 413, 415],
    handler: async ({ env, principal, body }) => {
      const created = await service.createEnvironment(getDb(env), principal, body);
      return json(created, 201, { location: `/api/admin/environments/${created.name}` });
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/environments/:name/clone',
    access: admin(ADMIN),
    tag: 'Environments',
    operationId: 'cloneEnvironment',
    summary: "Clone an environment with its flags' states and strategies (as Unleash Enterprise)",
    body: CloneEnvironmentSchema,
    responses: { 201: { description: 'Created', schema: GetEnvironmentResponse, headers: { location: 'The new environment' } } },
    errors: [400, 404, 409, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      const created = await service.cloneEnvironment(getDb(env), principal, params.name, body);
      return json(created, 201, { location: `/api/admin/environments/${created.name}` });
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/environments/validate',
    access: admin(ADMIN),
    tag: 'Environments',
    operationId: 'validateEnvironmentName',
    summary: 'Check that a new environment could take a name (as Unleash Enterprise)',
    body: ValidateEnvironmentNameSchema,
    responses: { 200: { description: 'The name is free, no body', schema: null } },
    errors: [400, 409, 413, 415],
    handler: async ({ env, body }) => {
      await service.validateName(getDb(env), body.name);
      return empty(200);
    },
  }),
  route({
    method: 'PUT',
    path: '/api/admin/environments/update/:name',
    access: admin(ADMIN),
    tag: 'Environments',
    operationId: 'updateEnvironment',
    summary: "Change an environment's type or sort order (as Unleash Enterprise)",
    body: UpdateEnvironmentSchema,
    responses: { 200: { description: 'The environment', schema: GetEnvironmentResponse } },
    errors: [400, 404, 413, 415],
    handler: async ({ env, principal, params, body }) => json(await service.updateEnvironment(getDb(env), principal, params.name, body)),
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/environments/:name',
    access: admin(ADMIN),
    tag: 'Environments',
    operationId: 'removeEnvironment',
    summary: 'Delete an environment (as Unleash Enterprise)',
    responses: { 200: { description: 'Done, no body', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.deleteEnvironment(getDb(env), principal, params.name);
      return empty(200);
    },
  }),
];
