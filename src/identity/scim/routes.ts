/**
 * SCIM 2.0 provisioning (RFC 7643/7644) at `/scim/v2/…`, and at `/scim/…`, the address
 * Unleash's own SCIM settings page shows; and the SCIM settings of Unleash Enterprise's UI at
 * `/api/admin/scim-settings`. SCIM routes are public (rate limited per address and per
 * token), check the SCIM token themselves, read `application/scim+json` bodies and answer
 * every error in RFC 7644's shape.
 */
import { ADMIN } from '../../auth/permissions';
import { getDb } from '../../db/client';
import type { Env } from '../../env';
import { empty, json, NO_STORE, untyped } from '../../http/responses';
import { admin, route, type Route } from '../../http/route';
import * as discovery from './discovery';
import { scimJson } from './errors';
import { readScimBody, scimAnswers, scimBase, SCIM_ROUTE } from './scim-route';
import { listQueryOf, project, projectionOf } from './list-query';
import { patchOperations } from './patch';
import {
  ScimDocumentSchema,
  ScimListQuery,
  ScimListSchema,
  ScimPatchSchema,
  ScimSettingsAnswer,
  ScimTokenAnswer,
  ScimUserSchema,
  SetScimSettingsSchema,
} from './schema';
import { generateToken, requireScimClient, saveSettings, settingsAnswer } from './settings';
import { userFieldsOf } from './user-resource';
import * as users from './users';
import { groupRoutes } from './group-routes';

function userRoutes(prefix: string, suffix: string): Route[] {
  return [
    route({
      ...SCIM_ROUTE,
      method: 'GET',
      path: `${prefix}/Users`,
      operationId: `scimListUsers${suffix}`,
      summary: 'List or find SCIM Users (filter, startIndex, count)',
      query: ScimListQuery,
      queryReadByHandler: true,
      responses: scimAnswers({ 200: { description: 'A ListResponse of Users', schema: ScimListSchema } }, [400]),
      handler: async ({ request, env }) => {
        await requireScimClient(env, request);
        const query = listQueryOf(request);
        const { total, resources } = await users.listUsers(getDb(env), query.filter, query, scimBase(env, request, prefix));
        return untyped(
          scimJson(
            discovery.listOf(
              resources.map((resource) => project(resource, query)),
              total,
              query.startIndex,
            ),
          ),
        );
      },
    }),
    route({
      ...SCIM_ROUTE,
      method: 'POST',
      path: `${prefix}/Users`,
      operationId: `scimCreateUser${suffix}`,
      summary: 'Provision a person',
      body: ScimUserSchema,
      bodyReadByHandler: true,
      responses: scimAnswers({ 201: { description: 'The User created', schema: ScimUserSchema } }, [400, 409, 413, 415]),
      handler: async ({ request, env }) => {
        const settings = await requireScimClient(env, request);
        const fields = userFieldsOf(await readScimBody(request));
        const created = await users.createUser(env, getDb(env), fields, settings, scimBase(env, request, prefix));
        return untyped(scimJson(created, 201, { location: created.meta.location }));
      },
    }),
    route({
      ...SCIM_ROUTE,
      method: 'GET',
      path: `${prefix}/Users/:id`,
      operationId: `scimGetUser${suffix}`,
      summary: 'A provisioned person',
      responses: scimAnswers({ 200: { description: 'The User', schema: ScimUserSchema } }, [400, 404]),
      handler: async ({ request, env, params }) => {
        await requireScimClient(env, request);
        const user = await users.getUser(getDb(env), params.id, scimBase(env, request, prefix));
        return untyped(scimJson(project(user, projectionOf(request))));
      },
    }),
    route({
      ...SCIM_ROUTE,
      method: 'PUT',
      path: `${prefix}/Users/:id`,
      operationId: `scimReplaceUser${suffix}`,
      summary: "Replace a person's attributes",
      body: ScimUserSchema,
      bodyReadByHandler: true,
      responses: scimAnswers({ 200: { description: 'The User', schema: ScimUserSchema } }, [400, 404, 409, 413, 415]),
      handler: async ({ request, env, params }) => {
        await requireScimClient(env, request);
        const fields = userFieldsOf(await readScimBody(request));
        return untyped(scimJson(await users.replaceUser(env, getDb(env), params.id, fields, scimBase(env, request, prefix))));
      },
    }),
    route({
      ...SCIM_ROUTE,
      method: 'PATCH',
      path: `${prefix}/Users/:id`,
      operationId: `scimPatchUser${suffix}`,
      summary: 'Change some attributes of a person (active false deprovisions them)',
      body: ScimPatchSchema,
      bodyReadByHandler: true,
      responses: scimAnswers({ 200: { description: 'The User', schema: ScimUserSchema } }, [400, 404, 409, 413, 415]),
      handler: async ({ request, env, params }) => {
        await requireScimClient(env, request);
        const operations = patchOperations(await readScimBody(request));
        return untyped(scimJson(await users.patchUser(env, getDb(env), params.id, operations, scimBase(env, request, prefix))));
      },
    }),
    route({
      ...SCIM_ROUTE,
      method: 'DELETE',
      path: `${prefix}/Users/:id`,
      operationId: `scimDeleteUser${suffix}`,
      summary: 'Delete a provisioned person; their sessions and personal tokens end',
      responses: scimAnswers({ 204: { description: 'Deleted', schema: null } }, [400, 404]),
      handler: async ({ request, env, params }) => {
        await requireScimClient(env, request);
        await users.deleteUser(env, getDb(env), params.id);
        return untyped(new Response(null, { status: 204 }));
      },
    }),
  ];
}

