/** SCIM Groups at `<prefix>/Groups` (see routes.ts for what every SCIM route shares). */
import { getDb } from '../../db/client';
import { untyped } from '../../http/responses';
import { route, type Route } from '../../http/route';
import { listOf } from './discovery';
import { scimJson } from './errors';
import { groupFieldsOf } from './group-resource';
import * as groups from './groups';
import { listQueryOf, project, projectionOf } from './list-query';
import { patchOperations } from './patch';
import { ScimGroupSchema, ScimListQuery, ScimListSchema, ScimPatchSchema } from './schema';
import { readScimBody, scimAnswers, scimBase, SCIM_ROUTE } from './scim-route';
import { requireScimClient } from './settings';

export function groupRoutes(prefix: string, suffix: string): Route[] {
  return [
    route({
      ...SCIM_ROUTE,
      method: 'GET',
      path: `${prefix}/Groups`,
      operationId: `scimListGroups${suffix}`,
      summary: 'List or find SCIM Groups (filter, startIndex, count)',
      query: ScimListQuery,
      queryReadByHandler: true,
      responses: scimAnswers({ 200: { description: 'A ListResponse of Groups', schema: ScimListSchema } }, [400]),
      handler: async ({ request, env }) => {
        await requireScimClient(env, request);
        const query = listQueryOf(request);
        const { total, resources } = await groups.listGroups(getDb(env), query.filter, query, scimBase(env, request, prefix));
        return untyped(
          scimJson(
            listOf(
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
      path: `${prefix}/Groups`,
      operationId: `scimCreateGroup${suffix}`,
      summary: 'Provision a group with its members',
      body: ScimGroupSchema,
      bodyReadByHandler: true,
      responses: scimAnswers({ 201: { description: 'The Group created', schema: ScimGroupSchema } }, [400, 409, 413, 415]),
      handler: async ({ request, env }) => {
        const settings = await requireScimClient(env, request);
        const fields = groupFieldsOf(await readScimBody(request));
        const created = await groups.createGroup(getDb(env), fields, settings, scimBase(env, request, prefix));
        return untyped(scimJson(created, 201, { location: created.meta.location }));
      },
    }),
    route({
      ...SCIM_ROUTE,
      method: 'GET',
      path: `${prefix}/Groups/:id`,
      operationId: `scimGetGroup${suffix}`,
      summary: 'A provisioned group',
      responses: scimAnswers({ 200: { description: 'The Group', schema: ScimGroupSchema } }, [400, 404]),
      handler: async ({ request, env, params }) => {
        await requireScimClient(env, request);
        const group = await groups.getGroup(getDb(env), params.id, scimBase(env, request, prefix));
        return untyped(scimJson(project(group, projectionOf(request))));
      },
    }),
    route({
      ...SCIM_ROUTE,
      method: 'PUT',
      path: `${prefix}/Groups/:id`,
      operationId: `scimReplaceGroup${suffix}`,
      summary: "Replace a group's name and members",
      body: ScimGroupSchema,
      bodyReadByHandler: true,
      responses: scimAnswers({ 200: { description: 'The Group', schema: ScimGroupSchema } }, [400, 404, 409, 413, 415]),
      handler: async ({ request, env, params }) => {
        await requireScimClient(env, request);
        const fields = groupFieldsOf(await readScimBody(request));
        return untyped(scimJson(await groups.replaceGroup(getDb(env), params.id, fields, scimBase(env, request, prefix))));
      },
    }),
    route({
      ...SCIM_ROUTE,
      method: 'PATCH',
      path: `${prefix}/Groups/:id`,
      operationId: `scimPatchGroup${suffix}`,
      summary: "Add or remove a group's members, or rename it",
      body: ScimPatchSchema,
      bodyReadByHandler: true,
      responses: scimAnswers({ 200: { description: 'The Group', schema: ScimGroupSchema } }, [400, 404, 409, 413, 415]),
      handler: async ({ request, env, params }) => {
        await requireScimClient(env, request);
        const operations = patchOperations(await readScimBody(request));
        const group = await groups.patchGroup(getDb(env), params.id, operations, scimBase(env, request, prefix));
        return untyped(scimJson(project(group, projectionOf(request))));
      },
    }),
    route({
      ...SCIM_ROUTE,
      method: 'DELETE',
      path: `${prefix}/Groups/:id`,
      operationId: `scimDeleteGroup${suffix}`,
      summary: 'Delete a provisioned group; its members lose what it gave them',
      responses: scimAnswers({ 204: { description: 'Deleted', schema: null } }, [400, 404]),
      handler: async ({ request, env, params }) => {
        await requireScimClient(env, request);
        await groups.deleteGroup(getDb(env), params.id);
        return untyped(new Response(null, { status: 204 }));
      },
    }),
  ];
}
