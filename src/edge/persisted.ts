/**
 * The persisted side of Edge snapshots: the last good answer of each token scope, kept in KV
 * (EDGE_SNAPSHOTS) by the sync object, so a cold sync object, a cold isolate or an upstream
 * outage still answers with the last known flags.
 */
import { murmur3 } from '../sdk/evaluation/murmur';

export interface StoredSnapshot {
  /** The upstream ETag, or a hash of the text when it sent none: what isolates compare. */
  version: string;
  text: string;
  /** When the upstream last confirmed this text (a 200 or a 304), ms. */
  confirmedAt: number;
}

/** The KV key of a scope's snapshot; the upstream is part of it, so two upstreams never share one. */
export function kvKey(upstream: string, key: string): string {
  return `snapshot:${murmur3(upstream).toString(16)}:${key}`;
}
