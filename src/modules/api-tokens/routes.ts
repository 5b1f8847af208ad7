import type { RequestContext } from '../../auth/guard';
import { getDb } from '../../db/client';
import { readJsonBody } from '../../http/body';
import { empty, json } from '../../http/responses';
import { pathParam } from '../../http/params';
import { parseInput } from '../../http/validation';
import { CreateApiTokenSchema, UpdateApiTokenSchema } from './schema';
import * as service from './service';

export async function create({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(CreateApiTokenSchema, await readJsonBody(request), '/body');
  const created = await service.createToken(env, getDb(env), principal, body);
  return json(created.body, 201, { location: `/api/admin/api-tokens/${created.id}` });
}

export async function list({ env, principal }: RequestContext): Promise<Response> {
  return json({ tokens: await service.listTokens(getDb(env), principal) });
}

export async function get({ request, env, principal }: RequestContext): Promise<Response> {
  return json(await service.getToken(getDb(env), principal, pathParam(request, 'token')));
}

export async function update({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(UpdateApiTokenSchema, await readJsonBody(request), '/body');
  await service.updateExpiry(env, getDb(env), principal, pathParam(request, 'token'), body.expiresAt);
  return empty(200);
}

export async function revoke({ request, env, principal }: RequestContext): Promise<Response> {
  await service.revokeToken(env, getDb(env), principal, pathParam(request, 'token'));
  return empty(200);
}

// Project API tokens (`/api/admin/projects/:projectId/api-tokens`)

export async function createForProject({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(CreateApiTokenSchema, await readJsonBody(request), '/body');
  const created = await service.createProjectToken(env, getDb(env), principal, pathParam(request, 'projectId'), body);
  return json(created.body, 201, { location: `/api/admin/api-tokens/${created.id}` });
}

export async function listForProject({ request, env }: RequestContext): Promise<Response> {
  return json({ tokens: await service.listProjectTokens(getDb(env), pathParam(request, 'projectId')) });
}

export async function revokeForProject({ request, env, principal }: RequestContext): Promise<Response> {
  await service.revokeProjectToken(env, getDb(env), principal, pathParam(request, 'projectId'), pathParam(request, 'token'));
  return empty(200);
}
