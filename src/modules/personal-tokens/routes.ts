import type { RequestContext } from '../../auth/guard';
import type { UserPrincipal } from '../../auth/principal';
import { getDb } from '../../db/client';
import { noAccess } from '../../http/errors';
import { readJsonBody } from '../../http/body';
import { pathParam } from '../../http/params';
import { empty, json } from '../../http/responses';
import { parseInput } from '../../http/validation';
import { CreatePersonalTokenSchema, PersonalTokenIdParams } from './schema';
import * as service from './service';

/** Personal tokens belong to a person: an API key has none (Unleash's 403 message). */
function requireUser(principal: RequestContext['principal']): UserPrincipal {
  if (principal.kind !== 'user') throw noAccess('PATs require an authenticated user.');
  return principal;
}

export async function list({ env, principal }: RequestContext): Promise<Response> {
  return json(await service.listTokens(getDb(env), requireUser(principal).userId));
}

export async function create({ request, env, principal }: RequestContext): Promise<Response> {
  const user = requireUser(principal);
  const body = parseInput(CreatePersonalTokenSchema, await readJsonBody(request), '/body');
  return json(await service.createToken(env, getDb(env), user.userId, body), 201);
}

export async function remove({ request, env, principal }: RequestContext): Promise<Response> {
  const user = requireUser(principal);
  const { id } = parseInput(PersonalTokenIdParams, { id: pathParam(request, 'id') }, '/params');
  await service.deleteToken(env, getDb(env), user.userId, id);
  return empty(200);
}
