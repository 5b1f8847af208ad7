/**
 * MurmurHash3, x86 32-bit variant, as Unleash's Node SDK (murmurhash3js) computes it: each
 * UTF-16 code unit contributes its low byte. That is what Unleash's own frontend API and the
 * client-specification's expected values use, so rollouts agree with them bucket for bucket
 * (for non-ASCII ids this differs from hashing UTF-8 bytes, as Yggdrasil does).
 */
const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function byteAt(key: string, index: number): number {
  return key.charCodeAt(index) & 0xff;
}

function scramble(k: number): number {
  let k1 = Math.imul(k, C1);
  k1 = (k1 << 15) | (k1 >>> 17);
  return Math.imul(k1, C2);
}

function murmur3(key: string, seed = 0): number {
  const tail = key.length & 3;
  const blockEnd = key.length - tail;
  let h1 = seed | 0;
  let i = 0;
  while (i < blockEnd) {
    const k1 = byteAt(key, i) | (byteAt(key, i + 1) << 8) | (byteAt(key, i + 2) << 16) | (byteAt(key, i + 3) << 24);
    i += 4;
    h1 ^= scramble(k1);
    h1 = (h1 << 13) | (h1 >>> 19);
    h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0;
  }
  if (tail > 0) {
    let k1 = 0;
    if (tail === 3) k1 ^= byteAt(key, i + 2) << 16;
    if (tail >= 2) k1 ^= byteAt(key, i + 1) << 8;
    k1 ^= byteAt(key, i);
    h1 ^= scramble(k1);
  }
  h1 ^= key.length;
  h1 ^= h1 >>> 16;
  h1 = Math.imul(h1, 0x85ebca6b);
  h1 ^= h1 >>> 13;
  h1 = Math.imul(h1, 0xc2b2ae35);
  h1 ^= h1 >>> 16;
  return h1 >>> 0;
}

const STRATEGY_SEED = 0;
const VARIANT_SEED = 86028157;

/** 1..100: the bucket a (groupId, id) pair falls in for percentage rollouts. */
export function strategyBucket(id: string, groupId: string): number {
  return (murmur3(`${groupId}:${id}`, STRATEGY_SEED) % 100) + 1;
}

/** 1..totalWeight: the point a (groupId, id) pair lands on when picking a variant. */
export function variantBucket(id: string, groupId: string, totalWeight: number): number {
  return (murmur3(`${groupId}:${id}`, VARIANT_SEED) % totalWeight) + 1;
}