function discoveryRoutes(prefix: string, suffix: string): Route[] {
  const document = (path: string, operationId: string, summary: string, answer: (env: Env, request: Request, id: string) => unknown) =>
    route({
      ...SCIM_ROUTE,
      method: 'GET',
      path: `${prefix}${path}`,
      operationId: `${operationId}${suffix}`,
      summary,
      description: `${summary}. Needs the SCIM token, as the other SCIM routes.`,
      responses: scimAnswers({ 200: { description: summary, schema: ScimDocumentSchema } }, path.includes(':') ? [400, 404] : []),
      handler: async ({ request, env, params }) => {
        await requireScimClient(env, request);
        return untyped(scimJson(answer(env, request, (params as { id?: string }).id ?? '')));
      },
    });
  const base = (env: Env, request: Request) => scimBase(env, request, prefix);
  return [
    document('/ServiceProviderConfig', 'scimServiceProviderConfig', 'What this SCIM service provider supports', (env, request) =>
      discovery.serviceProviderConfig(base(env, request)),
    ),
    document('/ResourceTypes', 'scimResourceTypes', 'The SCIM resource types served', (env, request) =>
      discovery.resourceTypes(base(env, request)),
    ),
    document('/ResourceTypes/:id', 'scimResourceType', 'One SCIM resource type', (env, request, id) =>
      discovery.oneResourceType(id, base(env, request)),
    ),
    document('/Schemas', 'scimSchemas', 'The SCIM schemas served', (env, request) => discovery.schemas(base(env, request))),
    document('/Schemas/:id', 'scimSchema', 'One SCIM schema', (env, request, id) => discovery.oneSchema(id, base(env, request))),
  ];
}

const settingsRoutes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/scim-settings',
    access: admin(ADMIN),
    tag: 'SCIM',
    operationId: 'getScimSettings',
    summary: 'Whether SCIM provisioning is enabled and has a token',
    responses: { 200: { description: 'The SCIM settings', schema: ScimSettingsAnswer } },
    handler: async ({ env }) => json(await settingsAnswer(getDb(env))),
  }),
  route({
    method: 'POST',
    path: '/api/admin/scim-settings',
    access: admin(ADMIN),
    tag: 'SCIM',
    operationId: 'setScimSettings',
    summary: 'Enable or disable SCIM provisioning',
    body: SetScimSettingsSchema,
    responses: { 200: { description: 'Saved, no body', schema: null } },
    handler: async ({ env, principal, body }) => {
      await saveSettings(getDb(env), principal, body);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/scim-settings/generate-new-token',
    access: admin(ADMIN),
    tag: 'SCIM',
    operationId: 'generateNewToken',
    summary: 'Generate a new SCIM token (the previous one stops working at once)',
    responses: { 200: { description: 'The token, shown this once', schema: ScimTokenAnswer } },
    handler: async ({ env, principal }) => json({ token: await generateToken(getDb(env), principal) }, 200, NO_STORE),
  }),
];

const PREFIXES = [
  { prefix: '/scim/v2', suffix: '' },
  { prefix: '/scim', suffix: 'Unversioned' },
] as const;

export const routes: readonly Route[] = [
  ...settingsRoutes,
  ...PREFIXES.flatMap(({ prefix, suffix }) => [
    ...discoveryRoutes(prefix, suffix),
    ...userRoutes(prefix, suffix),
    ...groupRoutes(prefix, suffix),
  ]),
];
