/**
 * Hashes the tests compute for themselves, to check what the Worker stores (kept apart from
 * src/lib/encoding.ts on purpose: a test should not check the Worker's hashing with itself).
 */

/** Lower-case hex SHA-256 of the UTF-8 bytes of `text`. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Unleash's generated avatar URL for a seed, hashed as given. */
export async function gravatar(seed: string): Promise<string> {
  return `https://gravatar.com/avatar/${await sha256Hex(seed)}?s=42&d=retro&r=g`;
}
