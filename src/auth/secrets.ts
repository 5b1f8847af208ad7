/** API-key secrets: generation, formatting and hashing. Secrets are never stored in clear. */

const encoder = new TextEncoder();

function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

export function randomHex(byteCount: number): string {
  return toHex(crypto.getRandomValues(new Uint8Array(byteCount)));
}

/** hex SHA-256 of a secret: the key under which D1 and KV know a token. */
export async function sha256Hex(secret: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(secret))));
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
