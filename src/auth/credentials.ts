/**
 * Formats of the people-side credentials: personal access token secrets (Unleash's
 * `user:<56 hex>`) and sign-in session ids carried in the `unleash-session` cookie.
 */
import type { Env } from '../env';
import { randomHex } from './secrets';

export const PERSONAL_TOKEN_PREFIX = 'user:';
const SESSION_COOKIE = 'unleash-session';
/** Unleash's default session length (48 h); SESSION_TTL_HOURS changes it. */
const DEFAULT_SESSION_TTL_HOURS = 48;
const SESSION_ID = /^[0-9a-f]{64}$/;

/** `user:` + 28 random bytes in hex, as Unleash 6 issues them. */
export function formatPersonalTokenSecret(): string {
  return `${PERSONAL_TOKEN_PREFIX}${randomHex(28)}`;
}

/** 32 random bytes in hex: the session id the browser holds; D1 and KV hold its SHA-256. */
export function newSessionId(): string {
  return randomHex(32);
}

export function sessionTtlMs(env: Pick<Env, 'SESSION_TTL_HOURS'>): number {
  const hours = Number(env.SESSION_TTL_HOURS);
  return (Number.isFinite(hours) && hours > 0 ? hours : DEFAULT_SESSION_TTL_HOURS) * 3_600_000;
}

/** The session id of the `unleash-session` cookie, or null when there is none of our shape. */
export function sessionIdFromRequest(request: Request): string | null {
  const header = request.headers.get('cookie');
  if (header === null || header.length > 16_384) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (SESSION_ID.test(value)) return value;
  }
  return null;
}

/** `Secure` everywhere but plain-HTTP local development, where browsers would drop the cookie. */
export function secureAttribute(request: Request): string {
  const host = new URL(request.url).hostname;
  return host === 'localhost' || host === '127.0.0.1' || host === '[::1]' ? '' : '; Secure';
}

export function sessionCookie(request: Request, sessionId: string, expiresAt: Date): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return `${SESSION_COOKIE}=${sessionId}; Path=/; Expires=${expiresAt.toUTCString()}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secureAttribute(request)}`;
}

export function clearedSessionCookie(request: Request): string {
  return `${SESSION_COOKIE}=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; SameSite=Lax${secureAttribute(request)}`;
}
