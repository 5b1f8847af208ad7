import { json } from '../../http/responses';
import { parseSearchParams } from './params';
import { authenticated, route, type Route } from '../../http/route';
import { SearchFeaturesResponse, SearchQuery } from './schema';
import { searchFeatures } from './service';

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/search/features',
    access: authenticated(),
    tag: 'Search',
    operationId: 'searchFeatures',
    query: SearchQuery,
    queryReadByHandler: true,
    summary: 'Search and filter feature flags, one page at a time',
    responses: { 200: { description: 'Success', schema: SearchFeaturesResponse } },
    errors: [400, 401, 403],
    handler: async ({ request, env, principal }) =>
      json(await searchFeatures(env, parseSearchParams(new URL(request.url).searchParams), principal.userId)),
  }),
];
