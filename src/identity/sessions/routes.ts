import type * as v from 'valibot';
import { clearedSessionCookie, sessionCookie } from '../../auth/credentials';
import { getDb } from '../../db/client';
import type { Env } from '../../env';
import { clientKey } from '../../http/rate-limit';
import { json, untyped, type UntypedAnswer } from '../../http/responses';
import { sessionUserBody, verifyLogin } from '../users/service';
import { LoginSchema } from './schema';
import { createSession } from '../../auth/user-sessions';
import { endSessions } from '../../auth/user-credentials';
import { BREAK_GLASS_USER_ID, signInSettings } from '../sso/service';
import { endSessionLocation } from '../sso/oidc';
import { publicBaseUrl } from '../../http/base-url';
import type { Db } from '../../db/client';
import { authenticated, open, route, type Route, type OpenContext, type AdminContext } from '../../http/route';
import { LoginResponse } from './schema';
import { refuseSignInFromOtherSites } from '../../auth/same-origin';
import { ApiError } from '../../http/errors';
import { recordLogin, requestAddress, type LoginAttempt } from '../login-history/service';

/**
 * `POST /auth/simple/login`: public (rate limited by address in front of it); refused when
 * another site's page posts it.
 */
async function login({ request, env, body }: OpenContext<v.InferOutput<typeof LoginSchema>>) {
  const db = getDb(env);
  const attempt: LoginAttempt = { username: body.username, authType: 'simple', ip: requestAddress(request) };
  try {
    refuseSignInFromOtherSites(request, env);
    // With single sign-on on, an admin may switch passwords off for everyone but the break-glass admin.
    const passwordsOff = (await signInSettings(db)).passwordDisabled;
    const user = await verifyLogin(
      db,
      body.username,
      body.password,
      clientKey(request),
      (userId) => !passwordsOff || userId === BREAK_GLASS_USER_ID,
    );
    const session = await createSession(env, db, user.id);
    await recordLogin(db, attempt);
    return json({ ...(await sessionUserBody(user)), deletedSessions: 0, activeSessions: session.activeSessions }, 200, {
      'set-cookie': sessionCookie(request, session.sessionId, session.expiresAt),
    });
  } catch (error) {
    // The refusal's own reason (`cause`, never answered) when it has one, else what was answered.
    if (error instanceof ApiError) {
      await recordLogin(db, { ...attempt, failureReason: typeof error.cause === 'string' ? error.cause : error.message });
    }
    throw error;
  }
}

/**
 * Where the browser goes once signed out: Cloudflare Access's own sign-out when Access signed
 * the person in (else its assertion would sign them in again at once); the OpenID Connect
 * provider's end-session endpoint when single sign-out is on; else the start page.
 */
async function afterSignOut(request: Request, env: Env, db: Db, principal: AdminContext['principal']): Promise<string> {
  if (principal.kind !== 'user') return '/';
  if (principal.via === 'access') return '/cdn-cgi/access/logout';
  if (principal.via !== 'session') return '/';
  const { oidc } = await signInSettings(db);
  return (oidc && (await endSessionLocation(oidc, publicBaseUrl(env, request)))) ?? '/';
}

/**
 * `POST /logout`: ends the caller's sessions and clears the cookie, then sends the browser to
 * the start page, as Unleash does. There is deliberately no GET: a link or image must not
 * sign anyone out (Unleash 6.10.1 serves its UI page on GET /logout).
 */
async function logout({ request, env, principal }: AdminContext): Promise<UntypedAnswer> {
  const db = getDb(env);
  // Signing out ends every session of the user, as Unleash 6.10.1 does.
  if (principal.kind === 'user') await endSessions(env, db, principal.userId);
  const location = await afterSignOut(request, env, db, principal);
  return untyped(
    new Response(`Found. Redirecting to ${location}`, {
      status: 302,
      headers: {
        location,
        'set-cookie': clearedSessionCookie(request),
        'clear-site-data': '"cookies", "storage"',
        'content-type': 'text/plain; charset=utf-8',
      },
    }),
  );
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
