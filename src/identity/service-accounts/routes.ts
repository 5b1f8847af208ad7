/**
 * Service accounts and their tokens, beyond the open-source build, as Unleash Enterprise has
 * them (its Terraform provider manages them). Admins only, as in Unleash.
 */
import { ADMIN } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, route, type Route } from '../../http/route';
import { parseInput } from '../../http/validation';
import { CreatePersonalTokenSchema } from '../personal-tokens/schema';
import {
  CreateServiceAccountSchema,
  ServiceAccountIdParams,
  ServiceAccountResponse,
  ServiceAccountsResponse,
  ServiceAccountTokenCreated,
  ServiceAccountTokenParams,
  ServiceAccountTokensResponse,
  UpdateServiceAccountSchema,
} from './schema';
import * as service from './service';

const TAG = 'Service Accounts';
const accountId = (params: Record<string, string>) => parseInput(ServiceAccountIdParams, params, '/params').id;

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/service-account',
    access: admin(ADMIN),
    tag: TAG,
    operationId: 'getServiceAccounts',
    summary: 'List service accounts (as Unleash Enterprise)',
    responses: { 200: { description: 'Success', schema: ServiceAccountsResponse } },
    handler: async ({ env }) => json(await service.listAccounts(getDb(env))),
  }),
  route({
    method: 'POST',
    path: '/api/admin/service-account',
    access: admin(ADMIN),
    tag: TAG,
    operationId: 'createServiceAccount',
    summary: 'Create a service account (as Unleash Enterprise)',
    body: CreateServiceAccountSchema,
    responses: { 201: { description: 'Created', schema: ServiceAccountResponse, headers: { location: 'The new account' } } },
    errors: [400, 409, 413, 415],
    handler: async ({ env, principal, body }) => {
      const created = await service.createAccount(getDb(env), principal, body);
      return json(created, 201, { location: `/api/admin/service-account/${created.id}` });
    },
  }),
  route({
    method: 'PUT',
    path: '/api/admin/service-account/:id',
    access: admin(ADMIN),
    tag: TAG,
    operationId: 'updateServiceAccount',
    summary: "Change a service account's name or root role (as Unleash Enterprise)",
    body: UpdateServiceAccountSchema,
    responses: { 200: { description: 'The account', schema: ServiceAccountResponse } },
    errors: [400, 404, 413, 415],
    handler: async ({ env, principal, params, body }) => json(await service.updateAccount(getDb(env), principal, accountId(params), body)),
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/service-account/:id',
    access: admin(ADMIN),
    tag: TAG,
    operationId: 'deleteServiceAccount',
    summary: 'Delete a service account and its tokens (as Unleash Enterprise)',
    responses: { 200: { description: 'Done, no body', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.deleteAccount(env, getDb(env), principal, accountId(params));
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/service-account/:id/token',
    access: admin(ADMIN),
    tag: TAG,
    operationId: 'getServiceAccountTokens',
    summary: "List a service account's tokens (as Unleash Enterprise)",
    responses: { 200: { description: 'Success', schema: ServiceAccountTokensResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json(await service.listTokens(getDb(env), accountId(params))),
  }),
  route({
    method: 'POST',
    path: '/api/admin/service-account/:id/token',
    access: admin(ADMIN),
    tag: TAG,
    operationId: 'createServiceAccountToken',
    summary: 'Create a token for a service account; its secret is shown only here (as Unleash Enterprise)',
    body: CreatePersonalTokenSchema,
    responses: { 201: { description: 'Created', schema: ServiceAccountTokenCreated, headers: { location: 'The new token' } } },
    errors: [400, 403, 404, 409, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      const id = accountId(params);
      const created = await service.createToken(env, getDb(env), principal, id, body);
      return json(created, 201, { location: `/api/admin/service-account/${id}/token/${created.id}` });
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/service-account/:id/token/:tokenId',
    access: admin(ADMIN),
    tag: TAG,
    operationId: 'deleteServiceAccountToken',
    summary: "Delete a service account's token (as Unleash Enterprise)",
    responses: { 200: { description: 'Done, no body', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      const { id, tokenId } = parseInput(ServiceAccountTokenParams, params, '/params');
      await service.deleteToken(env, getDb(env), principal, id, tokenId);
      return empty(200);
    },
  }),
];
