import type { IRequest } from 'itty-router';
import type { RequestContext } from '../../auth/guard';
import { getDb } from '../../db/client';
import type { Env } from '../../env';
import { readJsonBody } from '../../http/body';
import { pathParam } from '../../http/params';
import { empty, json, NO_STORE } from '../../http/responses';
import { parseInput } from '../../http/validation';
import { publicBaseUrl } from '../../http/base-url';
import { CreateSignupTokenSchema, SignupSchema, UpdateSignupTokenSchema } from './schema';
import * as service from './service';

export async function create({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(CreateSignupTokenSchema, await readJsonBody(request), '/body');
  const token = await service.createToken(getDb(env), principal, body, publicBaseUrl(env, request));
  return json(token, 201, { location: `/api/admin/invite-link/tokens/${token.secret}`, ...NO_STORE });
}

export async function list({ env }: RequestContext): Promise<Response> {
  return json(await service.listTokens(getDb(env)), 200, NO_STORE);
}

export async function get({ request, env }: RequestContext): Promise<Response> {
  return json(await service.getToken(getDb(env), pathParam(request, 'token')), 200, NO_STORE);
}

/** Seed operation 3. */
export async function update({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(UpdateSignupTokenSchema, await readJsonBody(request), '/body');
  return json(await service.updateToken(getDb(env), principal, pathParam(request, 'token'), body), 200, NO_STORE);
}

// Every answer above carries invite secrets: NO_STORE keeps them out of caches.

// The public side of invite links: no key, the secret in the path is the credential.

export async function validateInvite(request: IRequest, env: Env): Promise<Response> {
  await service.requireUsableToken(getDb(env), pathParam(request, 'token'));
  return empty(200);
}

export async function signup(request: IRequest, env: Env): Promise<Response> {
  const body = parseInput(SignupSchema, await readJsonBody(request), '/body');
  return json(await service.signup(getDb(env), pathParam(request, 'token'), body), 201);
}
