/**
 * A request signed in by Cloudflare Access -> the person's principal. The verified email names
 * the person (provisioned on first sign-in, see service.ts); which user an email is stays known
 * in the isolate for a minute, so a signed-in request costs one signature check and no D1 query.
 */
import type { Env } from '../../env';
import { getDb } from '../../db/client';
import { authenticationRequired } from '../../http/errors';
import { BoundedMap } from '../../lib/bounded-map';
import type { UserPrincipal } from '../../auth/principal';
import { userPrincipalFor } from '../../auth/user-principal';
import { verifyAccessAssertion, type AccessIdentity } from './access';
import { recordLogin, requestAddress, type LoginAttempt } from '../login-history/service';
import { claimValues, groupPath, provisionUser, refusedAnswer, signInSettings, SignInRefused } from './service';

const EMAIL_TTL_MS = 60_000;
const knownEmails = new BoundedMap<string, { userId: number; until: number }>({ entries: 5_000 });

/**
 * The user id of a verified Access identity. Each Access sign-in (its token's `sub` and `iat`)
 * goes in the login history once, recorded at the first request that resolves it here.
 */
async function userIdFor(env: Env, identity: AccessIdentity, ip: string | null): Promise<number> {
  const key = identity.email.trim().toLowerCase();
  const known = knownEmails.get(key);
  if (known && known.until > Date.now()) return known.userId;
  const db = getDb(env);
  const { oidc } = await signInSettings(db);
  const attempt: LoginAttempt = {
    username: key,
    authType: 'cloudflare-access',
    ip,
    once: `access:${identity.claims.sub ?? key}:${identity.claims.iat ?? identity.claims.exp ?? ''}`,
  };
  try {
    const userId = await provisionUser(db, { email: key, name: identity.name, groups: claimValues(identity.claims, groupPath(oidc)) });
    knownEmails.set(key, { userId, until: Date.now() + EMAIL_TTL_MS });
    await recordLogin(db, attempt);
    return userId;
  } catch (error) {
    if (error instanceof SignInRefused) {
      await recordLogin(db, { ...attempt, failureReason: `Sign-in refused: ${error.message}` });
      throw refusedAnswer(error);
    }
    throw error;
  }
}

/**
 * The person of the request's `Cf-Access-Jwt-Assertion`; null when Access is not configured or
 * the request carries no assertion. 401 for an assertion that does not verify, 403 for a
 * verified person who may not sign in here.
 */
export async function accessPrincipal(request: Request, env: Env): Promise<UserPrincipal | null> {
  const identity = await verifyAccessAssertion(request, env);
  if (identity === null) return null;
  if (identity === 'invalid') throw authenticationRequired(true);
  const expiresAt = new Date((identity.claims.exp ?? 0) * 1000).toISOString();
  const credential = { hash: '', id: `access:${identity.claims.sub ?? identity.email}`, expiresAt };
  for (let attempt = 0; attempt < 2; attempt++) {
    const userId = await userIdFor(env, identity, requestAddress(request));
    const principal = await userPrincipalFor(env, { ...credential, userId }, 'access');
    if (principal) return principal;
    // The user was deleted since: resolve the email again (which may create them anew).
    knownEmails.delete(identity.email.trim().toLowerCase());
  }
  throw authenticationRequired(true);
}
