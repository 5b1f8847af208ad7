import { publicBaseUrl } from '../../http/base-url';
import type { RequestContext } from '../../auth/guard';
import { getDb } from '../../db/client';
import { readJsonBody } from '../../http/body';
import { pathParam } from '../../http/params';
import { empty, json, NO_STORE } from '../../http/responses';
import { newResetToken } from '../reset-tokens/service';
import { parseInput } from '../../http/validation';
import type { Env } from '../../env';
import type { IRequest } from 'itty-router';
import { noAccess } from '../../http/errors';
import { ChangeOwnPasswordSchema, CreateUserSchema, IdParams, PasswordSchema, UpdateUserSchema } from './schema';
import * as service from './service';

function userId(request: RequestContext['request']): number | null {
  return parseInput(IdParams, { id: pathParam(request, 'id') }, '/params').id;
}

export async function create({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(CreateUserSchema, await readJsonBody(request), '/body');
  const db = getDb(env);
  // As Unleash: the answer carries the new user's link to choose a password
  // (`/new-user?token=<secret>`); the token row is written in the user's own batch.
  let inviteSecret = '';
  const user = await service.createUser(db, principal, body, async (id) => {
    const token = await newResetToken(db, id, principal);
    inviteSecret = token.secret;
    return [token.statement];
  });
  const inviteLink = `${publicBaseUrl(env, request)}/new-user?token=${inviteSecret}`;
  return json({ ...user, inviteLink, emailSent: false }, 201, {
    location: `/api/admin/user-admin/${user.id}`,
    ...NO_STORE,
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
  await service.deleteUser(env, getDb(env), principal, userId(request));
  return empty(200);
}

// The caller and passwords

/** `GET /api/admin/user`: who the caller is and what they may do. */
export async function current({ env, principal }: RequestContext): Promise<Response> {
  return json(await service.currentUser(getDb(env), principal), 200, { 'cache-control': 'no-store' });
}

export async function profile({ env, principal }: RequestContext): Promise<Response> {
  return json(await service.profile(getDb(env), principal));
}

/** `POST /api/admin/user-admin/validate-password` and the public `/auth/reset/validate-password`. */
export async function validatePassword(request: IRequest): Promise<Response> {
  service.validatePassword(parseInput(PasswordSchema, await readJsonBody(request), '/body').password);
  return empty(200);
}

/** `POST /api/admin/user-admin/:id/change-password`: an admin sets it; the user's sessions end. */
export async function setPassword({ request, env }: RequestContext): Promise<Response> {
  const id = userId(request);
  const { password } = parseInput(PasswordSchema, await readJsonBody(request), '/body');
  await service.setPassword(env, getDb(env), id, password);
  return empty(200);
}

/** `POST /api/admin/user/change-password`: a signed-in user; all their sessions end, this one too. */
export async function changeOwnPassword({ request, env, principal }: RequestContext): Promise<Response> {
  if (principal.kind !== 'user') throw noAccess('Only a signed-in user (session or personal access token) can change their own password.');
  const body = parseInput(ChangeOwnPasswordSchema, await readJsonBody(request), '/body');
  await service.changeOwnPassword(env, getDb(env), principal.userId, body);
  return empty(200);
}
