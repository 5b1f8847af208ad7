import { getDb } from '../../db/client';
import { empty, json, NO_STORE } from '../../http/responses';
import { publicBaseUrl } from '../../http/base-url';
import { CreateSignupTokenSchema, SignupSchema, UpdateSignupTokenSchema } from './schema';
import * as service from './service';
import { ADMIN } from '../../auth/permissions';
import { admin, open, route, type Route } from '../../http/route';
import {
  GetAllPublicSignupTokensResponse,
  CreatePublicSignupToken201Response,
  GetPublicSignupTokenResponse,
  UpdatePublicSignupTokenResponse,
  AddPublicSignupTokenUser201Response,
} from './schema';

// Every answer above carries invite secrets: NO_STORE keeps them out of caches.

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/invite-link/tokens',
    access: admin(ADMIN),
    tag: 'Public signup tokens',
    operationId: 'getAllPublicSignupTokens',
    summary: 'List invite links',
    responses: { 200: { description: 'Success', schema: GetAllPublicSignupTokensResponse } },
    handler: async ({ env }) => json(await service.listTokens(getDb(env)), 200, NO_STORE),
  }),
  route({
    method: 'POST',
    path: '/api/admin/invite-link/tokens',
    access: admin(ADMIN),
    tag: 'Public signup tokens',
    operationId: 'createPublicSignupToken',
    summary: 'Create an invite link',
    body: CreateSignupTokenSchema,
    responses: { 201: { description: 'Created', schema: CreatePublicSignupToken201Response } },
    errors: [400, 403, 413],
    handler: async ({ request, env, principal, body }) => {
      const token = await service.createToken(getDb(env), principal, body, publicBaseUrl(env, request));
      return json(token, 201, { location: `/api/admin/invite-link/tokens/${token.secret}`, ...NO_STORE });
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/invite-link/tokens/:token',
    access: admin(ADMIN),
    tag: 'Public signup tokens',
    operationId: 'getPublicSignupToken',
    summary: 'Get an invite link',
    responses: { 200: { description: 'Success', schema: GetPublicSignupTokenResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json(await service.getToken(getDb(env), params.token), 200, NO_STORE),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/invite-link/tokens/:token',
    access: admin(ADMIN),
    tag: 'Public signup tokens',
    operationId: 'updatePublicSignupToken',
    summary: "Change an invite link's expiry or enable it",
    body: UpdateSignupTokenSchema,
    responses: { 200: { description: 'Success', schema: UpdatePublicSignupTokenResponse } },
    errors: [400, 401, 403, 404, 413, 415],
    /** Seed operation 3. */
    handler: async ({ env, principal, body, params }) =>
      json(await service.updateToken(getDb(env), principal, params.token, body), 200, NO_STORE),
  }),
  route({
    method: 'GET',
    path: '/invite/:token/validate',
    access: open('invite'),
    tag: 'Public signup tokens',
    operationId: 'validatePublicSignupToken',
    summary: 'Check that an invite link can be used',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 429],
    // The public side of invite links: no key, the secret in the path is the credential.
    handler: async ({ env, params }) => {
      await service.requireUsableToken(getDb(env), params.token);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/invite/:token/signup',
    access: open('invite'),
    tag: 'Public signup tokens',
    operationId: 'addPublicSignupTokenUser',
    summary: 'Sign up through an invite link',
    body: SignupSchema,
    responses: { 201: { description: 'Created', schema: AddPublicSignupTokenUser201Response } },
    errors: [400, 413, 415, 429],
    handler: async ({ env, body, params }) => json(await service.signup(getDb(env), params.token, body), 201),
  }),
];
