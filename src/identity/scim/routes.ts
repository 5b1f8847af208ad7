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
import { scimAnswers, scimBase, SCIM_ROUTE } from './scim-route';
import { ScimDocumentSchema, ScimGroupSchema, ScimSettingsAnswer, ScimTokenAnswer, ScimUserSchema, SetScimSettingsSchema } from './schema';
import { generateToken, requireScimClient, saveSettings, settingsAnswer } from './settings';
import { groupFieldsOf, type GroupFields } from './group-resource';
import { userFieldsOf } from './user-resource';
import type { UserFields } from './store';
import { resourceRoutes, type ScimResourceType } from './resource-routes';
import * as groups from './groups';
import * as users from './users';

const USERS: ScimResourceType<UserFields> = {
  plural: 'Users',
  singular: 'User',
  schema: ScimUserSchema,
  summaries: {
    list: 'List or find SCIM Users (filter, startIndex, count)',
    create: 'Provision a person',
    get: 'A provisioned person',
    replace: "Replace a person's attributes",
    patch: 'Change some attributes of a person (active false deprovisions them)',
    delete: 'Delete a provisioned person; their sessions and personal tokens end',
  },
  fieldsOf: userFieldsOf,
  list: users.listUsers,
  create: users.createUser,
  get: users.getUser,
  replace: users.replaceUser,
  patch: users.patchUser,
  remove: users.deleteUser,
  // The User is answered whole after a PATCH, as before the routes were shared.
  projectPatchAnswer: false,
};

const GROUPS: ScimResourceType<GroupFields> = {
  plural: 'Groups',
  singular: 'Group',
  schema: ScimGroupSchema,
  summaries: {
    list: 'List or find SCIM Groups (filter, startIndex, count)',
    create: 'Provision a group with its members',
    get: 'A provisioned group',
    replace: "Replace a group's name and members",
    patch: "Add or remove a group's members, or rename it",
    delete: 'Delete a provisioned group; its members lose what it gave them',
  },
  fieldsOf: groupFieldsOf,
  list: groups.listGroups,
  create: (_env, db, fields, settings, base) => groups.createGroup(db, fields, settings, base),
  get: groups.getGroup,
  replace: (_env, db, id, fields, base) => groups.replaceGroup(db, id, fields, base),
  patch: (_env, db, id, operations, base) => groups.patchGroup(db, id, operations, base),
  remove: (_env, db, id) => groups.deleteGroup(db, id),
  projectPatchAnswer: true,
};

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
    tag: 'Auth',
    operationId: 'getScimSettings',
    summary: 'Whether SCIM provisioning is enabled and has a token',
    responses: { 200: { description: 'The SCIM settings', schema: ScimSettingsAnswer } },
    handler: async ({ env }) => json(await settingsAnswer(getDb(env))),
  }),
  route({
    method: 'POST',
    path: '/api/admin/scim-settings',
    access: admin(ADMIN),
    tag: 'Auth',
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
    tag: 'Auth',
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
    ...resourceRoutes(USERS, prefix, suffix),
    ...resourceRoutes(GROUPS, prefix, suffix),
  ]),
];
