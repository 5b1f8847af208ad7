/**
 * A Map with bounds, for the per-isolate caches (an isolate has 128 MB): the one place that
 * evicts the oldest entry.
 *
 * Bounds: `entries`, how many entries it holds (or the sum of `measure.entries` over them),
 * and optionally `weight`, the sum of `measure.weight` over them (bytes, characters). Both
 * are read at every `set`, so an owner may change them later (tests shrink some).
 *
 * Order: insertion order (FIFO), not LRU. `get` and `has` never reorder; `set` of a key that is
 * present moves it to the newest place, so the oldest entry is the one least recently
 * written; `replace` changes a present entry without moving it. `set` drops the oldest
 * entries until the new one fits, then inserts it, even one heavier than the whole bound (it
 * then holds that one alone): a cache that refuses large entries checks before calling `set`.
 *
 * Nothing is allocated per call beyond what Map itself does: measures are given once.
 */
export interface Measure<K, V> {
  /** How many entries one counts for (default 1). */
  entries?: (key: K, value: V) => number;
  /** What one weighs against `bounds.weight` (default 0). */
  weight?: (key: K, value: V) => number;
}

export interface Bounds {
  readonly entries: number;
  readonly weight?: number;
}

export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();
  private entriesHeld = 0;
  private weightHeld = 0;

  constructor(
    private readonly bounds: Bounds,
    private readonly measure: Measure<K, V> = {},
  ) {}

  /** How many keys it holds. */
  get size(): number {
    return this.map.size;
  }

  /** The sum of `measure.entries` (the key count when there is none). */
  get entries(): number {
    return this.entriesHeld;
  }

  /** The sum of `measure.weight`. */
  get weight(): number {
    return this.weightHeld;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  /** Inserts as the newest entry, first dropping the oldest ones until it fits. */
  set(key: K, value: V): void {
    this.delete(key);
    const entries = this.measure.entries?.(key, value) ?? 1;
    const weight = this.measure.weight?.(key, value) ?? 0;
    const maxEntries = this.bounds.entries;
    const maxWeight = this.bounds.weight ?? Infinity;
    while (this.map.size > 0 && (this.entriesHeld + entries > maxEntries || this.weightHeld + weight > maxWeight)) {
      this.delete(this.map.keys().next().value!);
    }
    this.map.set(key, value);
    this.entriesHeld += entries;
    this.weightHeld += weight;
  }

  /** Changes the value of a present key where it stands (no reordering, no eviction); false when absent. */
  replace(key: K, value: V): boolean {
    if (!this.map.has(key)) return false;
    this.forget(key, this.map.get(key) as V);
    this.map.set(key, value);
    this.entriesHeld += this.measure.entries?.(key, value) ?? 1;
    this.weightHeld += this.measure.weight?.(key, value) ?? 0;
    return true;
  }

  delete(key: K): boolean {
    if (!this.map.has(key)) return false;
    this.forget(key, this.map.get(key) as V);
    this.map.delete(key);
    return true;
  }

  clear(): void {
    this.map.clear();
    this.entriesHeld = 0;
    this.weightHeld = 0;
  }

  private forget(key: K, value: V): void {
    this.entriesHeld -= this.measure.entries?.(key, value) ?? 1;
    this.weightHeld -= this.measure.weight?.(key, value) ?? 0;
  }
}
