import type { RequestContext } from '../../auth/guard';
import { getDb } from '../../db/client';
import { readJsonBody } from '../../http/body';
import { pathParam } from '../../http/params';
import { empty, json } from '../../http/responses';
import { parseInput } from '../../http/validation';
import { IdParams } from '../users/schema';
import { RoleDefinitionSchema } from './schema';
import * as service from './service';

function roleId(request: RequestContext['request']): number | null {
  return parseInput(IdParams, { id: pathParam(request, 'id') }, '/params').id;
}

/** Seed operation 1: 200 with no body when the definition could be created; stores nothing. */
export async function validate({ request, env }: RequestContext): Promise<Response> {
  const body = parseInput(RoleDefinitionSchema, await readJsonBody(request), '/body');
  await service.validateDefinition(getDb(env), body);
  return empty(200);
}

export async function list({ env }: RequestContext): Promise<Response> {
  return json(await service.listRoles(getDb(env)));
}

export async function get({ request, env }: RequestContext): Promise<Response> {
  return json(await service.getRole(getDb(env), roleId(request)));
}

export async function create({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(RoleDefinitionSchema, await readJsonBody(request), '/body');
  const role = await service.createRole(getDb(env), principal, body);
  return json(role, 201, { location: `/api/admin/roles/${role.id}` });
}

export async function update({ request, env, principal }: RequestContext): Promise<Response> {
  const id = roleId(request);
  const body = parseInput(RoleDefinitionSchema, await readJsonBody(request), '/body');
  return json(await service.updateRole(getDb(env), principal, id, body));
}

export async function remove({ request, env, principal }: RequestContext): Promise<Response> {
  await service.deleteRole(getDb(env), principal, roleId(request));
  return empty(200);
}
