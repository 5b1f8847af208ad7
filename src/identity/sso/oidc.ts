/**
 * OpenID Connect sign-in: the authorization-code flow with PKCE (S256), `state` and `nonce`.
 *
 * `GET /auth/oidc/login` makes four random values: `state` and `nonce` (sent to the provider),
 * the PKCE verifier (its S256 challenge is sent) and a browser binding (an HttpOnly cookie on
 * `/auth/oidc`, never in a URL). D1 keeps, under the hash of `state`, the hashes of the binding
 * and the nonce and the verifier sealed with a key derived from the binding; the row lives 10
 * minutes. `GET /auth/oidc/callback` takes (deletes) that row in one statement — a `state`
 * works once — checks the binding cookie, redeems the code with the verifier and the client
 * secret, verifies the ID token with jose (signature against the provider's key set, `iss`,
 * `aud`, `exp`, the nonce) and opens our own `unleash-session`.
 *
 * Outbound calls go only to the configured provider: its discovery document (whose `issuer`
 * must be the configured origin) and the endpoints that document names, https only (http on
 * loopback for local development). Tokens are never logged or stored.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Env } from '../../env';
import { sha256Hex, toBase64, fromBase64 } from '../../lib/encoding';
import { log } from '../../log';
import { allowedProviderUrl } from './service';
import type { OidcSettings } from './schema';

/** How long a started sign-in may take at the provider. */
export const LOGIN_TTL_SECONDS = 600;
export const OIDC_COOKIE = 'unleash-oidc';
const CLOCK_TOLERANCE_SECONDS = 30;
const DISCOVERY_TTL_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 5_000;

/** A sign-in that cannot go on; its message is shown on the login page. */
export class OidcFailure extends Error {}

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  end_session_endpoint?: string;
  token_endpoint_auth_methods_supported?: string[];
}

const discoveries = new Map<string, { discovery: Discovery; until: number }>();
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

/** The well-known document's URL: the configured URL when it names it, else the issuer's. */
function discoveryUrl(discoverUrl: string): URL {
  const url = allowedProviderUrl(discoverUrl);
  if (!url) throw new OidcFailure('The OpenID Connect discover URL is not allowed');
  if (!url.pathname.endsWith('/.well-known/openid-configuration')) {
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  }
  return url;
}

async function fetchJson(url: string, init: RequestInit, what: string): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  } catch (error) {
    log.warn('OpenID Connect provider unreachable', { what, error: error instanceof Error ? error.message : String(error) });
    throw new OidcFailure('The identity provider could not be reached');
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok || body === null || typeof body !== 'object' || Array.isArray(body)) {
    // The provider's error code only (RFC 6749 `error`), never a token or the body.
    const code =
      body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string' ? (body as { error: string }).error : '';
    log.warn('OpenID Connect provider refused', { what, status: response.status, error: code.slice(0, 64) });
    throw new OidcFailure(`The identity provider refused the sign-in${code ? ` (${code.slice(0, 64)})` : ''}`);
  }
  return body as Record<string, unknown>;
}

function endpoint(document: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = document[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || !allowedProviderUrl(value))
    throw new OidcFailure(`The identity provider's ${name} is missing or not allowed`);
  return value;
}

/** The provider's discovery document, cached 10 minutes per isolate. */
async function discover(settings: OidcSettings): Promise<Discovery> {
  const url = discoveryUrl(settings.discoverUrl);
  const key = url.href;
  const known = discoveries.get(key);
  if (known && known.until > Date.now()) return known.discovery;
  const document = await fetchJson(url.href, { headers: { accept: 'application/json' } }, 'discovery');
  const issuer = typeof document.issuer === 'string' ? document.issuer : '';
  const issuerUrl = allowedProviderUrl(issuer);
  // OpenID Connect Discovery: the document must be the issuer's own.
  if (!issuerUrl || issuerUrl.origin !== url.origin)
    throw new OidcFailure("The identity provider's issuer does not match the discover URL");
  const methods = document.token_endpoint_auth_methods_supported;
  const discovery: Discovery = {
    issuer,
    authorization_endpoint: endpoint(document, 'authorization_endpoint', true)!,
    token_endpoint: endpoint(document, 'token_endpoint', true)!,
    jwks_uri: endpoint(document, 'jwks_uri', true)!,
    userinfo_endpoint: endpoint(document, 'userinfo_endpoint', false),
    end_session_endpoint: endpoint(document, 'end_session_endpoint', false),
    token_endpoint_auth_methods_supported: Array.isArray(methods) ? methods.filter((m): m is string => typeof m === 'string') : undefined,
  };
  if (discoveries.size >= 8) discoveries.clear();
  discoveries.set(key, { discovery, until: Date.now() + DISCOVERY_TTL_MS });
  return discovery;
}

