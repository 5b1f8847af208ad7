/** `/api/admin/groups`: Unleash Enterprise's user groups, as the served UI's group pages call them. */
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { parseInput } from '../../http/validation';
import { IdParams } from '../users/schema';
import { GroupAnswer, GroupInputSchema, GroupsAnswer } from './schema';
import * as service from './service';
import { ADMIN } from '../../auth/permissions';
import { admin, authenticated, route, type Route } from '../../http/route';

/** The group a path names: a number, or null for one too large to exist (404). */
function groupId(params: { id: string }): number | null {
  return parseInput(IdParams, { id: params.id }, '/params').id;
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/groups',
    access: authenticated(),
    tag: 'Users',
    operationId: 'getGroups',
    summary: 'List groups with their members and projects',
    responses: { 200: { description: 'Success', schema: GroupsAnswer } },
    errors: [401, 403],
    handler: async ({ env }) => json(await service.listGroups(getDb(env))),
  }),
  route({
    method: 'POST',
    path: '/api/admin/groups',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'createGroup',
    summary: 'Create a group',
    body: GroupInputSchema,
    responses: { 201: { description: 'Created', schema: GroupAnswer } },
    errors: [400, 401, 403, 409, 413, 415],
    handler: async ({ env, principal, body }) => {
      const group = await service.createGroup(getDb(env), principal, body);
      return json(group, 201, { location: `/api/admin/groups/${group.id}` });
    },
  }),
  route({
    // Before `/groups/:id`, which would take `scim-groups` for a group id.
    method: 'DELETE',
    path: '/api/admin/groups/scim-groups',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'deleteScimGroups',
    summary: 'Delete every group a SCIM directory provisioned',
    responses: { 200: { description: 'Done, no body', schema: null } },
    handler: async ({ env, principal }) => {
      await service.deleteScimGroups(getDb(env), principal);
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/groups/:id',
    access: authenticated(),
    tag: 'Users',
    operationId: 'getGroup',
    summary: 'Get a group with its members',
    responses: { 200: { description: 'Success', schema: GroupAnswer } },
    errors: [400, 401, 403, 404],
    handler: async ({ env, params }) => json(await service.getGroup(getDb(env), groupId(params))),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/groups/:id',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'updateGroup',
    summary: 'Update a group: its name, description, SSO mappings, root role and members',
    body: GroupInputSchema,
    responses: { 200: { description: 'Success', schema: GroupAnswer } },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ env, principal, params, body }) => json(await service.updateGroup(getDb(env), principal, groupId(params), body)),
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/groups/:id',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'deleteGroup',
    summary: 'Delete a group (its members keep their own roles)',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 404],
    handler: async ({ env, principal, params }) => {
      await service.deleteGroup(getDb(env), principal, groupId(params));
      return empty(200);
    },
  }),
];
