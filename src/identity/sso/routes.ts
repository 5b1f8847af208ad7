/** Single sign-on: the OpenID Connect sign-in legs and the settings (Unleash Enterprise's paths and shapes). */
import { ADMIN } from '../../auth/permissions';
import { secureAttribute, sessionCookie } from '../../auth/credentials';
import { getDb } from '../../db/client';
import { publicBaseUrl } from '../../http/base-url';
import { json, untyped, type UntypedAnswer } from '../../http/responses';
import { admin, open, route, type OpenContext, type Route } from '../../http/route';
import { sha256Hex } from '../../lib/encoding';
import { digestsEqual } from '../../auth/secrets';
import { log } from '../../log';
import { createSession } from '../../auth/user-sessions';
import { finishLogin, LOGIN_TTL_SECONDS, OIDC_COOKIE, OidcFailure, startLogin } from './oidc';
import {
  OidcCallbackQuery,
  OidcLoginQuery,
  OidcSettingsAnswer,
  OidcSettingsInput,
  SamlSettingsAnswer,
  SamlSettingsInput,
  SimpleSettings,
} from './schema';
import * as service from './service';
import * as store from './store';
import type * as v from 'valibot';
import { badRequest } from '../../http/errors';
import { recordLogin, requestAddress } from '../login-history/service';

/** Unleash's permission for the single sign-on settings pages (held through ADMIN, or a custom root role). */
const UPDATE_AUTH_CONFIGURATION = 'UPDATE_AUTH_CONFIGURATION';
/** Why the SAML 2.0 page cannot switch SAML on. */
const SAML_NOT_OFFERED =
  'SAML 2.0 sign-in is not offered by this service. Use OpenID Connect instead (Admin settings → Single sign-on → OpenID Connect); most SAML identity providers (Okta, Microsoft Entra ID, Keycloak, Google) also offer it.';

const REDIRECT = {
  302: {
    description: 'Redirect (to the provider, back into the UI, or to the login page with `errorMsg`)',
    schema: null,
    contentType: 'text/plain',
  },
};

