/** The instance statistics page: the route objects; the counting is in service.ts and store.ts. */
import { getDb } from '../../db/client';
import { json, untyped } from '../../http/responses';
import { authenticated, route, type Route } from '../../http/route';
import { GetInstanceAdminStatsResponse, LicensedUsersResponse } from './schema';
import * as service from './service';

export const routes: Route[] = [
  // The seats box of the Users page (shown once the UI's Enterprise panels are on; no switch hides it).
  route({
    method: 'GET',
    path: '/api/admin/licensed-users',
    access: authenticated(),
    tag: 'Instance Admin',
    operationId: 'getLicensedUsers',
    summary: 'Seats used: people signed in over the last 30 days, of all accounts (no licence caps them here)',
    responses: { 200: { description: 'Success', schema: LicensedUsersResponse } },
    handler: async ({ env }) => json(await service.licensedUsers(getDb(env))),
  }),
  route({
    method: 'GET',
    path: '/api/admin/instance-admin/statistics',
    access: authenticated(),
    tag: 'Instance Admin',
    operationId: 'getInstanceAdminStats',
    summary: 'Counts of what this instance holds',
    responses: { 200: { description: 'Success', schema: GetInstanceAdminStatsResponse } },
    handler: async ({ env }) => json(await service.statistics(getDb(env))),
  }),
  route({
    method: 'GET',
    path: '/api/admin/instance-admin/statistics/csv',
    access: authenticated(),
    tag: 'Instance Admin',
    operationId: 'getInstanceAdminStatsCsv',
    summary: 'Counts of what this instance holds, as a CSV download',
    responses: { 200: { description: 'Success', schema: null, contentType: 'text/csv' } },
    handler: async ({ env }) => {
      const { csv, fileName } = await service.statisticsCsv(getDb(env));
      return untyped(
        new Response(csv, {
          headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${fileName}"` },
        }),
      );
    },
  }),
];
