/**
 * The applications SDKs registered: the list, one application's page (details, overview,
 * instances per environment), outdated SDKs, and an admin's description or removal of one.
 * Reads are open to any admin-API caller, as in Unleash; writes need UPDATE_APPLICATION.
 */
import { UPDATE_APPLICATION } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, authenticated, route, type AdminContext, type Route } from '../../http/route';
import {
  ApplicationsQuery,
  CreateApplicationSchema,
  GetApplicationEnvironmentInstancesResponse,
  GetApplicationOverviewResponse,
  GetApplicationResponse,
  GetApplicationsResponse,
  GetOutdatedSdksResponse,
  type CreateApplicationInput,
} from './schema';
import * as service from './service';

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/metrics/applications',
    access: authenticated(),
    tag: 'Metrics',
    operationId: 'getApplications',
    summary: 'Get all applications',
    query: ApplicationsQuery,
    responses: { 200: { description: 'Success', schema: GetApplicationsResponse } },
    handler: async ({ env, query }: AdminContext<undefined, ApplicationsQuery>) => json(await service.listApplications(getDb(env), query)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/metrics/applications/:appName',
    access: authenticated(),
    tag: 'Metrics',
    operationId: 'getApplication',
    summary: 'Get application data',
    responses: { 200: { description: 'Success', schema: GetApplicationResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json(await service.getApplication(getDb(env), params.appName)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/metrics/applications/:appName',
    access: admin(UPDATE_APPLICATION),
    tag: 'Metrics',
    operationId: 'createApplication',
    summary: 'Create an application to connect reported metrics',
    body: CreateApplicationSchema,
    responses: { 202: { description: 'Accepted', schema: null } },
    errors: [400, 403],
    handler: async ({ env, params, body }) => {
      await service.createApplication(getDb(env), params.appName, body as CreateApplicationInput);
      return empty(202);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/metrics/applications/:appName',
    access: admin(UPDATE_APPLICATION),
    tag: 'Metrics',
    operationId: 'deleteApplication',
    summary: 'Delete an application',
    responses: { 200: { description: 'Deleted (also when there was no such application)', schema: null } },
    errors: [400, 403],
    handler: async ({ env, params }) => {
      await service.deleteApplication(getDb(env), params.appName);
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/metrics/applications/:appName/overview',
    access: authenticated(),
    tag: 'Metrics',
    operationId: 'getApplicationOverview',
    summary: 'Get application overview',
    responses: { 200: { description: 'Success', schema: GetApplicationOverviewResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json(await service.getApplicationOverview(getDb(env), params.appName)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/metrics/instances/:appName/environment/:environment',
    access: authenticated(),
    tag: 'Metrics',
    operationId: 'getApplicationEnvironmentInstances',
    summary: 'Get application environment instances (Last 24h)',
    responses: { 200: { description: 'Success', schema: GetApplicationEnvironmentInstancesResponse } },
    errors: [400],
    handler: async ({ env, params }) => json(await service.recentInstances(getDb(env), params.appName, params.environment)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/metrics/sdks/outdated',
    access: authenticated(),
    tag: 'Metrics',
    operationId: 'getOutdatedSdks',
    summary: 'Get outdated SDKs',
    responses: { 200: { description: 'Success', schema: GetOutdatedSdksResponse } },
    handler: async ({ env }) => json(await service.listOutdatedSdks(getDb(env))),
  }),
];
