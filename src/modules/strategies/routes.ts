/** Activation strategy definitions: the list the UI offers and the form of one (its parameters). */
import { getDb } from '../../db/client';
import { pathParam } from '../../http/params';
import { json } from '../../http/responses';
import { authenticated, route, type Route, type AdminContext } from '../../http/route';
import { GetAllStrategiesResponse, GetStrategyResponse } from './schema';
import * as service from './service';

export async function list({ env }: AdminContext): Promise<Response> {
  return json(await service.listStrategies(getDb(env)));
}

export async function get({ request, env }: AdminContext): Promise<Response> {
  return json(await service.getStrategy(getDb(env), pathParam(request, 'name')));
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/strategies',
    access: authenticated(),
    tag: 'Strategies',
    operationId: 'getAllStrategies',
    summary: 'List strategy definitions',
    responses: { 200: { description: 'Success', schema: GetAllStrategiesResponse } },
    handler: list,
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
    handler: get,
  }),
];
