/**
 * The frontend API's answer for a context, made cheap for a context never seen before (a
 * busy site's browsers each bring their own userId and sessionId).
 *
 * Once per (data revision, token scope) a FrontendPlan lists the flags that can be on (not
 * those disabled in the environment) as compiled flags (evaluation/engine.ts), and each answer
 * a flag can give becomes its piece of the body,
 * `{"name":…,"enabled":true,"variant":{…},"impressionData":…}`, as UTF-8 bytes, made the
 * first time it is needed. A request then evaluates each flag to the index of its answer,
 * writes those indices into one scratch array reused by every request (which also gives the
 * body's exact length) and copies the chosen pieces' bytes into a buffer of that length. The
 * body is hashed once, as bytes, for the ETag, and handed to the Response as is (no string
 * for the runtime to encode).
 *
 * The body is a function of the indices alone, so bodies are also kept by their index vector
 * (once a vector has come twice): with few flags (or few answers) most contexts land on a
 * vector already seen and skip the copy and the hash. This holds for impure evaluations too
 * (a random rollout picks an index like any other), unlike the answer cache keyed by context.
 */
import { toBase64 } from '../../lib/encoding';
import type { CompiledFlag, Evaluator } from '../evaluation/engine';
import type { Context, VariantResult } from '../evaluation/types';

export interface FrontendBody {
  body: Uint8Array;
  etag: string;
  /** A body the plan keeps for its answer vector, so served again: worth its own response headers (routes.ts). */
  kept?: true;
}

/** One toggle of the answer: a flag that is on, with its variant (shared: do not change it). */
export interface FrontendToggle {
  name: string;
  enabled: true;
  variant: VariantResult;
  impressionData: boolean;
}

interface VectorEntry extends FrontendBody {
  codes: Int32Array;
}

const encoder = new TextEncoder();
const HEAD = '{"toggles":[';
const TAIL = ']}';
const HEAD_BYTES = encoder.encode(HEAD);
const TAIL_BYTES = encoder.encode(TAIL);
const COMMA = 0x2c;
/** Bodies kept per plan by index vector, and vectors remembered as seen once. */
const MAX_VECTORS = 64;
const MAX_VECTOR_BYTES = 2_000_000;
const MAX_SEEN = 4096;

/** Indices of the current request; shared, since evaluation never awaits. */
let scratch = new Int32Array(1024);

export class FrontendPlan {
  private readonly flags: CompiledFlag[] = [];
  private readonly impressionData: boolean[] = [];
  /** Per flag and answer: its toggle's JSON as UTF-8, and that length. */
  private readonly pieces: (Uint8Array | undefined)[][] = [];
  private readonly pieceBytes: number[][] = [];
  private readonly vectors = new Map<number, VectorEntry>();
  private vectorBytes = 0;
  private readonly seen = new Set<number>();

  /** `features`: those the scope may see, in answer order, each known to `evaluator`. */
  constructor(evaluator: Evaluator, features: Iterable<{ name: string; impressionData: boolean; definition: { enabled: boolean } }>) {
    for (const feature of features) {
      const flag = evaluator.flag(feature.name);
      // A flag disabled here is never on; its definition still serves as a dependency's parent.
      if (!flag || !feature.definition.enabled) continue;
      this.flags.push(flag);
      this.impressionData.push(feature.impressionData);
      this.pieces.push([]);
      this.pieceBytes.push([]);
    }
    if (scratch.length < this.flags.length) scratch = new Int32Array(this.flags.length * 2);
  }

  /** The UTF-8 length of a flag's piece for an answer, the piece made on first use. */
  private pieceLength(index: number, outcome: number): number {
    const lengths = this.pieceBytes[index]!;
    const length = lengths[outcome];
    if (length !== undefined) return length;
    const flag = this.flags[index]!;
    // The key order of Unleash's toggles; the variant keeps the order the engine gave it.
    const piece = JSON.stringify({
      name: flag.name,
      enabled: true,
      variant: flag.results[outcome],
      impressionData: this.impressionData[index],
    });
    const bytes = encoder.encode(piece);
    this.pieces[index]![outcome] = bytes;
    return (lengths[outcome] = bytes.byteLength);
  }

