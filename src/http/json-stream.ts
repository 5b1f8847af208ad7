/**
 * Streaming reader for large JSON bodies of the shape
 * `{ ...top, "<splitKey>": { "<k>": [ ...items ], ... }, ... }` (the import body).
 *
 * The body may be far larger than the Worker's memory, so it is never held whole: a byte
 * scanner finds where each value ends and only that value's bytes are decoded and handed to
 * native `JSON.parse`, which also does all validation inside the value. The scanner itself
 * checks everything between values (braces, commas, colons, keys, trailing bytes), so the
 * body as a whole is accepted exactly when `JSON.parse` would accept it.
 */
import { ApiError, validationError } from './errors';
import { tooLarge } from './body';
import {
  BomStripper,
  ByteBuffer,
  QUOTE,
  BACKSLASH,
  COMMA,
  COLON,
  OPEN_BRACE,
  CLOSE_BRACE,
  OPEN_BRACKET,
  CLOSE_BRACKET,
  C_QUOTE,
  C_OPEN,
  CLASS,
  WHITESPACE,
  PRIMITIVE,
} from './json-bytes';

export interface SplitJsonOptions {
  /** The top-level key whose object's array values are streamed item by item, e.g. 'data'. */
  splitKey: string;
  /** 413 when the body is larger (checked against content-length first, then while reading). */
  maxBytes: number;
  /** Largest single element or kept value, in bytes; larger -> 413 PayloadTooLargeError saying which path. */
  maxValueBytes: number;
  /**
   * Told the size of everything the reader keeps whole until the end (keys, top-level values,
   * values of splitKey that are not arrays, splitKey's value when it is not an object), so the
   * caller can count it against its memory budget and throw past it: each is under
   * maxValueBytes, but a body may have any number of them.
   */
  onKept?: (bytes: number) => void;
}

/** What a kept key or value costs besides its text: its Map/Set entry and the parsed value's header. */
const KEPT_OVERHEAD_BYTES = 32;

type SplitEntry = { streamed: true; count: number } | { streamed: false; value: unknown };

export interface SplitJsonResult {
  /** True when the body's top level is an object. If false, `value` is the whole parsed body. */
  isObject: boolean;
  value?: unknown;
  /** Top-level keys other than splitKey, in order of appearance, parsed. */
  top: Map<string, unknown>;
  /** undefined when splitKey is absent; 'other' (with `splitValue`) when it was not an object. */
  splitKind?: 'object' | 'other';
  splitValue?: unknown;
  /** For splitKey's object: each key in order -> streamed array count, or the parsed value. */
  split: Map<string, SplitEntry>;
  /** Bytes read. */
  bytes: number;
}

/** onItem is awaited before reading on (backpressure). index is 0-based within its array. */
export type OnItem = (key: string, index: number, value: unknown) => void | Promise<void>;

const NOT_JSON = 'The request body is not valid JSON';
const NOT_UTF8 = `${NOT_JSON}: it is not valid UTF-8 text.`;
const EMPTY = `${NOT_JSON}: it is empty.`;

export async function splitJsonBody(
  body: ReadableStream<Uint8Array> | null,
  contentLength: number | null,
  options: SplitJsonOptions,
  onItem: OnItem,
): Promise<SplitJsonResult> {
  if (contentLength !== null && contentLength > options.maxBytes) throw tooLarge(options.maxBytes);
  const scanner = new SplitScanner(options);
  const bom = new BomStripper();
  let bytes = 0;
  if (body) {
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.byteLength;
        if (bytes > options.maxBytes) throw tooLarge(options.maxBytes);
        const chunk = bom.push(value);
        if (chunk) await feed(scanner, chunk, bom.strippedOnce(), onItem);
      }
    } catch (error) {
      // Stop the client's upload instead of draining a body that is already refused.
      reader.cancel(error).catch(() => undefined);
      throw error;
    } finally {
      reader.releaseLock();
    }
  }
  const rest = bom.end();
  if (rest) await feed(scanner, rest, 0, onItem);
  return scanner.finish(bytes);
}

async function feed(scanner: SplitScanner, chunk: Uint8Array, skipped: number, onItem: OnItem): Promise<void> {
  scanner.push(chunk, skipped);
  while (scanner.next()) {
    const pending = onItem(scanner.itemKey, scanner.itemIndex, scanner.itemValue);
    // A microtask per item adds up over a million items; only wait when there is something to wait for.
    if (pending) await pending;
  }
}

