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

/** What a listing may show of a secret: its scope, environment and first 6 hex characters. */
export function secretPrefix(secret: string): string {
  const dot = secret.lastIndexOf('.');
  return dot >= 0 ? secret.slice(0, dot + 7) : secret.slice(0, 6);
}