  /**
   * Evaluates every flag into the scratch indices; returns the body's length and a hash of
   * the vector. The pieces it needs are made here.
   */
  private evaluate(context: Context): { length: number; hash: number } {
    const flags = this.flags;
    let length = HEAD.length + TAIL.length;
    let on = 0;
    let hash = 0x811c9dc5;
    for (let i = 0; i < flags.length; i++) {
      const outcome = flags[i]!.outcome(context);
      scratch[i] = outcome;
      hash = Math.imul(hash ^ (outcome + 2), 0x01000193);
      if (outcome >= 0) {
        length += this.pieceLength(i, outcome);
        on++;
      }
    }
    if (on > 1) length += on - 1;
    return { length, hash: hash >>> 0 };
  }

  private sameVector(codes: Int32Array): boolean {
    const n = this.flags.length;
    for (let i = 0; i < n; i++) if (codes[i] !== scratch[i]) return false;
    return true;
  }

  /**
   * The body of the scratch indices: the pieces' UTF-8 bytes copied once into a buffer of the
   * exact length (no string to join, flatten and encode).
   */
  private assemble(length: number): Uint8Array {
    const body = new Uint8Array(length);
    body.set(HEAD_BYTES);
    let offset = HEAD_BYTES.byteLength;
    let first = true;
    const n = this.flags.length;
    for (let i = 0; i < n; i++) {
      const outcome = scratch[i]!;
      if (outcome < 0) continue;
      if (first) first = false;
      else body[offset++] = COMMA;
      const piece = this.pieces[i]![outcome]!;
      body.set(piece, offset);
      offset += piece.byteLength;
    }
    body.set(TAIL_BYTES, offset);
    return body;
  }

  /**
   * The body's toggles as objects, for callers that do not send JSON (the binding,
   * src/binding/): the same flags, order and variant objects the body is made of.
   */
  toggles(context: Context): FrontendToggle[] {
    const toggles: FrontendToggle[] = [];
    const flags = this.flags;
    for (let i = 0; i < flags.length; i++) {
      const flag = flags[i]!;
      const outcome = flag.outcome(context);
      if (outcome >= 0)
        toggles.push({ name: flag.name, enabled: true, variant: flag.results[outcome]!, impressionData: this.impressionData[i]! });
    }
    return toggles;
  }

  /** The body alone (no ETag): what `answer` sends for this context. */
  body(context: Context): Uint8Array {
    return this.assemble(this.evaluate(context).length);
  }

  /** The body and its ETag for a context. */
  async answer(context: Context): Promise<FrontendBody> {
    const { length, hash } = this.evaluate(context);
    const known = this.vectors.get(hash);
    if (known !== undefined && known.body.byteLength === length && this.sameVector(known.codes)) return known;
    const body = this.assemble(length);
    // Taken before the await: the scratch indices belong to the next request after it.
    const keep = this.seen.has(hash) && length <= MAX_VECTOR_BYTES / 8;
    const codes = keep ? scratch.slice(0, this.flags.length) : undefined;
    if (!keep) {
      if (this.seen.size >= MAX_SEEN) this.seen.clear();
      this.seen.add(hash);
    }
    const etag = await weakEtag(body);
    if (codes !== undefined) this.remember(hash, { body, etag, codes, kept: true });
    return { body, etag };
  }

  private remember(hash: number, entry: VectorEntry): void {
    const old = this.vectors.get(hash);
    if (old !== undefined) {
      this.vectors.delete(hash);
      this.vectorBytes -= old.body.byteLength;
    }
    for (const [key, oldest] of this.vectors) {
      if (this.vectors.size < MAX_VECTORS && this.vectorBytes + entry.body.byteLength <= MAX_VECTOR_BYTES) break;
      this.vectors.delete(key);
      this.vectorBytes -= oldest.body.byteLength;
    }
    this.vectors.set(hash, entry);
    this.vectorBytes += entry.body.byteLength;
  }
}

/**
 * Express's weak ETag, which Unleash's frontend API sends: `W/"<byte length, hex>-<first 27
 * characters of the base64 SHA-1>"`. The same body gets the same tag from Unleash and from
 * us, so an SDK moved over keeps its 304s.
 */
export async function weakEtag(body: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-1', body));
  return `W/"${body.byteLength.toString(16)}-${toBase64(digest).slice(0, 27)}"`;
}

// Plans per evaluator: an evaluator is made once per (snapshot, scope), so a plan lives as
// long as the data it was made from.
const plans = new WeakMap<Evaluator, FrontendPlan>();

export function planFor(
  evaluator: Evaluator,
  features: readonly { name: string; impressionData: boolean; definition: { enabled: boolean } }[],
): FrontendPlan {
  let plan = plans.get(evaluator);
  if (plan === undefined) {
    plan = new FrontendPlan(evaluator, features);
    plans.set(evaluator, plan);
  }
  return plan;
}
