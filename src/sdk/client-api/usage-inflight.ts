/**
 * The metrics messages this isolate has queued and not yet seen counted (or dead-lettered).
 * In production a post and its flush usually run in different isolates, so this says little
 * there; where one isolate does both (the Worker tests, `wrangler dev`), it tells a test that
 * every post it made has reached D1 (test/support/metrics.ts).
 */
const inFlight = new Set<string>();

export function queuedUsage(ids: readonly string[]): void {
  for (const id of ids) inFlight.add(id);
}

export function settledUsage(ids: readonly string[]): void {
  for (const id of ids) inFlight.delete(id);
}

export function usageInFlight(): number {
  return inFlight.size;
}
