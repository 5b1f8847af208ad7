/** The login history (Admin → Login history): the route objects; the recording is in service.ts. */
import { ADMIN } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json, untyped } from '../../http/responses';
import { admin, route, type Route } from '../../http/route';
import { parseInput } from '../../http/validation';
import { LoginEventParams, LoginHistoryResponse } from './schema';
import * as service from './service';

/** Unleash's permission to read the login history (held through ADMIN, or a custom root role). */
const READ_LOGS = 'READ_LOGS';

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/logins',
    access: admin([ADMIN, READ_LOGS]),
    tag: 'Instance Admin',
    operationId: 'getLoginHistory',
    summary: 'Every sign-in attempt of the last 14 days, newest first (JSON, or CSV for Accept: text/csv)',
    responses: { 200: { description: 'Success', schema: LoginHistoryResponse } },
    errors: [401, 403],
    handler: async ({ request, env }) =>
      request.headers.get('accept')?.includes('text/csv')
        ? untyped(
            new Response(await service.loginsCsv(getDb(env)), {
              headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="login-history.csv"' },
            }),
          )
        : json({ events: await service.listLogins(getDb(env)) }),
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/logins/:id',
    access: admin(ADMIN),
    tag: 'Instance Admin',
    operationId: 'deleteLoginEvent',
    summary: 'Delete one sign-in attempt from the history',
    responses: { 204: { description: 'Deleted, no content', schema: null } },
    errors: [400, 401, 403, 404],
    handler: async ({ env, principal, params }) => {
      await service.deleteLogin(getDb(env), principal, parseInput(LoginEventParams, params, '/params').id);
      return empty(204);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/logins',
    access: admin(ADMIN),
    tag: 'Instance Admin',
    operationId: 'deleteAllLoginEvents',
    summary: 'Delete the whole sign-in history',
    responses: { 204: { description: 'Deleted, no content', schema: null } },
    errors: [401, 403],
    handler: async ({ env, principal }) => {
      await service.deleteAllLogins(getDb(env), principal);
      return empty(204);
    },
  }),
];
