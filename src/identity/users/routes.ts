import type * as v from 'valibot';
import { publicBaseUrl } from '../../http/base-url';
import { getDb } from '../../db/client';
import { empty, json, NO_STORE, untyped } from '../../http/responses';
import { newResetToken } from '../reset-tokens/service';
import { parseInput } from '../../http/validation';
import { JSON_HEADERS, noAccess } from '../../http/errors';
import { ChangeOwnPasswordSchema, CreateUserSchema, IdParams, PasswordSchema, UpdateUserSchema } from './schema';
import * as service from './service';
import { ADMIN } from '../../auth/permissions';
import { admin, authenticated, open, route, type Route } from '../../http/route';
import { GetUsersResponse, CreateUser201Response, GetUserResponse, UpdateUserResponse, GetMeResponse, GetProfileResponse } from './schema';
import {
  IdsSchema,
  InactiveUsersResponse,
  AdminCountResponse,
  EmailSchema,
  ResetPasswordResponse,
  ResetPasswordSchema,
  SearchUsersQuery,
  SearchUsersResponse,
  UserRolesQuery,
  UserRolesResponse,
} from './schema';
import { badRequest } from '../../http/errors';
import { runBatch } from '../../db/client';

/** The user a path names: a number, or null for one too large to exist (the service answers 404). */
function userId(params: { id: string }): number | null {
  return parseInput(IdParams, { id: params.id }, '/params').id;
}

/** `POST /api/admin/user-admin/validate-password` and the public `/auth/reset/validate-password`. */
function validatePassword({ body }: { body: v.InferOutput<typeof PasswordSchema> }) {
  service.validatePassword(body.password);
  return empty(200);
}

