/**
 * Counts evaluations that read the clock or a random number. An answer computed without
 * either is a pure function of (flag data, context) and may be reused for the same context
 * (frontend-api/answer-cache.ts); a caller compares the count before and after evaluating.
 */
let impureReads = 0;

export function noteImpureRead(): void {
  impureReads++;
}

export function impureReadCount(): number {
  return impureReads;
}
