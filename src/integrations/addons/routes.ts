/**
 * Integrations (Unleash's addons): the providers and their parameters, the integrations
 * (secrets masked on every read) and each one's delivery log.
 */
import { ADMIN, CREATE_ADDON, DELETE_ADDON, UPDATE_ADDON } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { badRequest } from '../../http/errors';
import { empty, json, NO_STORE } from '../../http/responses';
import { admin, authenticated, route, type Route } from '../../http/route';
import { AddonAnswer, AddonCreateUpdateSchema, AddonsAnswer, IntegrationEventsAnswer, IntegrationEventsQuery } from './schema';
import * as service from './service';

/** The id in the path; one that is not a number names no integration. */
function addonId(raw: string): number {
  return /^[0-9]{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
}

const TAG = 'Addons';

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/addons',
    access: authenticated(),
    tag: TAG,
    operationId: 'getAddons',
    summary: 'List the integrations and the providers they can use',
    responses: { 200: { description: 'The integrations and providers', schema: AddonsAnswer } },
    handler: async ({ env }) => json(await service.listAddons(getDb(env)), 200, NO_STORE),
  }),
  route({
    method: 'POST',
    path: '/api/admin/addons',
    access: admin(CREATE_ADDON),
    tag: TAG,
    operationId: 'createAddon',
    summary: 'Create an integration',
    body: AddonCreateUpdateSchema,
    responses: { 201: { description: 'The new integration, secrets masked', schema: AddonAnswer } },
    errors: [400, 413, 415],
    handler: async ({ env, principal, body }) => json(await service.createAddon(getDb(env), principal, body), 201, NO_STORE),
  }),
  route({
    method: 'GET',
    path: '/api/admin/addons/:id',
    access: authenticated(),
    tag: TAG,
    operationId: 'getAddon',
    summary: 'Get an integration',
    responses: { 200: { description: 'The integration, secrets masked', schema: AddonAnswer } },
    errors: [404],
    handler: async ({ env, params }) => json(await service.getAddon(getDb(env), addonId(params.id)), 200, NO_STORE),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/addons/:id',
    access: admin(UPDATE_ADDON),
    tag: TAG,
    operationId: 'updateAddon',
    summary: 'Change an integration (a secret sent back masked keeps its value)',
    body: AddonCreateUpdateSchema,
    responses: { 200: { description: 'The integration, secrets masked', schema: AddonAnswer } },
    errors: [400, 404, 413, 415],
    handler: async ({ env, principal, params, body }) =>
      json(await service.updateAddon(getDb(env), principal, addonId(params.id), body), 200, NO_STORE),
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/addons/:id',
    access: admin(DELETE_ADDON),
    tag: TAG,
    operationId: 'deleteAddon',
    summary: 'Delete an integration and its delivery log',
    responses: { 200: { description: 'Deleted', schema: null } },
    errors: [404],
    handler: async ({ env, principal, params }) => {
      await service.deleteAddon(getDb(env), principal, addonId(params.id));
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/addons/:id/events',
    access: admin(ADMIN),
    tag: TAG,
    operationId: 'getIntegrationEvents',
    summary: "An integration's delivery log, newest first",
    query: IntegrationEventsQuery,
    responses: { 200: { description: 'The deliveries', schema: IntegrationEventsAnswer } },
    errors: [400, 404],
    handler: async ({ env, params, query }) => {
      const id = addonId(params.id);
      if (Number.isNaN(id)) throw badRequest('Invalid integration configuration id', { path: '/params/id' });
      return json(await service.integrationEvents(getDb(env), id, query.limit, query.offset), 200, NO_STORE);
    },
  }),
];
