/** Admin → Network → Data usage: requests the service answered, per day or month and API path group. */
import { ADMIN } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { json } from '../../http/responses';
import { admin, route, type Route } from '../../http/route';
import { TrafficBundlesResponse, TrafficSearchQuery, TrafficUsageResponse } from './schema';
import { trafficUsage } from './service';

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/metrics/traffic-search',
    access: admin(ADMIN),
    tag: 'Instance Admin',
    operationId: 'getTrafficDataUsageForPeriod',
    summary: 'Requests the service answered from `from` to `to`, per day or month and API path group',
    query: TrafficSearchQuery,
    responses: { 200: { description: 'Traffic usage', schema: TrafficUsageResponse } },
    handler: async ({ env, query }) => json(await trafficUsage(getDb(env), query)),
  }),
  route({
    method: 'GET',
    path: '/api/instance/trafficBundles',
    access: admin(ADMIN),
    tag: 'Instance Admin',
    operationId: 'getTrafficBundles',
    summary: 'Requests a plan includes and were bought (millions): none, as this service sells no plans',
    responses: { 200: { description: 'Traffic bundles', schema: TrafficBundlesResponse } },
    handler: () => json({ includedTraffic: 0, purchasedTraffic: 0 }),
  }),
];
