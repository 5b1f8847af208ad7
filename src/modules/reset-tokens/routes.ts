import type { IRequest } from 'itty-router';
import * as v from 'valibot';
import { getDb } from '../../db/client';
import type { Env } from '../../env';
import { readJsonBody } from '../../http/body';
import { json, NO_STORE } from '../../http/responses';
import { parseInput, text } from '../../http/validation';
import { resetPassword, validateResetToken } from './service';

const ResetPasswordSchema = v.object({
  token: text(256),
  password: text(1024),
});

/** `GET /auth/reset/validate?token=<secret>` (public: the secret is the credential). */
export async function validate(request: IRequest, env: Env): Promise<Response> {
  const token = new URL(request.url).searchParams.get('token') ?? '';
  return json(await validateResetToken(getDb(env), token), 200, NO_STORE);
}

/** `POST /auth/reset/password` `{token, password}` (public: the secret is the credential). */
export async function setPassword(request: IRequest, env: Env): Promise<Response> {
  const body = parseInput(ResetPasswordSchema, await readJsonBody(request), '/body');
  await resetPassword(env, getDb(env), body.token, body.password);
  return new Response(null, { status: 200 });
}
