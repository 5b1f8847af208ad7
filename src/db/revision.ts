/**
 * Read-your-writes for the SDK APIs within one isolate. Every admin write moves the data
 * revision (it records an audit event); the SDK side reads that revision from D1 at most once
 * per SDK_REVISION_CHECK_MS. An isolate that has just written counts the write here, and the
 * SDK side then reads the revision again on its next request instead of waiting for the tick.
 * A request carrying a D1 bookmark counts here too (demandRevisionCheck).
 */
let localWrites = 0;

/** Called once a write has finished in this isolate (committed or failed: re-reading is harmless). */
export function noteLocalWrite(): void {
  localWrites++;
}

/**
 * A request sent a D1 bookmark: the state it names may hold writes of other isolates that the
 * revision this isolate knows does not, so the SDK side reads the revision again (through
 * that request's session) instead of waiting for its tick.
 */
export function demandRevisionCheck(): void {
  localWrites++;
}

/** How many writes this isolate has finished; a change since the last revision check means "check again". */
export function localWriteCount(): number {
  return localWrites;
}