function keySetOf(jwksUri: string): ReturnType<typeof createRemoteJWKSet> {
  let keySet = keySets.get(jwksUri);
  if (!keySet) {
    if (keySets.size >= 8) keySets.clear();
    keySet = createRemoteJWKSet(new URL(jwksUri), {
      cacheMaxAge: DISCOVERY_TTL_MS,
      cooldownDuration: 2_000,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
    keySets.set(jwksUri, keySet);
  }
  return keySet;
}

// ---------------------------------------------------------------------------------------
// Random values, hashes and the sealed verifier

function base64Url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomToken(): string {
  return base64Url(crypto.getRandomValues(new Uint8Array(32)));
}

async function pkceChallenge(verifier: string): Promise<string> {
  return base64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

async function bindingKey(binding: string): Promise<CryptoKey> {
  const material = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`unleash-oidc-seal:${binding}`));
  return crypto.subtle.importKey('raw', material, 'AES-GCM', false, ['encrypt', 'decrypt']);
}

async function seal(value: string, binding: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, await bindingKey(binding), new TextEncoder().encode(value)),
  );
  const out = new Uint8Array(iv.length + sealed.length);
  out.set(iv);
  out.set(sealed, iv.length);
  return toBase64(out);
}

async function unseal(sealed: string, binding: string): Promise<string> {
  const bytes = fromBase64(sealed);
  const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: bytes.slice(0, 12) }, await bindingKey(binding), bytes.slice(12));
  return new TextDecoder().decode(plain);
}

/** A path of ours to land on after signing in; anything else (another site, `//host`) is `/`. */
function safeRedirect(redirect: string | undefined): string {
  if (!redirect) return '/';
  let path: string;
  try {
    path = decodeURIComponent(redirect);
  } catch {
    return '/';
  }
  // Control characters are refused on purpose: they could split or hide a redirect target.
  // eslint-disable-next-line no-control-regex
  if (!path.startsWith('/') || path.startsWith('//') || path.startsWith('/\\') || /[\u0000-\u001f\\]/.test(path)) return '/';
  if (path.startsWith('/login') || path.startsWith('/auth/')) return '/';
  return path.slice(0, 2048);
}

// ---------------------------------------------------------------------------------------
// The two legs of the flow

function callbackUrl(base: string): string {
  return `${base}/auth/oidc/callback`;
}

export interface StartedLogin {
  location: string;
  binding: string;
  row: { stateHash: string; bindingHash: string; nonceHash: string; sealedVerifier: string; redirect: string; expiresAt: string };
}

/** The redirect to the provider and what to remember of it. */
export async function startLogin(settings: OidcSettings, base: string, redirect: string | undefined): Promise<StartedLogin> {
  const discovery = await discover(settings);
  const [state, nonce, verifier, binding] = [randomToken(), randomToken(), randomToken(), randomToken()];
  const scopes = ['openid', 'email', 'profile', ...(settings.addGroupsScope ? ['groups'] : [])];
  const location = new URL(discovery.authorization_endpoint);
  location.searchParams.set('response_type', 'code');
  location.searchParams.set('client_id', settings.clientId);
  location.searchParams.set('redirect_uri', callbackUrl(base));
  location.searchParams.set('scope', scopes.join(' '));
  location.searchParams.set('state', state);
  location.searchParams.set('nonce', nonce);
  location.searchParams.set('code_challenge', await pkceChallenge(verifier));
  location.searchParams.set('code_challenge_method', 'S256');
  if (settings.acrValues) location.searchParams.set('acr_values', settings.acrValues);
  return {
    location: location.href,
    binding,
    row: {
      stateHash: await sha256Hex(state),
      bindingHash: await sha256Hex(binding),
      nonceHash: await sha256Hex(nonce),
      sealedVerifier: await seal(verifier, binding),
      redirect: safeRedirect(redirect),
      expiresAt: new Date(Date.now() + LOGIN_TTL_SECONDS * 1000).toISOString(),
    },
  };
}

/** The verified claims of the person who signed in at the provider (ID token, completed by userinfo). */
export interface ProviderClaims {
  claims: Record<string, unknown>;
  email: string;
  name: string | undefined;
}

