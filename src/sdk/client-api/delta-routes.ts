/**
 * `GET /api/client/delta`: Unleash's delta API (Enterprise in Unleash, open here). The ETag is
 * the last event id; a client sending it back as `If-None-Match` gets only what changed since,
 * or 304 when nothing it can see did.
 */
import { deltaBody, deltaSince, parseRevision, type DeltaQuery } from './delta';
import { effectiveQuery } from './routes';
import { environmentOf } from './token-environment';
import { snapshotFor } from './snapshot';
import { BACKEND_TOKEN_TYPES } from '../../auth/principal';
import { untyped, type UntypedAnswer } from '../../http/responses';
import { route, sdk, type Route, type SdkContext } from '../../http/route';
import { ClientFeaturesQuery, GetDeltaResponse } from './schema';

/** The token's scope and the SDK's `project` / `namePrefix`, validated as for `/api/client/features`. */
export function deltaQueryOf(context: SdkContext): { environment: string; query: DeltaQuery } {
  const { request, principal } = context;
  const query = effectiveQuery(new URL(request.url).searchParams, principal.token, false);
  return {
    environment: environmentOf(principal.token, query.environment ?? null),
    query: { ...(query.project ? { project: query.project } : {}), ...(query.namePrefix ? { namePrefix: query.namePrefix } : {}) },
  };
}

/** The body is written as bytes (delta.ts) and a 304 has none: the answer is not typed. */
async function delta(context: SdkContext): Promise<UntypedAnswer> {
  const { environment, query } = deltaQueryOf(context);
  const since = parseRevision(context.request.headers.get('if-none-match'));
  const snapshot = await snapshotFor(context.env, environment);
  const events = await deltaSince(context.env, snapshot, query, since);
  if (events === null) return untyped(new Response(null, { status: 304, headers: { etag: `"${since}"` } }));
  return untyped(
    new Response(deltaBody(events), {
      headers: { 'content-type': 'application/json; charset=utf-8', etag: `"${events.lastEventId}"`, 'cache-control': 'no-cache' },
    }),
  );
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/client/delta',
    access: sdk(BACKEND_TOKEN_TYPES),
    tag: 'Client',
    operationId: 'getDelta',
    summary: 'Changes since the revision the SDK holds',
    query: ClientFeaturesQuery,
    queryReadByHandler: true,
    responses: {
      200: { description: 'Success', schema: GetDeltaResponse },
      304: { description: 'Not modified: the ETag still matches', schema: null },
    },
    errors: [400, 401, 403],
    handler: delta,
  }),
];
