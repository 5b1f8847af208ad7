/**
 * The byte-level pieces of the streaming JSON splitter (json-stream.ts): the BOM it drops, the
 * buffer of a value that spans chunks, and the byte classes its scanner switches on.
 */
/**
 * Drops a leading UTF-8 BOM as `TextDecoder` (ignoreBOM: false) does in `readJsonBody`.
 * It may arrive split over several 1-byte chunks, so up to 3 head bytes are held back.
 */
export class BomStripper {
  private head: Uint8Array | null = new Uint8Array(0);
  private stripped = 0;

  /** The BOM's length the first time after it was dropped, so byte offsets in errors stay true. */
  strippedOnce(): number {
    const stripped = this.stripped;
    this.stripped = 0;
    return stripped;
  }

  push(chunk: Uint8Array): Uint8Array | null {
    if (!this.head) return chunk;
    const joined = concat(this.head, chunk);
    if (joined.length < 3 && isBomPrefix(joined)) {
      this.head = joined;
      return null;
    }
    this.head = null;
    if (!isBomPrefix(joined)) return joined;
    this.stripped = 3;
    return joined.subarray(3);
  }

  end(): Uint8Array | null {
    const head = this.head;
    this.head = null;
    return head && head.length > 0 ? head : null;
  }
}

function isBomPrefix(bytes: Uint8Array): boolean {
  const bom = [0xef, 0xbb, 0xbf];
  for (let i = 0; i < Math.min(bytes.length, 3); i++) if (bytes[i] !== bom[i]) return false;
  return true;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Bytes of a value that spans chunks; grows by doubling so long values stay linear. */
export class ByteBuffer {
  private data = new Uint8Array(0);
  length = 0;

  append(bytes: Uint8Array): void {
    const needed = this.length + bytes.length;
    if (needed > this.data.length) {
      const grown = new Uint8Array(Math.max(needed, this.data.length * 2, 1024));
      grown.set(this.data.subarray(0, this.length));
      this.data = grown;
    }
    this.data.set(bytes, this.length);
    this.length = needed;
  }

  view(): Uint8Array {
    return this.data.subarray(0, this.length);
  }

  clear(): void {
    this.length = 0;
    // One huge value should not pin its buffer for the rest of a 200 MB body.
    if (this.data.length > 1 << 20) this.data = new Uint8Array(0);
  }
}

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

/** Byte classes for the value scanner: everything else is 0 and skipped. */
export const C_QUOTE = 1;
export const C_OPEN = 2;
const C_CLOSE = 3;
export const CLASS = new Uint8Array(256);
CLASS[QUOTE] = C_QUOTE;
CLASS[OPEN_BRACE] = C_OPEN;
CLASS[OPEN_BRACKET] = C_OPEN;
CLASS[CLOSE_BRACE] = C_CLOSE;
CLASS[CLOSE_BRACKET] = C_CLOSE;

export const WHITESPACE = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) WHITESPACE[c] = 1;

/**
 * Bytes that may continue a number or literal. Anything else ends it; whether the captured
 * text really is a number or literal is left to JSON.parse.
 */
export const PRIMITIVE = new Uint8Array(256);
for (const c of '0123456789+-.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ') PRIMITIVE[c.charCodeAt(0)] = 1;
