import { getDb } from '../../db/client';
import { empty, json, NO_STORE } from '../../http/responses';
import { CreateApiTokenSchema, UpdateApiTokenSchema } from './schema';
import * as service from './service';
import {
  ADMIN,
  CREATE_CLIENT_API_TOKEN,
  CREATE_FRONTEND_API_TOKEN,
  CREATE_PROJECT_API_TOKEN,
  DELETE_CLIENT_API_TOKEN,
  DELETE_FRONTEND_API_TOKEN,
  DELETE_PROJECT_API_TOKEN,
  READ_CLIENT_API_TOKEN,
  READ_FRONTEND_API_TOKEN,
  READ_PROJECT_API_TOKEN,
  UPDATE_CLIENT_API_TOKEN,
  UPDATE_FRONTEND_API_TOKEN,
} from '../../auth/permissions';
import { admin, route, type Route } from '../../http/route';
import {
  CreateApiToken201Response,
  GetAllApiTokensResponse,
  GetApiTokensByNameResponse,
  GetProjectApiTokensResponse,
  CreateProjectApiToken201Response,
  ImportApiToken201Response,
  ImportApiTokenSchema,
} from './schema';

// Project API tokens (`/api/admin/projects/:projectId/api-tokens`)

export const routes: Route[] = [
  route({
    method: 'POST',
    path: '/api/admin/api-tokens',
    access: admin([ADMIN, CREATE_CLIENT_API_TOKEN, CREATE_FRONTEND_API_TOKEN]),
    tag: 'API tokens',
    operationId: 'createApiToken',
    summary: 'Create an API token; its secret is shown only in this answer',
    body: CreateApiTokenSchema,
    responses: { 201: { description: 'Created', schema: CreateApiToken201Response } },
    errors: [400, 401, 403, 413, 415],
    handler: async ({ env, principal, body }) => {
      const created = await service.createToken(env, getDb(env), principal, body);
      return json(created.body, 201, { location: `/api/admin/api-tokens/${created.id}`, ...NO_STORE });
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/api-tokens/import',
    // Only an admin: whoever chooses a secret could otherwise mint a key they already know
    // for a scope they could not read, and the migration that needs this runs as an admin.
    access: admin(ADMIN),
    tag: 'API tokens',
    operationId: 'importApiToken',
    summary:
      'Create an API token with a given secret (moving from another Unleash keeps SDK tokens); the secret is stored only as its hash',
    body: ImportApiTokenSchema,
    responses: { 201: { description: 'Created', schema: ImportApiToken201Response } },
    errors: [400, 401, 403, 409, 413, 415],
    handler: async ({ env, principal, body }) => {
      const created = await service.importToken(env, getDb(env), principal, body);
      return json(created.body, 201, { location: `/api/admin/api-tokens/${created.id}`, ...NO_STORE });
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/api-tokens',
    access: admin([ADMIN, READ_CLIENT_API_TOKEN, READ_FRONTEND_API_TOKEN]),
    tag: 'API tokens',
    operationId: 'getAllApiTokens',
    summary: 'List API tokens, secrets masked',
    responses: { 200: { description: 'Success', schema: GetAllApiTokensResponse } },
    errors: [401, 403],
    handler: async ({ env, principal }) => json({ tokens: await service.listTokens(getDb(env), principal) }),
  }),
  route({
    method: 'GET',
    path: '/api/admin/api-tokens/:token',
    access: admin([ADMIN, READ_CLIENT_API_TOKEN, READ_FRONTEND_API_TOKEN]),
    tag: 'API tokens',
    operationId: 'getApiTokensByName',
    summary: 'Get the API tokens of a name (or one token by id or secret)',
    responses: { 200: { description: 'Success', schema: GetApiTokensByNameResponse } },
    errors: [400, 404, 500],
    handler: async ({ env, principal, params }) => json(await service.getTokensByNameOrRef(getDb(env), principal, params.token)),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/api-tokens/:token',
    access: admin([ADMIN, UPDATE_CLIENT_API_TOKEN, UPDATE_FRONTEND_API_TOKEN]),
    tag: 'API tokens',
    operationId: 'updateApiToken',
    summary: "Change an API token's expiry",
    body: UpdateApiTokenSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404, 413],
    handler: async ({ env, principal, body, params }) => {
      await service.updateExpiry(env, getDb(env), principal, params.token, body.expiresAt);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/api-tokens/:token',
    access: admin([ADMIN, DELETE_CLIENT_API_TOKEN, DELETE_FRONTEND_API_TOKEN]),
    tag: 'API tokens',
    operationId: 'deleteApiToken',
    summary: 'Revoke an API token',
    description:
      'Revokes the token named by its id or secret. A token that is not there answers 200 too, with nothing written: the delete has done what was asked (as Unleash 6.10.1).',
    responses: { 200: { description: 'Revoked, or not there', schema: null } },
    errors: [400, 500],
    handler: async ({ env, principal, params }) => {
      await service.revokeToken(env, getDb(env), principal, params.token);
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/api-tokens',
    access: admin(READ_PROJECT_API_TOKEN, ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'getProjectApiTokens',
    summary: "List a project's API tokens",
    responses: { 200: { description: 'Success', schema: GetProjectApiTokensResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json({ tokens: await service.listProjectTokens(getDb(env), params.projectId) }),
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/api-tokens',
    access: admin(CREATE_PROJECT_API_TOKEN, ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'createProjectApiToken',
    summary: 'Create an API token for this project',
    body: CreateApiTokenSchema,
    responses: { 201: { description: 'Created', schema: CreateProjectApiToken201Response } },
    errors: [400, 403, 413],
    handler: async ({ env, principal, body, params }) => {
      const created = await service.createProjectToken(env, getDb(env), principal, params.projectId, body);
      return json(created.body, 201, { location: `/api/admin/api-tokens/${created.id}` });
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/api-tokens/:token',
    access: admin(DELETE_PROJECT_API_TOKEN, ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'deleteProjectApiToken',
    summary: "Revoke one of a project's API tokens",
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404, 500],
    handler: async ({ env, principal, params }) => {
      await service.revokeProjectToken(env, getDb(env), principal, params.projectId, params.token);
      return empty(200);
    },
  }),
];