/** Where the scanner is between values. Numbers, not an enum, so the hot switch stays cheap. */
const S_START = 0;
const S_WHOLE = 1; // the body is not an object: collected whole
const S_TOP_KEY_OR_CLOSE = 2;
const S_TOP_KEY = 3;
const S_TOP_COLON = 4;
const S_TOP_VALUE = 5;
const S_TOP_AFTER = 6;
const S_SPLIT_KEY_OR_CLOSE = 7;
const S_SPLIT_KEY = 8;
const S_SPLIT_COLON = 9;
const S_SPLIT_VALUE = 10;
const S_SPLIT_AFTER = 11;
const S_ITEM_OR_CLOSE = 12;
const S_ITEM = 13;
const S_ITEM_AFTER = 14;
const S_DONE = 15;

/** What a captured value is, i.e. what to do with it once complete. */
const V_NONE = 0;
const V_TOP_KEY = 1;
const V_TOP_VALUE = 2;
const V_SPLIT_OTHER = 3; // splitKey's value when it is not an object
const V_SPLIT_KEY = 4;
const V_SPLIT_VALUE = 5;
const V_ITEM = 6; // an element of an array under splitKey; the only kind handed out

class SplitScanner {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  private readonly carry = new ByteBuffer();
  private chunk: Uint8Array = new Uint8Array(0);
  private pos = 0;
  /** Body offset of `chunk[0]` (a stripped BOM included), for error messages. */
  private chunkOffset = 0;
  private state = S_START;

  // The value being captured, kept across chunks so nothing is rescanned.
  private capture = V_NONE;
  private captureStart = 0;
  private primitive = false;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Size of the value parsed last. */
  private capturedBytes = 0;

  private topKey = '';
  private splitKey = '';
  private itemCount = 0;
  private readonly topSeen = new Set<string>();
  private readonly splitSeen = new Set<string>();
  private readonly result: SplitJsonResult = { isObject: true, top: new Map(), split: new Map(), bytes: 0 };

  itemKey = '';
  itemIndex = 0;
  itemValue: unknown = undefined;

  constructor(private readonly options: SplitJsonOptions) {}

  push(chunk: Uint8Array, skipped: number): void {
    this.chunkOffset += this.chunk.length + skipped;
    this.chunk = chunk;
    this.pos = 0;
    if (this.capture !== V_NONE) this.captureStart = 0;
  }

  /** Scans on; true when an item is ready in `itemKey`/`itemIndex`/`itemValue`, false when the chunk is used up. */
  next(): boolean {
    const chunk = this.chunk;
    const length = chunk.length;
    while (this.pos < length) {
      if (this.capture !== V_NONE) {
        if (!this.scanValue()) break;
        if (this.completeValue()) return true;
        continue;
      }
      if (this.state === S_WHOLE) {
        this.carry.append(chunk.subarray(this.pos));
        this.checkValueSize(this.carry.length);
        this.pos = length;
        return false;
      }
      let i = this.pos;
      while (i < length && WHITESPACE[chunk[i]!] === 1) i++;
      this.pos = i;
      if (i < length) this.structural(chunk[i]!);
    }
    if (this.capture !== V_NONE) {
      this.carry.append(chunk.subarray(this.captureStart));
      this.checkValueSize(this.carry.length);
    }
    return false;
  }

  finish(bytes: number): SplitJsonResult {
    if (this.state === S_START) throw validationError([{ message: EMPTY }]);
    if (this.state === S_WHOLE) {
      this.result.isObject = false;
      this.result.value = parseWhole(this.decode(this.carry.view()));
    } else if (this.state !== S_DONE || this.capture !== V_NONE) {
      this.unexpectedEnd();
    }
    this.result.bytes = bytes;
    return this.result;
  }

