/** Context fields: the route objects; the rules are in service.ts. */
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { authenticated, route, type Route } from '../../http/route';
import { ConstraintSchema } from '../features/schema';
import { GetContextFieldsResponse, GetContextFieldResponse } from './schema';
import * as service from './service';

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/context',
    access: authenticated(),
    tag: 'Context',
    operationId: 'getContextFields',
    summary: 'List context fields',
    responses: { 200: { description: 'Success', schema: GetContextFieldsResponse } },
    handler: async ({ env }) => json(await service.listFields(getDb(env))),
  }),
  route({
    method: 'GET',
    path: '/api/admin/context/:name',
    access: authenticated(),
    tag: 'Context',
    operationId: 'getContextField',
    summary: 'Get a context field',
    responses: { 200: { description: 'Success', schema: GetContextFieldResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json(await service.getField(getDb(env), params.name)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/constraints/validate',
    access: authenticated(),
    tag: 'Features',
    operationId: 'validateConstraint',
    summary: 'Check a constraint',
    body: ConstraintSchema,
    responses: { 204: { description: 'Done, no content', schema: null } },
    errors: [400, 404, 413],
    handler: async ({ env, body }) => {
      await service.validateConstraint(getDb(env), body);
      return empty(204);
    },
  }),
];
