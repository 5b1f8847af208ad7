import type { IRequest } from 'itty-router';
import * as v from 'valibot';
import { getDb } from '../../db/client';
import type { Env } from '../../env';
import { empty, json, NO_STORE } from '../../http/responses';
import { text } from '../../http/validation';
import { resetPassword, validateResetToken } from './service';
import { open, route, type Route, type OpenContext } from '../../http/route';
import { ValidateTokenQuery, ValidateTokenResponse } from './schema';

const ResetPasswordSchema = v.object({
  token: text(256),
  password: text(1024),
});

/** `GET /auth/reset/validate?token=<secret>` (public: the secret is the credential). */
async function validate(request: IRequest, env: Env) {
  const token = new URL(request.url).searchParams.get('token') ?? '';
  return json(await validateResetToken(getDb(env), token), 200, NO_STORE);
}

/** `POST /auth/reset/password` `{token, password}` (public: the secret is the credential). */
async function setPassword({ env, body }: OpenContext<v.InferOutput<typeof ResetPasswordSchema>>) {
  await resetPassword(env, getDb(env), body.token, body.password);
  return empty(200);
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/auth/reset/validate',
    access: open('password-reset'),
    tag: 'Auth',
    operationId: 'validateToken',
    summary: 'Check a password-reset link',
    query: ValidateTokenQuery,
    queryReadByHandler: true,
    responses: { 200: { description: 'Success', schema: ValidateTokenResponse } },
    errors: [401],
    handler: ({ request, env }) => validate(request, env),
  }),
  route({
    method: 'POST',
    path: '/auth/reset/password',
    access: open('password-reset'),
    tag: 'Auth',
    operationId: 'changePassword',
    summary: 'Choose a password with a reset link',
    body: ResetPasswordSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 413],
    handler: setPassword,
  }),
];
