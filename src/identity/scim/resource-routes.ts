/**
 * The SCIM CRUD routes of one resource type at `<prefix>/<Users|Groups>` (RFC 7644 §3): list
 * with filter and paging, create, read, replace, patch, delete. Users and Groups differ only in
 * the operations below; what every SCIM route shares is in scim-route.ts.
 */
import type * as v from 'valibot';
import { getDb, type Db } from '../../db/client';
import type { Env } from '../../env';
import { untyped } from '../../http/responses';
import { route, type Route } from '../../http/route';
import { listOf } from './discovery';
import { scimJson } from './errors';
import type { Filter } from './filter';
import { listQueryOf, project, projectionOf } from './list-query';
import { patchOperations, type PatchOperation } from './patch';
import { ScimListQuery, ScimListSchema, ScimPatchSchema } from './schema';
import { readScimBody, scimAnswers, scimBase, SCIM_ROUTE } from './scim-route';
import type { ScimSettings } from '../../db/scim';
import { requireScimClient } from './settings';

type Resource = Record<string, unknown> & { meta: { location: string } };

/** One SCIM resource type: its names, body schema, and what each operation does. */
export interface ScimResourceType<Fields> {
  /** The path segment (`Users`) and the singular used in operation ids and descriptions (`User`). */
  plural: string;
  singular: string;
  schema: v.GenericSchema;
  summaries: { list: string; create: string; get: string; replace: string; patch: string; delete: string };
  fieldsOf(body: unknown): Fields;
  list(
    db: Db,
    filter: Filter | undefined,
    page: { startIndex: number; count: number },
    base: string,
  ): Promise<{ total: number; resources: Resource[] }>;
  create(env: Env, db: Db, fields: Fields, settings: ScimSettings, base: string): Promise<Resource>;
  get(db: Db, id: string, base: string): Promise<Resource>;
  replace(env: Env, db: Db, id: string, fields: Fields, base: string): Promise<Resource>;
  patch(env: Env, db: Db, id: string, operations: readonly PatchOperation[], base: string): Promise<Resource>;
  remove(env: Env, db: Db, id: string): Promise<void>;
  /** Whether a PATCH answer honours `attributes` / `excludedAttributes` (it does for Groups). */
  projectPatchAnswer: boolean;
}

export function resourceRoutes<Fields>(type: ScimResourceType<Fields>, prefix: string, suffix: string): Route[] {
  const { plural, singular, schema, summaries } = type;
  const one = { description: `The ${singular}`, schema };
  return [
    route({
      ...SCIM_ROUTE,
      method: 'GET',
      path: `${prefix}/${plural}`,
      operationId: `scimList${plural}${suffix}`,
      summary: summaries.list,
      query: ScimListQuery,
      queryReadByHandler: true,
      responses: scimAnswers({ 200: { description: `A ListResponse of ${plural}`, schema: ScimListSchema } }, [400]),
      handler: async ({ request, env }) => {
        await requireScimClient(env, request);
        const query = listQueryOf(request);
        const { total, resources } = await type.list(getDb(env), query.filter, query, scimBase(env, request, prefix));
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
      path: `${prefix}/${plural}`,
      operationId: `scimCreate${singular}${suffix}`,
      summary: summaries.create,
      body: schema,
      bodyReadByHandler: true,
      responses: scimAnswers({ 201: { description: `The ${singular} created`, schema } }, [400, 409, 413, 415]),
      handler: async ({ request, env }) => {
        const settings = await requireScimClient(env, request);
        const fields = type.fieldsOf(await readScimBody(request));
        const created = await type.create(env, getDb(env), fields, settings, scimBase(env, request, prefix));
        return untyped(scimJson(created, 201, { location: created.meta.location }));
      },
    }),
    route({
      ...SCIM_ROUTE,
      method: 'GET',
      path: `${prefix}/${plural}/:id`,
      operationId: `scimGet${singular}${suffix}`,
      summary: summaries.get,
      responses: scimAnswers({ 200: one }, [400, 404]),
      handler: async ({ request, env, params }) => {
        await requireScimClient(env, request);
        const resource = await type.get(getDb(env), params.id, scimBase(env, request, prefix));
        return untyped(scimJson(project(resource, projectionOf(request))));
      },
    }),
    route({
      ...SCIM_ROUTE,
      method: 'PUT',
      path: `${prefix}/${plural}/:id`,
      operationId: `scimReplace${singular}${suffix}`,
      summary: summaries.replace,
      body: schema,
      bodyReadByHandler: true,
      responses: scimAnswers({ 200: one }, [400, 404, 409, 413, 415]),
      handler: async ({ request, env, params }) => {
        await requireScimClient(env, request);
        const fields = type.fieldsOf(await readScimBody(request));
        return untyped(scimJson(await type.replace(env, getDb(env), params.id, fields, scimBase(env, request, prefix))));
      },
    }),
    route({
      ...SCIM_ROUTE,
      method: 'PATCH',
      path: `${prefix}/${plural}/:id`,
      operationId: `scimPatch${singular}${suffix}`,
      summary: summaries.patch,
      body: ScimPatchSchema,
      bodyReadByHandler: true,
      responses: scimAnswers({ 200: one }, [400, 404, 409, 413, 415]),
      handler: async ({ request, env, params }) => {
        await requireScimClient(env, request);
        const operations = patchOperations(await readScimBody(request));
        const patched = await type.patch(env, getDb(env), params.id, operations, scimBase(env, request, prefix));
        return untyped(scimJson(type.projectPatchAnswer ? project(patched, projectionOf(request)) : patched));
      },
    }),
    route({
      ...SCIM_ROUTE,
      method: 'DELETE',
      path: `${prefix}/${plural}/:id`,
      operationId: `scimDelete${singular}${suffix}`,
      summary: summaries.delete,
      responses: scimAnswers({ 204: { description: 'Deleted', schema: null } }, [400, 404]),
      handler: async ({ request, env, params }) => {
        await requireScimClient(env, request);
        await type.remove(env, getDb(env), params.id);
        return untyped(new Response(null, { status: 204 }));
      },
    }),
  ];
}
