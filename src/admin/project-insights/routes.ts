/**
 * What a project's Applications, Health and Insights pages read: the applications that
 * reported its flags, their outdated SDKs, its health report, insights, status and DORA lead
 * time. Any admin-API caller may read them, as in Unleash (its permission is NONE).
 */
import { getDb } from '../../db/client';
import { json } from '../../http/responses';
import { authenticated, route, type AdminContext, type Route } from '../../http/route';
import { GetOutdatedSdksResponse } from '../applications/schema';
import {
  GetProjectApplicationsResponse,
  GetProjectDoraResponse,
  GetProjectHealthReportResponse,
  GetProjectInsightsResponse,
  GetProjectStatusResponse,
  ProjectApplicationsQuery,
} from './schema';
import * as service from './service';

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/applications',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getProjectApplications',
    summary: 'Get a list of all applications for a project.',
    query: ProjectApplicationsQuery,
    responses: { 200: { description: 'Success', schema: GetProjectApplicationsResponse } },
    errors: [400],
    handler: async ({ env, params, query }: AdminContext<undefined, ProjectApplicationsQuery>) =>
      json(await service.applications(getDb(env), params.projectId!, query)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/sdks/outdated',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getOutdatedProjectSdks',
    summary: 'Get outdated project SDKs',
    responses: { 200: { description: 'Success', schema: GetOutdatedSdksResponse } },
    errors: [400],
    handler: async ({ env, params }) => json(await service.outdatedProjectSdks(getDb(env), params.projectId)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/dora',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getProjectDora',
    summary: 'Get an overview project dora metrics.',
    responses: { 200: { description: 'Success', schema: GetProjectDoraResponse } },
    errors: [400],
    handler: async ({ env, params }) => json(await service.dora(getDb(env), params.projectId)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/insights',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getProjectInsights',
    summary: 'Get an overview of a project insights.',
    responses: { 200: { description: 'Success', schema: GetProjectInsightsResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json(await service.insights(getDb(env), params.projectId)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/status',
    access: authenticated(),
    tag: 'Unstable',
    operationId: 'getProjectStatus',
    summary: 'Get project status',
    responses: { 200: { description: 'Success', schema: GetProjectStatusResponse } },
    errors: [400],
    handler: async ({ env, params }) => json(await service.status(getDb(env), params.projectId)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/health-report',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getProjectHealthReport',
    summary: 'Get a health report for a project.',
    responses: { 200: { description: 'Success', schema: GetProjectHealthReportResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json(await service.healthReport(getDb(env), params.projectId)),
  }),
];
