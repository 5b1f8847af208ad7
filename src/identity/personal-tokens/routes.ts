import type * as v from 'valibot';
import type { UserPrincipal } from '../../auth/principal';
import { getDb } from '../../db/client';
import { noAccess } from '../../http/errors';
import { empty, json } from '../../http/responses';
import { parseInput } from '../../http/validation';
import { CreatePersonalTokenSchema, PersonalTokenIdParams } from './schema';
import * as service from './service';
import { authenticated, route, type Route, type AdminContext } from '../../http/route';
import { GetPatsResponse, CreatePat201Response } from './schema';

/** Personal tokens belong to a person: an API key has none (Unleash's 403 message). */
function requireUser(principal: AdminContext['principal']): UserPrincipal {
  if (principal.kind !== 'user') throw noAccess('PATs require an authenticated user.');
  return principal;
}

async function create({ env, principal, body }: AdminContext<v.InferOutput<typeof CreatePersonalTokenSchema>>) {
  const user = requireUser(principal);
  return json(await service.createToken(env, getDb(env), user, user.userId, body), 201);
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/user/tokens',
    access: authenticated(),
    tag: 'Personal access tokens',
    operationId: 'getPats',
    summary: 'List your personal access tokens',
    responses: { 200: { description: 'Success', schema: GetPatsResponse } },
    errors: [403],
    handler: async ({ env, principal }) => json(await service.listTokens(getDb(env), requireUser(principal).userId)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/user/tokens',
    access: authenticated(),
    tag: 'Personal access tokens',
    operationId: 'createPat',
    summary: 'Create a personal access token',
    body: CreatePersonalTokenSchema,
    responses: { 201: { description: 'Created', schema: CreatePat201Response } },
    errors: [400, 403, 409, 413],
    handler: create,
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/user/tokens/:id',
    access: authenticated(),
    tag: 'Personal access tokens',
    operationId: 'deletePat',
    summary: 'Delete one of your personal access tokens',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 403, 404],
    handler: async ({ env, principal, params }) => {
      const user = requireUser(principal);
      const { id } = parseInput(PersonalTokenIdParams, { id: params.id }, '/params');
      await service.deleteToken(env, getDb(env), user, user.userId, id);
      return empty(200);
    },
  }),
];