  /** One byte between values (never whitespace): moves the state machine or starts a value. */
  private structural(c: number): void {
    switch (this.state) {
      case S_START:
        if (c === OPEN_BRACE) return this.advance(S_TOP_KEY_OR_CLOSE);
        this.state = S_WHOLE;
        return;
      case S_TOP_KEY_OR_CLOSE:
        if (c === CLOSE_BRACE) return this.advance(S_DONE);
        return this.startKey(c, V_TOP_KEY);
      case S_TOP_KEY:
        return this.startKey(c, V_TOP_KEY);
      case S_TOP_COLON:
        return this.expect(c, COLON, S_TOP_VALUE);
      case S_TOP_VALUE:
        if (this.topKey !== this.options.splitKey) return this.startValue(c, V_TOP_VALUE);
        this.result.splitKind = c === OPEN_BRACE ? 'object' : 'other';
        if (c === OPEN_BRACE) return this.advance(S_SPLIT_KEY_OR_CLOSE);
        return this.startValue(c, V_SPLIT_OTHER);
      case S_TOP_AFTER:
        if (c === COMMA) return this.advance(S_TOP_KEY);
        return this.expect(c, CLOSE_BRACE, S_DONE);
      case S_SPLIT_KEY_OR_CLOSE:
        if (c === CLOSE_BRACE) return this.advance(S_TOP_AFTER);
        return this.startKey(c, V_SPLIT_KEY);
      case S_SPLIT_KEY:
        return this.startKey(c, V_SPLIT_KEY);
      case S_SPLIT_COLON:
        return this.expect(c, COLON, S_SPLIT_VALUE);
      case S_SPLIT_VALUE:
        if (c !== OPEN_BRACKET) return this.startValue(c, V_SPLIT_VALUE);
        this.itemCount = 0;
        return this.advance(S_ITEM_OR_CLOSE);
      case S_SPLIT_AFTER:
        if (c === COMMA) return this.advance(S_SPLIT_KEY);
        return this.expect(c, CLOSE_BRACE, S_TOP_AFTER);
      case S_ITEM_OR_CLOSE:
        if (c === CLOSE_BRACKET) return this.endArray();
        return this.startValue(c, V_ITEM);
      case S_ITEM:
        return this.startValue(c, V_ITEM);
      case S_ITEM_AFTER:
        if (c === COMMA) return this.advance(S_ITEM);
        if (c === CLOSE_BRACKET) return this.endArray();
        return this.unexpected(c);
      default:
        return this.unexpected(c);
    }
  }

  private advance(state: number): void {
    this.state = state;
    this.pos++;
  }

  private expect(c: number, wanted: number, state: number): void {
    if (c !== wanted) this.unexpected(c);
    this.advance(state);
  }

  private startKey(c: number, kind: number): void {
    if (c !== QUOTE) this.unexpected(c);
    this.startValue(c, kind);
  }

  private startValue(c: number, kind: number): void {
    // Commas, colons and closers cannot begin a value; everything else is JSON.parse's to judge.
    if (c === COMMA || c === COLON || c === CLOSE_BRACE || c === CLOSE_BRACKET) this.unexpected(c);
    this.capture = kind;
    this.captureStart = this.pos;
    this.primitive = CLASS[c] === 0;
    if (this.primitive && PRIMITIVE[c] === 0) this.unexpected(c);
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.carry.clear();
  }

  private endArray(): void {
    this.result.split.set(this.splitKey, { streamed: true, count: this.itemCount });
    this.advance(S_SPLIT_AFTER);
  }

  /**
   * The hot loop: advances `pos` through the captured value, tracking only strings, escapes
   * and bracket depth. True when the value ended (`pos` just past it), false at chunk end.
   */
  private scanValue(): boolean {
    const chunk = this.chunk;
    const length = chunk.length;
    let i = this.pos;
    if (this.primitive) {
      while (i < length && PRIMITIVE[chunk[i]!] === 1) i++;
      this.pos = i;
      return i < length;
    }
    let depth = this.depth;
    let inString = this.inString;
    if (this.escaped) {
      this.escaped = false;
      i++;
    }
    let done = false;
    scan: while (i < length) {
      if (inString) {
        while (i < length) {
          const c = chunk[i++]!;
          if (c === QUOTE) {
            inString = false;
            if (depth === 0) {
              done = true;
              break scan;
            }
            continue scan;
          }
          if (c === BACKSLASH) {
            if (i === length) {
              this.escaped = true;
              break scan;
            }
            i++;
          }
        }
      } else {
        while (i < length) {
          const kind = CLASS[chunk[i++]!]!;
          if (kind === 0) continue;
          if (kind === C_QUOTE) {
            inString = true;
            continue scan;
          }
          depth += kind === C_OPEN ? 1 : -1;
          if (depth <= 0) {
            done = true;
            break scan;
          }
        }
      }
    }
    this.pos = i;
    this.depth = depth;
    this.inString = inString;
    return done;
  }

