import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { parseInput } from '../../http/validation';
import { IdParams } from '../users/schema';
import { RoleDefinitionSchema } from './schema';
import * as service from './service';
import { ADMIN } from '../../auth/permissions';
import { admin, authenticated, route, type Route } from '../../http/route';
import { GetRolesResponse, CreateRole201Response, GetRoleByIdResponse, UpdateRoleResponse, GetPermissionsResponse } from './schema';

/** The role a path names: a number, or null for one too large to exist (the service answers 404). */
function roleId(params: { id: string }): number | null {
  return parseInput(IdParams, { id: params.id }, '/params').id;
}

export const routes: Route[] = [
  route({
    method: 'POST',
    path: '/api/admin/roles/validate',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'validateRole',
    summary: 'Check a custom role definition without storing it',
    body: RoleDefinitionSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 413, 415],
    /** Seed operation 1: 200 with no body when the definition could be created; stores nothing. */
    handler: async ({ env, body }) => {
      await service.validateDefinition(getDb(env), body);
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/permissions',
    access: authenticated(),
    tag: 'Users',
    operationId: 'getPermissions',
    summary: 'Every permission a role can hold: root, project, and per environment (the role editor lists them)',
    responses: { 200: { description: 'Success', schema: GetPermissionsResponse } },
    errors: [403],
    handler: async ({ env }) => json(await service.permissionCatalogue(getDb(env))),
  }),
  route({
    method: 'GET',
    path: '/api/admin/roles',
    access: authenticated(),
    tag: 'Users',
    operationId: 'getRoles',
    summary: 'List root and project roles',
    responses: { 200: { description: 'Success', schema: GetRolesResponse } },
    errors: [403],
    handler: async ({ env }) => json(await service.listRoles(getDb(env))),
  }),
  route({
    method: 'POST',
    path: '/api/admin/roles',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'createRole',
    summary: 'Create a custom role',
    body: RoleDefinitionSchema,
    responses: { 201: { description: 'Created', schema: CreateRole201Response } },
    errors: [400, 403, 409, 413],
    handler: async ({ env, principal, body }) => {
      const role = await service.createRole(getDb(env), principal, body);
      return json(role, 201, { location: `/api/admin/roles/${role.id}` });
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/roles/:id',
    access: authenticated(),
    tag: 'Users',
    operationId: 'getRoleById',
    summary: 'Get a role with its permissions',
    responses: { 200: { description: 'Success', schema: GetRoleByIdResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json(await service.getRole(getDb(env), roleId(params))),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/roles/:id',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'updateRole',
    summary: 'Update a custom role',
    body: RoleDefinitionSchema,
    responses: { 200: { description: 'Success', schema: UpdateRoleResponse } },
    errors: [400, 403, 404, 409, 413],
    handler: async ({ env, principal, params, body }) => json(await service.updateRole(getDb(env), principal, roleId(params), body)),
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/roles/:id',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'deleteRole',
    summary: 'Delete a custom role that nobody holds',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 403, 404],
    handler: async ({ env, principal, params }) => {
      await service.deleteRole(getDb(env), principal, roleId(params));
      return empty(200);
    },
  }),
];
