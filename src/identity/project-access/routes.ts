/** Project access: `GET/POST /api/admin/projects/:projectId/access`, a user's roles in a project. */
import * as v from 'valibot';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { integerId, parseInput } from '../../http/validation';
import { AddAccessSchema, RoleAccessSchema, SetRolesSchema } from './schema';
import { userAccessOverview } from './overview';
import * as service from './service';
import { listUsers } from '../users/service';
import { groupsForPicker } from '../groups/service';
import { ADMIN, PROJECT_USER_ACCESS_WRITE, UPDATE_PROJECT } from '../../auth/permissions';
import { admin, authenticated, route, type Route } from '../../http/route';
import { GetBaseUsersAndGroupsResponse, GetUserPermissionsResponse, GetProjectAccessResponse } from './schema';

const UserParams = v.object({ userId: v.pipe(integerId, v.integer(), v.minValue(1), v.maxValue(2_147_483_647)) });

function userId(params: { userId: string }): number {
  return parseInput(UserParams, { userId: params.userId }, '/params').userId;
}

const GroupParams = v.object({ groupId: v.pipe(integerId, v.integer(), v.minValue(1), v.maxValue(2_147_483_647)) });

function groupId(params: { groupId: string }): number {
  return parseInput(GroupParams, { groupId: params.groupId }, '/params').groupId;
}

const OverviewQuery = v.object({
  project: v.optional(v.pipe(v.string(), v.maxLength(100))),
  environment: v.optional(v.pipe(v.string(), v.maxLength(100))),
});

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/user-admin/access',
    access: authenticated(),
    tag: 'Users',
    operationId: 'getBaseUsersAndGroups',
    summary: 'List the users a project role can be given to',
    responses: { 200: { description: 'Success', schema: GetBaseUsersAndGroupsResponse } },
    /**
     * `GET /api/admin/user-admin/access`: everyone who can be given access (the UI's project-access
     * picker) and the groups, open to every signed-in user as in Unleash.
     */
    handler: async ({ env }) => {
      const db = getDb(env);
      const { users } = await listUsers(db);
      return json({
        users: users.map((user) => ({
          id: user.id,
          ...('name' in user ? { name: user.name } : {}),
          ...('username' in user ? { username: user.username } : {}),
          ...('email' in user ? { email: user.email } : {}),
          accountType: user.accountType,
        })),
        groups: await groupsForPicker(db),
      });
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/user-admin/:id/permissions',
    access: admin(ADMIN),
    tag: 'Unstable',
    operationId: 'getUserPermissions',
    summary: "List a user's permissions, root and per project",
    query: OverviewQuery,
    queryReadByHandler: true,
    responses: { 200: { description: 'Success', schema: GetUserPermissionsResponse } },
    errors: [400],
    handler: async ({ request, env, params }) => {
      const id = parseInput(
        v.object({ id: v.pipe(integerId, v.integer(), v.minValue(1), v.maxValue(2_147_483_647)) }),
        { id: params.id },
        '/params',
      ).id;
      const query = new URL(request.url).searchParams;
      const { project, environment } = parseInput(
        OverviewQuery,
        { project: query.get('project') || undefined, environment: query.get('environment') || undefined },
        '/query',
      );
      return json(await userAccessOverview(env, id, project, environment));
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/access',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getProjectAccess',
    summary: 'List who has which role in a project',
    responses: { 200: { description: 'Success', schema: GetProjectAccessResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json(await service.projectAccess(getDb(env), params.projectId)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/access',
    access: admin([UPDATE_PROJECT, PROJECT_USER_ACCESS_WRITE], ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'addAccessToProject',
    summary: 'Give users and groups roles in a project',
    body: AddAccessSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 403, 413],
    handler: async ({ env, principal, body, params }) => {
      await service.addAccess(getDb(env), principal, params.projectId, body);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/role/:roleId/access',
    access: admin([UPDATE_PROJECT, PROJECT_USER_ACCESS_WRITE], ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'addRoleAccessToProject',
    summary: 'Give users and groups one role in a project',
    body: RoleAccessSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 413],
    /** The older form: one role for the listed users and groups. */
    handler: async ({ env, principal, body, params }) => {
      const roleId = parseInput(
        v.object({ roleId: v.pipe(integerId, v.integer(), v.minValue(1), v.maxValue(2_147_483_647)) }),
        { roleId: params.roleId },
        '/params',
      ).roleId;
      await service.addAccess(getDb(env), principal, params.projectId, {
        roles: [roleId],
        users: body.users.map((user) => user.id),
        groups: body.groups.map((group) => group.id),
      });
      return empty(200);
    },
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/users/:userId/roles',
    access: admin([UPDATE_PROJECT, PROJECT_USER_ACCESS_WRITE], ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'setUserRoles',
    summary: "Set a user's roles in a project",
    body: SetRolesSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 403, 413],
    handler: async ({ env, principal, body, params }) => {
      const id = userId(params);
      await service.setUserRoles(getDb(env), principal, params.projectId, id, body.roles);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/users/:userId/roles',
    access: admin([UPDATE_PROJECT, PROJECT_USER_ACCESS_WRITE], ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'removeUserAccess',
    summary: 'Remove a user from a project',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 403],
    handler: async ({ env, principal, params }) => {
      await service.removeUserAccess(getDb(env), principal, params.projectId, userId(params));
      return empty(200);
    },
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/groups/:groupId/roles',
    access: admin([UPDATE_PROJECT, PROJECT_USER_ACCESS_WRITE], ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'setGroupRoles',
    summary: "Set a group's roles in a project",
    body: SetRolesSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 403, 413],
    handler: async ({ env, principal, body, params }) => {
      await service.setGroupRoles(getDb(env), principal, params.projectId, groupId(params), body.roles);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/groups/:groupId/roles',
    access: admin([UPDATE_PROJECT, PROJECT_USER_ACCESS_WRITE], ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'removeGroupAccess',
    summary: 'Remove a group from a project',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 403],
    handler: async ({ env, principal, params }) => {
      await service.removeGroupAccess(getDb(env), principal, params.projectId, groupId(params));
      return empty(200);
    },
  }),
];