export const routes: Route[] = [
  route({
    method: 'POST',
    path: '/api/admin/user-admin/validate-password',
    access: authenticated(),
    tag: 'Users',
    operationId: 'validateUserPassword',
    summary: 'Check a password against the strength rules',
    body: PasswordSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 413],
    handler: validatePassword,
  }),
  route({
    method: 'GET',
    path: '/api/admin/user-admin',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'getUsers',
    summary: 'List users',
    responses: { 200: { description: 'Success', schema: GetUsersResponse } },
    errors: [403],
    handler: async ({ env }) => json(await service.listUsers(getDb(env))),
  }),
  route({
    method: 'POST',
    path: '/api/admin/user-admin/:id/change-password',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'changeUserPassword',
    summary: "Set a user's password",
    body: PasswordSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 403, 404, 413],
    /** An admin sets it; the user's sessions end. */
    handler: async ({ env, params, body }) => {
      await service.setPassword(env, getDb(env), userId(params), body.password);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/user-admin',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'createUser',
    summary: 'Create a user',
    body: CreateUserSchema,
    responses: { 201: { description: 'Created', schema: CreateUser201Response } },
    errors: [400, 401, 403, 413, 415],
    handler: async ({ request, env, principal, body }) => {
      const db = getDb(env);
      // As Unleash: the answer carries the new user's link to choose a password
      // (`/new-user?token=<secret>`); the token row is written in the user's own batch.
      let inviteSecret = '';
      const user = await service.createUser(db, principal, body, async (id) => {
        const token = await newResetToken(db, id, principal);
        inviteSecret = token.secret;
        return [token.statement];
      });
      const inviteLink = `${publicBaseUrl(env, request)}/new-user?token=${inviteSecret}`;
      return json({ ...user, inviteLink, emailSent: false }, 201, { location: `/api/admin/user-admin/${user.id}`, ...NO_STORE });
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/user-admin/:id',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'getUser',
    summary: 'Get a user',
    responses: { 200: { description: 'Success', schema: GetUserResponse } },
    errors: [400, 401, 403, 404],
    handler: async ({ env, params }) => json(await service.getUser(getDb(env), userId(params))),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/user-admin/:id',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'updateUser',
    summary: 'Update a user',
    body: UpdateUserSchema,
    responses: { 200: { description: 'Success', schema: UpdateUserResponse } },
    errors: [400, 404, 413],
    handler: async ({ env, principal, params, body }) => json(await service.updateUser(getDb(env), principal, userId(params), body)),
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/user-admin/:id',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'deleteUser',
    summary: 'Delete a user',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.deleteUser(env, getDb(env), principal, userId(params));
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/auth/reset/validate-password',
    access: open('password-reset'),
    tag: 'Auth',
    operationId: 'validatePassword',
    summary: 'Check a password against the strength rules (sign-up page)',
    body: PasswordSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 413, 429],
    handler: validatePassword,
  }),
  route({
    method: 'GET',
    path: '/api/admin/user',
    access: authenticated(),
    tag: 'Users',
    operationId: 'getMe',
    summary: 'The signed-in caller and their permissions',
    responses: { 200: { description: 'Success', schema: GetMeResponse } },
    errors: [401],
    /** `GET /api/admin/user`: who the caller is and what they may do. */
    // The body's text is made by hand so that the permission list's text is kept (see currentUser).
    handler: async ({ env, principal }) =>
      untyped(
        new Response(await service.currentUser(getDb(env), principal), { headers: { ...JSON_HEADERS, 'cache-control': 'no-store' } }),
      ),
  }),
  route({
    method: 'GET',
    path: '/api/admin/user/profile',
    access: authenticated(),
    tag: 'Users',
    operationId: 'getProfile',
    summary: "The caller's projects, root role and feature-flag subscriptions",
    responses: { 200: { description: 'Success', schema: GetProfileResponse } },
    handler: async ({ env, principal }) => json(await service.profile(getDb(env), principal)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/user/change-password',
    access: authenticated(),
    tag: 'Users',
    operationId: 'changeMyPassword',
    summary: 'Change your own password',
    body: ChangeOwnPasswordSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 413],
    /** A signed-in user; all their sessions end, this one too. */
    handler: async ({ env, principal, body }) => {
      if (principal.kind !== 'user')
        throw noAccess('Only a signed-in user (session or personal access token) can change their own password.');
      await service.changeOwnPassword(env, getDb(env), principal.userId, body);
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/user-admin/admin-count',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'getAdminCount',
    summary: 'Count the admins, with and without a password',
    responses: { 200: { description: 'Success', schema: AdminCountResponse } },
    handler: async ({ env }) => json(await service.adminCount(getDb(env))),
  }),
  route({
    method: 'GET',
    path: '/api/admin/user-admin/search',
    access: authenticated(),
    tag: 'Users',
    operationId: 'searchUsers',
    summary: 'Find users by name, username or email',
    query: SearchUsersQuery,
    responses: { 200: { description: 'Success', schema: SearchUsersResponse } },
    errors: [400],
    handler: async ({ env, query }) => json(await service.searchUsers(getDb(env), query.q)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/user-admin/reset-password',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'resetUserPassword',
    summary: 'Make a link for a user to choose a new password',
    body: ResetPasswordSchema,
    responses: { 200: { description: 'The reset link', schema: ResetPasswordResponse } },
    errors: [400, 404, 413, 415],
    handler: async ({ request, env, principal, body }) => {
      const db = getDb(env);
      const user = await service.userByEmail(db, body.id);
      const token = await newResetToken(db, user.id, principal);
      await runBatch(db, [token.statement]);
      return json({ resetPasswordUrl: `${publicBaseUrl(env, request)}/reset-password?token=${token.secret}` }, 200, NO_STORE);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/user/roles',
    access: authenticated(),
    tag: 'Users',
    operationId: 'getUserRoles',
    summary: "The caller's roles in a project",
    query: UserRolesQuery,
    responses: { 200: { description: 'Success', schema: UserRolesResponse } },
    errors: [400],
    handler: async ({ env, principal, query }) => {
      if (query.projectId === undefined) throw badRequest('The `projectId` query parameter is required.');
      return json(await service.rolesInProject(getDb(env), principal, query.projectId));
    },
  }),
  route({
    method: 'POST',
    path: '/auth/reset/password-email',
    access: open('password-reset'),
    tag: 'Auth',
    operationId: 'sendResetPasswordEmail',
    summary: 'Ask for a password reset email',
    description:
      'There is no email service, so no email is sent and no link is made; the answer is the same whether or not the address belongs to a user, so it reveals nothing.',
    body: EmailSchema,
    responses: { 200: { description: 'Done, no body', schema: null } },
    errors: [400, 413, 415, 429],
    handler: async () => empty(200),
  }),
  route({
    method: 'GET',
    path: '/api/admin/user-admin/inactive',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'getInactiveUsers',
    summary: 'List people not seen for 180 days',
    responses: { 200: { description: 'Success', schema: InactiveUsersResponse } },
    handler: async ({ env }) => json(await service.inactiveUsers(getDb(env))),
  }),
  route({
    method: 'POST',
    path: '/api/admin/user-admin/inactive/delete',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'deleteInactiveUsers',
    summary: 'Delete the listed inactive people',
    body: IdsSchema,
    responses: { 200: { description: 'Done, no body', schema: null } },
    errors: [400, 413, 415],
    handler: async ({ env, principal, body }) => {
      await service.deleteInactiveUsers(env, getDb(env), principal, body.ids);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/user-admin/scim-users',
    access: admin(ADMIN),
    tag: 'Users',
    operationId: 'deleteScimUsers',
    summary: 'Delete every person a SCIM directory provisioned',
    responses: { 200: { description: 'Done, no body', schema: null } },
    handler: async ({ env, principal }) => {
      await service.deleteScimUsers(env, getDb(env), principal);
      return empty(200);
    },
  }),
];
