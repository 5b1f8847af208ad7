/**
 * Cloudflare Access: every request that passed the team's identity provider carries a JWT in
 * `Cf-Access-Jwt-Assertion`, signed with the team's keys (`<team domain>/cdn-cgi/access/certs`).
 * With `ACCESS_TEAM_DOMAIN` and `ACCESS_AUD` set, such a request signs its person in: the
 * signature, `iss` (the team domain), `aud` (the application's tag) and `exp`/`nbf` (30 s of
 * clock skew) are checked with jose; anything else never authenticates. The team's key set is
 * fetched once per isolate and kept for 10 minutes; a token naming a key id we do not hold makes
 * it fetched again (at most once every 2 s), so rotated keys are picked up at once.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Env } from '../../env';
import { log } from '../../log';

const ACCESS_HEADER = 'cf-access-jwt-assertion';
/** Clock skew allowed on `exp` and `nbf`. */
const ACCESS_CLOCK_TOLERANCE_SECONDS = 30;
/** Longest assertion looked at; Access tokens are around 1 KB. */
const MAX_ASSERTION_LENGTH = 16_384;
const KEY_SET_MAX_AGE_MS = 10 * 60_000;
/** Least time between two fetches of the key set triggered by unknown key ids. */
const KEY_SET_COOLDOWN_MS = 2_000;

type KeySet = ReturnType<typeof createRemoteJWKSet>;
const keySets = new Map<string, KeySet>();

/** `https://team.cloudflareaccess.com/` -> `https://team.cloudflareaccess.com` (Access's `iss`). */
function teamOrigin(domain: string): string {
  const trimmed = domain.trim().replace(/\/+$/, '');
  return /^[a-z]+:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`;
}

function keySetOf(issuer: string): KeySet {
  let keySet = keySets.get(issuer);
  if (!keySet) {
    if (keySets.size >= 8) keySets.clear();
    keySet = createRemoteJWKSet(new URL(`${issuer}/cdn-cgi/access/certs`), {
      cacheMaxAge: KEY_SET_MAX_AGE_MS,
      cooldownDuration: KEY_SET_COOLDOWN_MS,
      timeoutDuration: 5_000,
    });
    keySets.set(issuer, keySet);
  }
  return keySet;
}

/** What a valid Access token says about its person. */
export interface AccessIdentity {
  email: string;
  name?: string | undefined;
  claims: JWTPayload;
}

/**
 * The person of a request's Access assertion: null when Access is not configured or the request
 * has no assertion; `'invalid'` when it has one that does not verify (forged, expired, another
 * application's, a service token without an email).
 */
export async function verifyAccessAssertion(request: Request, env: Env): Promise<AccessIdentity | null | 'invalid'> {
  const domain = env.ACCESS_TEAM_DOMAIN?.trim();
  const audience = env.ACCESS_AUD?.trim();
  if (!domain || !audience) return null;
  const assertion = request.headers.get(ACCESS_HEADER)?.trim();
  if (!assertion) return null;
  if (assertion.length > MAX_ASSERTION_LENGTH) return 'invalid';
  const issuer = teamOrigin(domain);
  try {
    const { payload } = await jwtVerify(assertion, keySetOf(issuer), {
      issuer,
      audience,
      algorithms: ['RS256'],
      clockTolerance: ACCESS_CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ['exp'],
    });
    const email = typeof payload.email === 'string' ? payload.email : '';
    if (email === '') return 'invalid';
    const name = typeof payload.name === 'string' ? payload.name : undefined;
    return { email, name, claims: payload };
  } catch (error) {
    // The reason only: never the token.
    const reason = error instanceof errors.JOSEError ? error.code : 'unreadable';
    log.warn('Cloudflare Access assertion refused', { reason });
    return 'invalid';
  }
}
