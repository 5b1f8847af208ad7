import type * as v from 'valibot';
import type { IRequest } from 'itty-router';
import { clearedSessionCookie, sessionCookie } from '../../auth/credentials';
import { getDb } from '../../db/client';
import type { Env } from '../../env';
import { readJsonBody } from '../../http/body';
import { clientKey } from '../../http/rate-limit';
import { json } from '../../http/responses';
import { parseInput } from '../../http/validation';
import { sessionUserBody, verifyLogin } from '../users/service';
import { LoginSchema } from './schema';
import * as service from './service';
import { authenticated, open, route, type Route, type OpenContext, type AdminContext } from '../../http/route';
import { LoginResponse } from './schema';
import { refuseSignInFromOtherSites } from '../../auth/same-origin';

/**
 * `POST /auth/simple/login`: public (rate limited by address in front of it); refused when
 * another site's page posts it.
 */
export async function login({ request, env, body }: OpenContext<v.InferOutput<typeof LoginSchema>>): Promise<Response> {
  refuseSignInFromOtherSites(request, env);
  const db = getDb(env);
  const user = await verifyLogin(db, body.username, body.password, clientKey(request));
  const session = await service.createSession(env, db, user.id);
  return json({ ...(await sessionUserBody(user)), deletedSessions: 0, activeSessions: session.activeSessions }, 200, {
    'set-cookie': sessionCookie(request, session.sessionId, session.expiresAt),
  });
}

/**
 * `POST /logout`: ends the caller's sessions and clears the cookie, then sends the browser to
 * the start page, as Unleash does. There is deliberately no GET: a link or image must not
 * sign anyone out (Unleash 6.10.1 serves its UI page on GET /logout).
 */
export async function logout({ request, env, principal }: AdminContext): Promise<Response> {
  if (principal.kind === 'user') await service.signOut(env, getDb(env), principal.userId);
  return new Response('Found. Redirecting to /', {
    status: 302,
    headers: {
      location: '/',
      'set-cookie': clearedSessionCookie(request),
      'clear-site-data': '"cookies", "storage"',
      'content-type': 'text/plain; charset=utf-8',
    },
  });
}

export const routes: Route[] = [
  route({
    method: 'POST',
    path: '/auth/simple/login',
    access: open('login'),
    tag: 'Auth',
    operationId: 'login',
    summary: 'Sign in with a username or email and a password',
    body: LoginSchema,
    responses: { 200: { description: 'Success', schema: LoginResponse } },
    errors: [400, 401, 403, 413, 429],
    handler: login,
  }),
  route({
    method: 'POST',
    path: '/logout',
    access: authenticated(),
    tag: 'Auth',
    operationId: 'logout',
    summary: 'Sign out: ends this session',
    responses: { 302: { description: 'Answer', schema: null, contentType: 'text/plain' } },
    errors: [401],
    handler: logout,
  }),
];
