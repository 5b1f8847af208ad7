/** API-key secrets: generation and formatting. Secrets are never stored in clear, only their SHA-256 (lib/encoding.ts `sha256Hex`). */

import { toHex } from '../lib/encoding';

export function randomHex(byteCount: number): string {
  return toHex(crypto.getRandomValues(new Uint8Array(byteCount)));
}

/** Constant-time equality of two hex digests of the same algorithm. */
export function digestsEqual(a: string, b: string): boolean {
  // Every character is compared whatever the first difference: no early exit to time. In
  // JS rather than timingSafeEqual, which needs both encoded first: this runs per request.
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/**
 * Unleash's secret format `<scope>:<environment>.<56 hex>` (28 random bytes), where scope is
 * `*` for all projects, the project id for one, and `[]` for several.
 */
export function formatApiTokenSecret(projects: readonly string[], environment: string): string {
  const scope = projects.length === 1 ? projects[0]! : '[]';
  return `${scope}:${environment}.${randomHex(28)}`;
}

/**
 * Unleash 8.1+'s v2 token, `<scope>:<environment>.v2_<selector>_<secret>`: a 16-byte selector
 * and a 32-byte secret, both base64url. Unleash keeps only a verifier of the whole secret and
 * names the token by its selector in listings and admin URLs, so the selector is public.
 */
const V2_TOKEN = /\.v2_([A-Za-z0-9_-]{22})_[A-Za-z0-9_-]{43}$/;
/** A v2 token's selector on its own, as an admin URL may name the token. */
export const V2_SELECTOR = /^[A-Za-z0-9_-]{22}$/;

/** The selector of a v2-form secret, or null for any other secret. */
export function v2Selector(secret: string): string | null {
  return V2_TOKEN.exec(secret)?.[1] ?? null;
}

/**
 * What a listing may show of a secret: its scope, environment and first 6 characters; for a
 * v2 token, `<scope>:<environment>.v2_<selector>` (its public part, as 8.x shows it), so the
 * token can be found by its selector (findTokenBySelector).
 */
export function secretPrefix(secret: string): string {
  const dot = secret.lastIndexOf('.');
  const selector = v2Selector(secret);
  if (selector !== null) return `${secret.slice(0, dot + 1)}v2_${selector}`;
  return dot >= 0 ? secret.slice(0, dot + 7) : secret.slice(0, 6);
}
