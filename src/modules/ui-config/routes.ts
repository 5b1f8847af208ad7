/** The admin UI's configuration and splash screens: the route objects; the rules are in service.ts. */
import * as v from 'valibot';
import { getDb } from '../../db/client';
import { json } from '../../http/responses';
import { authenticated, route, type Route } from '../../http/route';
import { parseInput, text } from '../../http/validation';
import { GetUiConfigResponse, UpdateSplashSettingsResponse } from './schema';
import * as service from './service';

const SplashParamsSchema = v.object({ id: text(255) });

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/ui-config',
    access: authenticated(),
    tag: 'Admin UI',
    operationId: 'getUiConfig',
    summary: 'The settings the admin UI starts with',
    responses: { 200: { description: 'Success', schema: GetUiConfigResponse } },
    errors: [401, 403],
    handler: async ({ request, env }) => json(await service.uiConfig(getDb(env), env, request)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/splash/:id',
    access: authenticated(),
    tag: 'Admin UI',
    operationId: 'updateSplashSettings',
    summary: 'Record that the caller has seen a splash screen',
    responses: { 200: { description: 'Success', schema: UpdateSplashSettingsResponse } },
    errors: [400],
    handler: async ({ env, principal, params }) => {
      const { id } = parseInput(SplashParamsSchema, params, '/params');
      return json(await service.markSplashSeen(getDb(env), principal.userId, id));
    },
  }),
];
