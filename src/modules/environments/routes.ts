/** Environments: the route objects; the rules are in service.ts. */
import { getDb } from '../../db/client';
import { json } from '../../http/responses';
import { authenticated, route, type Route } from '../../http/route';
import { GetAllEnvironmentsResponse } from './schema';
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
];
