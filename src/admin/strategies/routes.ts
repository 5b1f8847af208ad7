/** Activation strategy definitions: the list the UI offers and the form of one (its parameters). */
import { getDb } from '../../db/client';
import { json } from '../../http/responses';
import { authenticated, route, type Route } from '../../http/route';
import { CREATE_STRATEGY, DELETE_STRATEGY, UPDATE_STRATEGY } from '../../auth/permissions';
import { empty } from '../../http/responses';
import { admin } from '../../http/route';
import { CreateStrategySchema, GetAllStrategiesResponse, GetStrategyResponse, UpdateStrategySchema } from './schema';
import * as service from './service';

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/strategies',
    access: authenticated(),
    tag: 'Strategies',
    operationId: 'getAllStrategies',
    summary: 'List strategy definitions',
    responses: { 200: { description: 'Success', schema: GetAllStrategiesResponse } },
    handler: async ({ env }) => json(await service.listStrategies(getDb(env))),
  }),
  route({
    method: 'GET',
    path: '/api/admin/strategies/:name',
    access: authenticated(),
    tag: 'Strategies',
    operationId: 'getStrategy',
    summary: 'Get a strategy definition',
    responses: { 200: { description: 'Success', schema: GetStrategyResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json(await service.getStrategy(getDb(env), params.name)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/strategies',
    access: admin(CREATE_STRATEGY),
    tag: 'Strategies',
    operationId: 'createStrategy',
    summary: 'Define a custom strategy',
    body: CreateStrategySchema,
    responses: { 201: { description: 'Created', schema: GetStrategyResponse } },
    errors: [400, 401, 403, 409, 413, 415],
    handler: async ({ env, principal, body }) => {
      const strategy = await service.createStrategy(getDb(env), principal, body);
      return json(strategy, 201, { location: `strategies/${strategy.name}` });
    },
  }),
  route({
    method: 'PUT',
    path: '/api/admin/strategies/:name',
    access: admin(UPDATE_STRATEGY),
    tag: 'Strategies',
    operationId: 'updateStrategy',
    summary: "Change a custom strategy's title, description and parameters",
    body: UpdateStrategySchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ env, principal, body, params }) => {
      await service.updateStrategy(getDb(env), principal, params.name, body);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/strategies/:name',
    access: admin(DELETE_STRATEGY),
    tag: 'Strategies',
    operationId: 'removeStrategy',
    summary: 'Delete a custom strategy definition',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 404],
    handler: async ({ env, principal, params }) => {
      await service.deleteStrategy(getDb(env), principal, params.name);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/strategies/:strategyName/deprecate',
    access: admin(UPDATE_STRATEGY),
    tag: 'Strategies',
    operationId: 'deprecateStrategy',
    summary: 'Mark a strategy definition deprecated',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 404],
    handler: async ({ env, principal, params }) => {
      await service.deprecateStrategy(getDb(env), principal, params.strategyName);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/strategies/:strategyName/reactivate',
    access: admin(UPDATE_STRATEGY),
    tag: 'Strategies',
    operationId: 'reactivateStrategy',
    summary: 'Take a strategy definition out of deprecation',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 404],
    handler: async ({ env, principal, params }) => {
      await service.reactivateStrategy(getDb(env), principal, params.strategyName);
      return empty(200);
    },
  }),
];