/** A redirect: the way out of the typed answers (a 302 is not JSON). */
function redirect(location: string, cookies: string[] = []): UntypedAnswer {
  const headers = new Headers({ location, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
  for (const cookie of cookies) headers.append('set-cookie', cookie);
  return untyped(new Response(`Found. Redirecting to ${location}`, { status: 302, headers }));
}

function bindingCookie(request: Request, value: string, maxAge: number): string {
  return `${OIDC_COOKIE}=${value}; Path=/auth/oidc; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secureAttribute(request)}`;
}

function bindingFrom(request: Request): string | null {
  for (const part of (request.headers.get('cookie') ?? '').slice(0, 16_384).split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === OIDC_COOKIE) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

/** The login page with the reason shown (Unleash's UI reads `errorMsg`). */
function toLoginPage(request: Request, message: string): UntypedAnswer {
  return redirect(`/login?errorMsg=${encodeURIComponent(message)}`, [bindingCookie(request, '', 0)]);
}

async function login({ request, env, query }: OpenContext<undefined, v.InferOutput<typeof OidcLoginQuery>>): Promise<UntypedAnswer> {
  const db = getDb(env);
  const { oidc } = await service.signInSettings(db);
  if (!service.oidcUsable(oidc)) return toLoginPage(request, 'Single sign-on with OpenID Connect is not enabled');
  try {
    const started = await startLogin(oidc, publicBaseUrl(env, request), query.redirect);
    await store.insertLogin(db, started.row, new Date().toISOString());
    return redirect(started.location, [bindingCookie(request, started.binding, LOGIN_TTL_SECONDS)]);
  } catch (error) {
    if (error instanceof OidcFailure) return toLoginPage(request, error.message);
    throw error;
  }
}

async function callback({ request, env, query }: OpenContext<undefined, v.InferOutput<typeof OidcCallbackQuery>>): Promise<UntypedAnswer> {
  const db = getDb(env);
  const { oidc } = await service.signInSettings(db);
  if (!service.oidcUsable(oidc)) return toLoginPage(request, 'Single sign-on with OpenID Connect is not enabled');
  if (!query.state) return toLoginPage(request, 'The identity provider answered without state; please sign in again');
  // Taken at once, whatever follows: a state works once.
  const started = await store.takeLogin(db, await sha256Hex(query.state));
  // Only answers to a sign-in we started go in the login history (anyone can call this address).
  if (!started) return toLoginPage(request, 'This sign-in has expired or was already used; please sign in again');
  let username = 'unknown';
  const refuse = async (message: string): Promise<UntypedAnswer> => {
    await recordLogin(db, { username, authType: 'oidc', ip: requestAddress(request), failureReason: message });
    return toLoginPage(request, message);
  };
  if (Date.parse(started.expiresAt) <= Date.now()) return refuse('This sign-in has expired or was already used; please sign in again');
  const binding = bindingFrom(request);
  if (binding === null || !digestsEqual(await sha256Hex(binding), started.bindingHash)) {
    return refuse('This sign-in was started in another browser; please sign in again');
  }
  if (query.error) return refuse(`The identity provider refused the sign-in (${query.error})`);
  if (!query.code) return refuse('The identity provider answered without a code');
  try {
    const base = publicBaseUrl(env, request);
    const person = await finishLogin(env, oidc, base, query.code, started, binding, query.iss);
    username = person.email;
    const userId = await service.provisionUser(db, {
      email: person.email,
      name: person.name,
      groups: service.claimValues(person.claims, service.groupPath(oidc)),
    });
    const session = await createSession(env, db, userId);
    await recordLogin(db, { username, authType: 'oidc', ip: requestAddress(request) });
    return redirect(started.redirect, [sessionCookie(request, session.sessionId, session.expiresAt), bindingCookie(request, '', 0)]);
  } catch (error) {
    if (error instanceof OidcFailure) return refuse(error.message);
    if (error instanceof service.SignInRefused) {
      log.warn('single sign-on refused', { reason: error.message });
      return refuse(`Sign-in refused: ${error.message}`);
    }
    throw error;
  }
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/auth/oidc/login',
    access: open('sso'),
    tag: 'Auth',
    operationId: 'oidcLogin',
    summary: 'Start signing in with OpenID Connect: redirects to the identity provider',
    query: OidcLoginQuery,
    responses: REDIRECT,
    errors: [400, 429],
    handler: login,
  }),
  route({
    method: 'GET',
    path: '/auth/oidc/callback',
    access: open('sso'),
    tag: 'Auth',
    operationId: 'oidcCallback',
    summary: "The identity provider's answer: verifies it, signs the person in and returns to the UI",
    query: OidcCallbackQuery,
    responses: REDIRECT,
    errors: [400, 429],
    handler: callback,
  }),
  route({
    method: 'GET',
    path: '/api/admin/auth/oidc/settings',
    access: admin(ADMIN),
    tag: 'Auth',
    operationId: 'getOidcSettings',
    summary: 'OpenID Connect settings (the client secret masked)',
    responses: { 200: { description: 'The settings; `{}` before any were saved', schema: OidcSettingsAnswer } },
    handler: async ({ env }) => json(await service.getOidcSettings(env, getDb(env))),
  }),
  route({
    method: 'POST',
    path: '/api/admin/auth/oidc/settings',
    access: admin(ADMIN),
    tag: 'Auth',
    operationId: 'setOidcSettings',
    summary: 'Save the OpenID Connect settings',
    body: OidcSettingsInput,
    responses: { 200: { description: 'The saved settings (the client secret masked)', schema: OidcSettingsAnswer } },
    errors: [400, 413, 415],
    handler: async ({ env, principal, body }) => json(await service.setOidcSettings(env, getDb(env), principal, body)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/auth/simple/settings',
    access: admin(ADMIN),
    tag: 'Auth',
    operationId: 'getSimpleSettings',
    summary: 'Whether password sign-in is switched off',
    responses: { 200: { description: 'The setting', schema: SimpleSettings } },
    handler: async ({ env }) => json(await service.getSimpleSettings(getDb(env))),
  }),
  route({
    method: 'POST',
    path: '/api/admin/auth/simple/settings',
    access: admin(ADMIN),
    tag: 'Auth',
    operationId: 'setSimpleSettings',
    summary: 'Switch password sign-in off (only while single sign-on is on; the bootstrap admin keeps it) or on',
    body: SimpleSettings,
    responses: { 200: { description: 'The setting', schema: SimpleSettings } },
    errors: [400, 413, 415],
    handler: async ({ env, principal, body }) => json(await service.setSimpleSettings(env, getDb(env), principal, body)),
  }),
  route({
    method: 'GET',
    path: '/api/admin/auth/saml/settings',
    access: admin([ADMIN, UPDATE_AUTH_CONFIGURATION]),
    tag: 'Auth',
    operationId: 'getSamlSettings',
    summary: 'SAML 2.0 sign-in settings: SAML is not offered (use OpenID Connect), so always off',
    responses: { 200: { description: 'Success', schema: SamlSettingsAnswer } },
    errors: [401, 403],
    handler: () => json({ enabled: false as const }),
  }),
  route({
    method: 'POST',
    path: '/api/admin/auth/saml/settings',
    access: admin([ADMIN, UPDATE_AUTH_CONFIGURATION]),
    tag: 'Auth',
    operationId: 'setSamlSettings',
    summary: 'Refuses to switch SAML 2.0 on (not offered: use OpenID Connect); saving it off stores nothing',
    body: SamlSettingsInput,
    responses: { 200: { description: 'SAML stays off', schema: SamlSettingsAnswer } },
    errors: [400, 401, 403, 413, 415],
    handler: ({ body }) => {
      if (body.enabled === true) throw badRequest(SAML_NOT_OFFERED, { path: '/body/enabled' });
      return json({ enabled: false as const });
    },
  }),
];
