/**
 * Single sign-on in Worker tests: test key pairs, tokens signed with them, and the identity
 * provider's documents (Access's key set, an OpenID provider's discovery, keys and token answer)
 * served by the local receiver (test/support/receiver.ts) at made-up `.test` hosts.
 */
import { env } from 'cloudflare:workers';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload, type JWK, type CryptoKey } from 'jose';

export interface TestKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

let keyCount = 0;

export async function testKey(alg = 'RS256'): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `test-key-${++keyCount}-${crypto.randomUUID().slice(0, 8)}`;
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** Answers `<host><path>` with this JSON from now on (for any method). */
export async function serveJson(at: string, body: unknown, status = 200): Promise<void> {
  const response = await env.RECEIVER.fetch('http://receiver/serve', { method: 'POST', body: JSON.stringify({ at, status, body }) });
  if (response.status !== 204) throw new Error(`serve failed: ${response.status}`);
}

export async function serveKeys(at: string, keys: readonly TestKey[]): Promise<void> {
  await serveJson(at, { keys: keys.map((key) => key.jwk) });
}

/** A JWT signed with `key` (its kid in the header); `exp` one hour ahead and `iat` now unless given. */
export async function signToken(key: TestKey, claims: JWTPayload, header: { kid?: string; alg?: string } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iat: now, exp: now + 3600, ...claims })
    .setProtectedHeader({ alg: header.alg ?? (key.jwk.alg as string), kid: header.kid ?? key.kid, typ: 'JWT' })
    .sign(key.privateKey);
}

/** The same token with its payload changed but its signature kept (a forgery). */
export function tamper(token: string, change: (payload: Record<string, unknown>) => void): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const decoded = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
  change(decoded);
  const encoded = btoa(JSON.stringify(decoded)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  return `${header}.${encoded}.${signature}`;
}

/** A unique made-up team domain served by the receiver. */
export function teamDomain(): { domain: string; certs: string } {
  const host = `team-${crypto.randomUUID().slice(0, 8)}.access.test`;
  return { domain: `https://${host}`, certs: `${host}/cdn-cgi/access/certs` };
}
