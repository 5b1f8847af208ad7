/**
 * SHA-256 of an API key, remembered per isolate by the raw key: an SDK sends the same key on
 * every poll, and hashing it was a measurable share of a 304. Only the hash is remembered;
 * the record is still looked up by hash on every request (token-records.ts), so revocation
 * and expiry work exactly as before. Entries live as long as the isolate's record cache
 * trusts a record, so a raw key stays in memory no longer than its record does.
 */
import { BoundedMap } from '../lib/bounded-map';
import { sha256Hex } from '../lib/encoding';
import { ISOLATE_CACHE_TTL_MS } from './token-records';

const hashes = new BoundedMap<string, { hash: string; until: number }>({ entries: 10_000 });

export async function hashOfKey(key: string): Promise<string> {
  const now = Date.now();
  const known = hashes.get(key);
  if (known !== undefined && known.until > now) return known.hash;
  const hash = await sha256Hex(key);
  hashes.set(key, { hash, until: now + ISOLATE_CACHE_TTL_MS });
  return hash;
}

/** The remembered hash of a key, without hashing: undefined when the isolate has none. */
export function rememberedHashOfKey(key: string): string | undefined {
  const known = hashes.get(key);
  return known !== undefined && known.until > Date.now() ? known.hash : undefined;
}