function clientAuthentication(settings: OidcSettings, secret: string, discovery: Discovery, form: URLSearchParams): Record<string, string> {
  form.set('client_id', settings.clientId);
  if (secret === '') return {};
  const methods = discovery.token_endpoint_auth_methods_supported;
  if (methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')) {
    form.set('client_secret', secret);
    return {};
  }
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return { authorization: `Basic ${btoa(`${encode(settings.clientId)}:${encode(secret)}`)}` };
}

/**
 * Redeems the code and verifies the ID token. `login` is the taken row; `binding` the cookie
 * that proved the browser. Throws OidcFailure with what the person should read.
 */
export async function finishLogin(
  env: Env,
  settings: OidcSettings,
  base: string,
  code: string,
  login: { nonceHash: string; sealedVerifier: string },
  binding: string,
  /** The `iss` of the authorization response, when the provider sends it (RFC 9207). */
  responseIssuer?: string,
): Promise<ProviderClaims> {
  const discovery = await discover(settings);
  if (responseIssuer !== undefined && responseIssuer !== discovery.issuer)
    throw new OidcFailure('The answer came from another identity provider');
  let verifier: string;
  try {
    verifier = await unseal(login.sealedVerifier, binding);
  } catch {
    throw new OidcFailure('This sign-in was started in another browser; please sign in again');
  }
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callbackUrl(base), code_verifier: verifier });
  const secret = env.OIDC_CLIENT_SECRET || settings.secret;
  const authHeaders = clientAuthentication(settings, secret, discovery, form);
  const tokens = await fetchJson(
    discovery.token_endpoint,
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...authHeaders },
      body: form,
    },
    'token',
  );
  if (typeof tokens.id_token !== 'string') throw new OidcFailure('The identity provider sent no ID token');
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(tokens.id_token, keySetOf(discovery.jwks_uri), {
      issuer: discovery.issuer,
      audience: settings.clientId,
      algorithms: [settings.idTokenSigningAlgorithm],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ['exp', 'iat', 'sub', 'nonce'],
    }));
  } catch (error) {
    const reason = error instanceof errors.JOSEError ? error.code : 'unreadable';
    log.warn('OpenID Connect ID token refused', { reason });
    throw new OidcFailure('The identity provider sent an ID token that does not verify');
  }
  // Several audiences: we must be the party it was issued to (OpenID Connect Core 3.1.3.7).
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== settings.clientId) {
    throw new OidcFailure('The ID token was issued to another application');
  }
  if (typeof payload.nonce !== 'string' || (await sha256Hex(payload.nonce)) !== login.nonceHash) {
    log.warn('OpenID Connect ID token refused', { reason: 'nonce mismatch' });
    throw new OidcFailure('The ID token does not belong to this sign-in (nonce)');
  }
  const claims: Record<string, unknown> = { ...payload };
  if (typeof claims.email !== 'string' && discovery.userinfo_endpoint && typeof tokens.access_token === 'string') {
    const userinfo = await fetchJson(
      discovery.userinfo_endpoint,
      { headers: { authorization: `Bearer ${tokens.access_token}`, accept: 'application/json' } },
      'userinfo',
    );
    if (userinfo.sub !== payload.sub) throw new OidcFailure('The identity provider described another person');
    for (const [key, value] of Object.entries(userinfo)) if (!Object.hasOwn(claims, key)) claims[key] = value;
  }
  if (typeof claims.email !== 'string' || claims.email === '') throw new OidcFailure('The identity provider gave no email address');
  if (claims.email_verified === false || claims.email_verified === 'false')
    throw new OidcFailure('The identity provider has not verified this email address');
  const name = typeof claims.name === 'string' ? claims.name : undefined;
  return { claims, email: claims.email, name };
}

/** Where the browser goes after our sign-out: the provider's end-session endpoint, when single sign-out is on. */
export async function endSessionLocation(settings: OidcSettings, base: string): Promise<string | undefined> {
  if (!settings.enabled || !settings.enableSingleSignOut) return undefined;
  let discovery: Discovery;
  try {
    discovery = await discover(settings);
  } catch {
    return undefined;
  }
  if (!discovery.end_session_endpoint) return undefined;
  const location = new URL(discovery.end_session_endpoint);
  location.searchParams.set('client_id', settings.clientId);
  location.searchParams.set('post_logout_redirect_uri', `${base}/login`);
  return location.href;
}
