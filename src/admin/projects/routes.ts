/** Projects: the route objects; the rules are in service.ts. */
import { CREATE_PROJECT, DELETE_PROJECT, UPDATE_PROJECT } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, authenticated, route, type Route } from '../../http/route';
import {
  ArchivedQuery,
  AttachEnvironmentSchema,
  CheckDependenciesExistResponse,
  CreateProject201Response,
  CreateProjectSchema,
  GetDeprecatedProjectOverviewResponse,
  GetProjectFlagCreatorsResponse,
  GetProjectOverviewResponse,
  GetProjectsResponse,
  UpdateProjectSchema,
} from './schema';
import * as service from './service';

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/projects',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getProjects',
    summary: 'List projects',
    query: ArchivedQuery,
    responses: { 200: { description: 'Success', schema: GetProjectsResponse } },
    errors: [400, 403],
    // `?archived=true` lists the archived projects instead of the live ones (the settings page asks).
    handler: async ({ env, principal, query }) => json(await service.listProjects(getDb(env), principal, query.archived === 'true')),
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects',
    access: admin(CREATE_PROJECT),
    tag: 'Projects',
    operationId: 'createProject',
    summary: 'Create a project',
    body: CreateProjectSchema,
    responses: { 201: { description: 'Created', schema: CreateProject201Response } },
    errors: [400, 403, 409, 413],
    handler: async ({ env, principal, body }) =>
      json(await service.createProject(getDb(env), principal, body), 201, {
        location: `/api/admin/projects/${encodeURIComponent(body.id)}`,
      }),
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getDeprecatedProjectOverview',
    summary: 'Get a project with its flags',
    query: ArchivedQuery,
    responses: { 200: { description: 'Success', schema: GetDeprecatedProjectOverviewResponse } },
    errors: [400, 404],
    handler: async ({ env, principal, params, query }) =>
      json(await service.projectWithFlags(getDb(env), principal, params.projectId, query.archived === 'true')),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId',
    access: admin(UPDATE_PROJECT, ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'updateProject',
    summary: "Change a project's name and description (Unleash Enterprise)",
    body: UpdateProjectSchema,
    responses: { 200: { description: 'Updated, no body', schema: null } },
    errors: [400, 404, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.updateProject(getDb(env), principal, params.projectId, body);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId',
    access: admin(DELETE_PROJECT, ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'deleteProject',
    summary: 'Delete a project that has no live flags (Unleash Enterprise)',
    responses: { 200: { description: 'Deleted, no body', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.deleteProject(env, getDb(env), principal, params.projectId);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/environments',
    access: admin(UPDATE_PROJECT, ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'addEnvironmentToProject',
    summary: 'Enable an environment in a project',
    body: AttachEnvironmentSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404, 413],
    handler: async ({ env, principal, params, body }) => {
      await service.attachEnvironment(getDb(env), principal, params.projectId, body);
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/overview',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getProjectOverview',
    summary: "A project's overview: settings, environments and counts",
    responses: { 200: { description: 'Success', schema: GetProjectOverviewResponse } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => json(await service.projectOverview(getDb(env), principal, params.projectId)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/flag-creators',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getProjectFlagCreators',
    summary: "List who created a project's flags",
    responses: { 200: { description: 'Success', schema: GetProjectFlagCreatorsResponse } },
    errors: [400],
    handler: async ({ env, params }) => json(await service.flagCreators(getDb(env), params.projectId)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/dependencies',
    access: authenticated(),
    tag: 'Dependencies',
    operationId: 'checkDependenciesExist',
    summary: 'Whether any flag of the project has dependencies',
    responses: { 200: { description: 'Success', schema: CheckDependenciesExistResponse } },
    errors: [400],
    handler: async ({ env }) => json(await service.hasDependencies(getDb(env))),
  }),
];
