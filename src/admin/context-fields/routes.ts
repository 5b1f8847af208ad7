/** Context fields: the route objects; the rules are in service.ts. */
import { CREATE_CONTEXT_FIELD, DELETE_CONTEXT_FIELD, UPDATE_CONTEXT_FIELD } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, authenticated, route, type Route } from '../../http/route';
import { ConstraintSchema } from '../features/schema';
import {
  ContextFieldStrategiesResponse,
  ContextNameSchema,
  CreateContextFieldSchema,
  GetContextFieldResponse,
  GetContextFieldsResponse,
  LegalValueSchema,
  UpdateContextFieldSchema,
} from './schema';
import * as service from './service';

const done = { 200: { description: 'Done, no body', schema: null } };

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
    method: 'POST',
    path: '/api/admin/context',
    access: admin(CREATE_CONTEXT_FIELD),
    tag: 'Context',
    operationId: 'createContextField',
    summary: 'Create a context field',
    body: CreateContextFieldSchema,
    responses: { 201: { description: 'Created', schema: GetContextFieldResponse, headers: { location: 'context/<name>' } } },
    errors: [400, 409, 413, 415],
    handler: async ({ env, principal, body }) => {
      const field = await service.createField(getDb(env), principal, body);
      return json(field, 201, { location: `context/${field.name}` });
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/context/validate',
    access: admin(UPDATE_CONTEXT_FIELD),
    tag: 'Context',
    operationId: 'validate',
    summary: 'Check that a new context field name is free',
    body: ContextNameSchema,
    responses: done,
    errors: [400, 409, 413, 415],
    handler: async ({ env, body }) => {
      await service.validateName(getDb(env), body.name);
      return empty(200);
    },
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
    method: 'PUT',
    path: '/api/admin/context/:name',
    access: admin(UPDATE_CONTEXT_FIELD),
    tag: 'Context',
    operationId: 'updateContextField',
    summary: 'Replace a context field',
    body: UpdateContextFieldSchema,
    responses: done,
    errors: [400, 404, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.updateField(getDb(env), principal, params.name, body);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/context/:name',
    access: admin(DELETE_CONTEXT_FIELD),
    tag: 'Context',
    operationId: 'deleteContextField',
    summary: 'Delete a context field',
    responses: done,
    errors: [400, 404, 409],
    handler: async ({ env, principal, params }) => {
      await service.deleteField(getDb(env), principal, params.name);
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/context/:name/strategies',
    access: authenticated(),
    tag: 'Strategies',
    operationId: 'getStrategiesByContextField',
    summary: 'List the strategies whose constraints use a context field',
    responses: { 200: { description: 'Success', schema: ContextFieldStrategiesResponse } },
    errors: [400],
    handler: async ({ env, params }) => json(await service.strategiesUsing(getDb(env), params.name)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/context/:name/legal-values',
    access: admin(UPDATE_CONTEXT_FIELD),
    tag: 'Context',
    operationId: 'updateContextFieldLegalValue',
    summary: 'Add a legal value to a context field, or change its description',
    body: LegalValueSchema,
    responses: done,
    errors: [400, 404, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.putLegalValue(getDb(env), principal, params.name, body);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/context/:name/legal-values/:legalValue',
    access: admin(UPDATE_CONTEXT_FIELD),
    tag: 'Context',
    operationId: 'deleteContextFieldLegalValue',
    summary: 'Remove a legal value from a context field',
    responses: done,
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.deleteLegalValue(getDb(env), principal, params.name, params.legalValue);
      return empty(200);
    },
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
