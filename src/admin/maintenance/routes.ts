/** Maintenance mode: the route objects; the rules are in service.ts. */
import { ADMIN, UPDATE_MAINTENANCE_MODE } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { MAINTENANCE_PATH } from '../../http/maintenance';
import { admin, route, type Route } from '../../http/route';
import { MaintenanceSchema } from './schema';
import * as service from './service';

export const routes: Route[] = [
  route({
    method: 'GET',
    path: MAINTENANCE_PATH,
    access: admin([ADMIN, UPDATE_MAINTENANCE_MODE]),
    tag: 'Maintenance',
    operationId: 'getMaintenance',
    summary: 'Whether maintenance mode is on',
    responses: { 200: { description: 'Success', schema: MaintenanceSchema } },
    handler: async ({ env }) => json(await service.getMaintenance(getDb(env))),
  }),
  route({
    method: 'POST',
    path: MAINTENANCE_PATH,
    access: admin([ADMIN, UPDATE_MAINTENANCE_MODE]),
    tag: 'Maintenance',
    operationId: 'toggleMaintenance',
    summary: 'Turn maintenance mode on or off',
    body: MaintenanceSchema,
    responses: { 204: { description: 'Done, no content', schema: null } },
    errors: [400, 413, 415],
    handler: async ({ env, principal, body }) => {
      await service.setMaintenance(getDb(env), principal, body);
      return empty(204);
    },
  }),
];
