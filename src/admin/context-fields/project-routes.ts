/** A project's context fields (Unleash 8's nine `/api/admin/projects/:projectId/context…` operations). */
import { CREATE_CONTEXT_FIELD, DELETE_CONTEXT_FIELD, UPDATE_CONTEXT_FIELD } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, authenticated, route, type Route } from '../../http/route';
import {
  ContextFieldStrategiesResponse,
  ContextNameSchema,
  CreateContextFieldSchema,
  GetContextFieldResponse,
  GetContextFieldsResponse,
  LegalValueSchema,
  UpdateContextFieldSchema,
} from './schema';
import * as service from './project-service';
import { validateName } from './service';

/**
 * Unleash 8's project permission for its context fields. No role of 6.10.1's holds it, so
 * today it is reached through ADMIN or the global context-field permission beside it.
 */
const UPDATE_PROJECT_CONTEXT = 'UPDATE_PROJECT_CONTEXT';
const inProject = ({ params }: { params: Readonly<Record<string, string | undefined>> }) => ({ project: params.projectId });
const done = { 200: { description: 'Done, no body', schema: null } };
const BASE = '/api/admin/projects/:projectId/context';

export const routes: Route[] = [
  route({
    method: 'GET',
    path: BASE,
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Context',
    operationId: 'getContextFieldsForProject',
    summary: "List a project's own context fields",
    responses: { 200: { description: 'Success', schema: GetContextFieldsResponse } },
    handler: async ({ env, params }) => json(await service.listFields(getDb(env), params.projectId)),
  }),
  route({
    method: 'POST',
    path: BASE,
    badRequestName: 'BadDataError',
    access: admin([CREATE_CONTEXT_FIELD, UPDATE_PROJECT_CONTEXT], inProject),
    tag: 'Context',
    operationId: 'createContextFieldForProject',
    summary: 'Create a context field in a project',
    body: CreateContextFieldSchema,
    responses: { 201: { description: 'Created', schema: GetContextFieldResponse, headers: { location: 'context/<name>' } } },
    errors: [400, 404, 409, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      const field = await service.createField(getDb(env), principal, params.projectId, body);
      return json(field, 201, { location: `context/${field.name}` });
    },
  }),
  route({
    method: 'POST',
    path: `${BASE}/validate`,
    badRequestName: 'BadDataError',
    access: admin([UPDATE_CONTEXT_FIELD, UPDATE_PROJECT_CONTEXT], inProject),
    tag: 'Context',
    operationId: 'validateContextFieldNameForProject',
    summary: 'Check that a new context field name is free',
    body: ContextNameSchema,
    responses: done,
    errors: [400, 409, 413, 415],
    // One name, one field: a project's new field is checked against every field's name.
    handler: async ({ env, body }) => {
      await validateName(getDb(env), body.name);
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: `${BASE}/:name`,
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Context',
    operationId: 'getContextFieldForProject',
    summary: "Get a global context field or one of the project's",
    responses: { 200: { description: 'Success', schema: GetContextFieldResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json(await service.getField(getDb(env), params.projectId, params.name)),
  }),
  route({
    method: 'PUT',
    path: `${BASE}/:name`,
    badRequestName: 'BadDataError',
    access: admin([UPDATE_CONTEXT_FIELD, UPDATE_PROJECT_CONTEXT], inProject),
    tag: 'Context',
    operationId: 'updateContextFieldForProject',
    summary: "Replace one of the project's context fields",
    body: UpdateContextFieldSchema,
    responses: done,
    errors: [400, 404, 409, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.updateField(getDb(env), principal, params.projectId, params.name, body);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: `${BASE}/:name`,
    badRequestName: 'BadDataError',
    access: admin([DELETE_CONTEXT_FIELD, UPDATE_PROJECT_CONTEXT], inProject),
    tag: 'Context',
    operationId: 'deleteContextFieldForProject',
    summary: "Delete one of the project's context fields",
    responses: done,
    errors: [400, 404, 409],
    handler: async ({ env, principal, params }) => {
      await service.deleteField(getDb(env), principal, params.projectId, params.name);
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: `${BASE}/:name/strategies`,
    badRequestName: 'BadDataError',
    access: authenticated(),
    tag: 'Strategies',
    operationId: 'getStrategiesByContextFieldForProject',
    summary: "List the project's strategies whose constraints use a context field",
    responses: { 200: { description: 'Success', schema: ContextFieldStrategiesResponse } },
    errors: [400],
    handler: async ({ env, params }) => json(await service.strategiesUsing(getDb(env), params.projectId, params.name)),
  }),
  route({
    method: 'POST',
    path: `${BASE}/:name/legal-values`,
    badRequestName: 'BadDataError',
    access: admin([UPDATE_CONTEXT_FIELD, UPDATE_PROJECT_CONTEXT], inProject),
    tag: 'Context',
    operationId: 'updateContextFieldLegalValueForProject',
    summary: "Add a legal value to one of the project's context fields, or change its description",
    body: LegalValueSchema,
    responses: done,
    errors: [400, 404, 409, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.putLegalValue(getDb(env), principal, params.projectId, params.name, body);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: `${BASE}/:name/legal-values/:legalValue`,
    badRequestName: 'BadDataError',
    access: admin([UPDATE_CONTEXT_FIELD, UPDATE_PROJECT_CONTEXT], inProject),
    tag: 'Context',
    operationId: 'deleteContextFieldLegalValueForProject',
    summary: "Remove a legal value from one of the project's context fields",
    responses: done,
    errors: [400, 404, 409],
    handler: async ({ env, principal, params }) => {
      await service.deleteLegalValue(getDb(env), principal, params.projectId, params.name, params.legalValue);
      return empty(200);
    },
  }),
];
