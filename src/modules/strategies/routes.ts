/** Activation strategy definitions: the list the UI offers and the form of one (its parameters). */
import { asc, eq } from 'drizzle-orm';
import { getDb } from '../../db/client';
import { strategies } from '../../db/schema';
import { notFound } from '../../http/errors';
import { pathParam } from '../../http/params';
import { json } from '../../http/responses';
import { authenticated, route, type Route, type AdminContext } from '../../http/route';
import { GetAllStrategiesResponse, GetStrategyResponse } from './schema';

type StrategyRow = typeof strategies.$inferSelect;

function strategyShape(row: StrategyRow) {
  return {
    displayName: row.displayName,
    name: row.name,
    editable: !row.builtIn,
    description: row.description,
    parameters: row.parameters,
    deprecated: row.deprecated,
    title: row.title,
  };
}

export async function list({ env }: AdminContext): Promise<Response> {
  const rows = await getDb(env).select().from(strategies).orderBy(asc(strategies.sortOrder), asc(strategies.name));
  return json({ version: 1, strategies: rows.map(strategyShape) });
}

export async function get({ request, env }: AdminContext): Promise<Response> {
  const [row] = await getDb(env)
    .select()
    .from(strategies)
    .where(eq(strategies.name, pathParam(request, 'name')))
    .limit(1);
  if (!row) throw notFound('No strategy found');
  return json(strategyShape(row));
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