  /** Parses the finished value and files it; true when it is an item for the caller. */
  private completeValue(): boolean {
    const kind = this.capture;
    const value = this.parseCaptured();
    this.capture = V_NONE;
    if (kind !== V_ITEM) this.options.onKept?.(this.capturedBytes + KEPT_OVERHEAD_BYTES);
    switch (kind) {
      case V_TOP_KEY:
        this.topKey = value as string;
        if (this.topSeen.has(this.topKey)) throw duplicateKey(`/body/${this.topKey}`);
        this.topSeen.add(this.topKey);
        this.state = S_TOP_COLON;
        return false;
      case V_TOP_VALUE:
        this.result.top.set(this.topKey, value);
        this.state = S_TOP_AFTER;
        return false;
      case V_SPLIT_OTHER:
        this.result.splitValue = value;
        this.state = S_TOP_AFTER;
        return false;
      case V_SPLIT_KEY:
        this.splitKey = value as string;
        if (this.splitSeen.has(this.splitKey)) throw duplicateKey(`/body/${this.options.splitKey}/${this.splitKey}`);
        this.splitSeen.add(this.splitKey);
        this.state = S_SPLIT_COLON;
        return false;
      case V_SPLIT_VALUE:
        this.result.split.set(this.splitKey, { streamed: false, value });
        this.state = S_SPLIT_AFTER;
        return false;
      default: // V_ITEM
        this.itemKey = this.splitKey;
        this.itemIndex = this.itemCount++;
        this.itemValue = value;
        this.state = S_ITEM_AFTER;
        return true;
    }
  }

  /** Paths are built only for errors: a string per item is measurable over a million items. */
  private parseCaptured(): unknown {
    let bytes: Uint8Array;
    if (this.carry.length === 0) {
      bytes = this.chunk.subarray(this.captureStart, this.pos);
    } else {
      this.carry.append(this.chunk.subarray(this.captureStart, this.pos));
      bytes = this.carry.view();
    }
    this.checkValueSize(bytes.length);
    this.capturedBytes = bytes.length;
    const text = this.decode(bytes);
    this.carry.clear();
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'parse error';
      const path = this.capturePath();
      throw validationError([
        { path, message: `${NOT_JSON}: ${reason} (in \`${path}\`, which starts at byte ${this.captureOffset(bytes.length)})` },
      ]);
    }
  }

  private decode(bytes: Uint8Array): string {
    try {
      return this.decoder.decode(bytes);
    } catch {
      throw validationError([{ message: NOT_UTF8 }]);
    }
  }

  private checkValueSize(size: number): void {
    if (size > this.options.maxValueBytes) {
      throw new ApiError(
        413,
        'PayloadTooLargeError',
        `The value at \`${this.capturePath()}\` in the request body is larger than the ${this.options.maxValueBytes} bytes this endpoint accepts for one value.`,
      );
    }
  }

  /** Offset of the just-completed value's first byte (it ends at `pos`). */
  private captureOffset(size: number): number {
    return this.chunkOffset + this.pos - size;
  }

  private capturePath(): string {
    if (this.state === S_WHOLE) return '/body';
    const split = `/body/${this.options.splitKey}`;
    switch (this.capture) {
      case V_TOP_KEY:
        return '/body';
      case V_TOP_VALUE:
        return `/body/${this.topKey}`;
      case V_SPLIT_OTHER:
      case V_SPLIT_KEY:
        return split;
      case V_SPLIT_VALUE:
        return `${split}/${this.splitKey}`;
      default: // V_ITEM
        return `${split}/${this.splitKey}/${this.itemCount}`;
    }
  }

  private unexpected(c: number): never {
    const shown = c >= 0x20 && c < 0x7f ? `token '${String.fromCharCode(c)}'` : `byte 0x${c.toString(16).padStart(2, '0').toUpperCase()}`;
    throw validationError([{ message: `${NOT_JSON}: Unexpected ${shown} at byte ${this.chunkOffset + this.pos}` }]);
  }

  private unexpectedEnd(): never {
    throw validationError([{ message: `${NOT_JSON}: Unexpected end of JSON input at byte ${this.chunkOffset + this.chunk.length}` }]);
  }
}

/** A body that is not an object, judged exactly as `readJsonBody` would. */
function parseWhole(text: string): unknown {
  if (text.trim() === '') throw validationError([{ message: EMPTY }]);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'parse error';
    throw validationError([{ message: `${NOT_JSON}: ${reason}` }]);
  }
}

function duplicateKey(path: string): ApiError {
  return validationError([{ path, message: `The request body has the key \`${path}\` more than once.` }]);
}
