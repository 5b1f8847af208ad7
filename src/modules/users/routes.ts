import { publicBaseUrl } from '../../http/base-url';
import type { RequestContext } from '../../auth/guard';
import { getDb } from '../../db/client';
import { readJsonBody } from '../../http/body';
import { pathParam } from '../../http/params';
import { empty, json } from '../../http/responses';
import { parseInput } from '../../http/validation';
import type { Env } from '../../env';
import { CreateUserSchema, IdParams, UpdateUserSchema } from './schema';
import * as service from './service';

function userId(request: RequestContext['request']): number | null {
  return parseInput(IdParams, { id: pathParam(request, 'id') }, '/params').id;
}


export async function create({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(CreateUserSchema, await readJsonBody(request), '/body');
  const user = await service.createUser(getDb(env), principal, body);
  // Without password login or email there is no reset link to send: Unleash then hands out
  // its base URL and reports that no email went out.
  return json({ ...user, inviteLink: publicBaseUrl(env, request), emailSent: false }, 201, {
    location: `/api/admin/user-admin/${user.id}`,
  });
}

export async function list({ env }: RequestContext): Promise<Response> {
  return json(await service.listUsers(getDb(env)));
}

export async function get({ request, env }: RequestContext): Promise<Response> {
  return json(await service.getUser(getDb(env), userId(request)));
}

export async function update({ request, env, principal }: RequestContext): Promise<Response> {
  const id = userId(request);
  const body = parseInput(UpdateUserSchema, await readJsonBody(request), '/body');
  return json(await service.updateUser(getDb(env), principal, id, body));
}

export async function remove({ request, env, principal }: RequestContext): Promise<Response> {
  await service.deleteUser(getDb(env), principal, userId(request));
  return empty(200);
}
