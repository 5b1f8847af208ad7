/**
 * Coherence of what an isolate keeps for the SDK APIs: the environment snapshots, the
 * frontend answer cache and the poll memo. The rule, in one place:
 *
 *   A kept answer is served again only while
 *   1. the data revision it was made at is still the latest this isolate knows, and that was
 *      read from D1 less than SDK_REVISION_CHECK_MS ago (the revision tick);
 *   2. no write has finished in this isolate since that read, and the request names no D1
 *      bookmark (read-your-writes: noteLocalWrite, demandRevisionCheck);
 *   3. the isolate still trusts the caller's key record (auth/token-records `trustedUntil`,
 *      at most 10 s after it was read);
 *   4. no credential has been forgotten in this isolate since the answer was kept
 *      (revocation: `credentialGeneration`).
 *
 * Everything that keeps or serves such an answer asks here, and nothing here imports a module:
 * the entry and the modules depend on this file, never the other way.
 */
import type { Env } from '../env';

/** How often the data revision is read from D1 per isolate, unless SDK_REVISION_CHECK_MS says otherwise. */
const DEFAULT_REVISION_CHECK_MS = 1000;

let localWrites = 0;
let knownRevision = -1;
let revisionCheckedAt = 0;
/** `localWrites` when the revision was last read. */
let writesAtCheck = 0;
let forgottenCredentials = 0;

/** A write finished in this isolate (committed or failed: re-reading is harmless). */
export function noteLocalWrite(): void {
  localWrites++;
}

/**
 * A request sent a D1 bookmark: the state it names may hold writes of other isolates that the
 * revision this isolate knows does not, so the revision is read again (through that request's
 * session) instead of waiting for the tick.
 */
export function demandRevisionCheck(): void {
  localWrites++;
}

/** How many writes this isolate has finished; a change since the last revision check means "check again". */
export function localWriteCount(): number {
  return localWrites;
}

export function revisionCheckInterval(env: Env): number {
  const configured = Number(env.SDK_REVISION_CHECK_MS);
  return env.SDK_REVISION_CHECK_MS !== undefined && Number.isFinite(configured) && configured >= 0 ? configured : DEFAULT_REVISION_CHECK_MS;
}

/** The revision this isolate may answer at without reading D1, or -1 when it must read (rules 1 and 2). */
export function revisionIfFresh(env: Env, now: number): number {
  if (knownRevision < 0 || localWrites !== writesAtCheck || now - revisionCheckedAt >= revisionCheckInterval(env)) return -1;
  return knownRevision;
}

/**
 * Records a revision read from D1 at `now`. `writesBefore` is `localWriteCount()` when the read
 * began: a read that began before a local write finished does not count as a check, since it
 * may predate that write. Answers the latest revision known (a lagging replica never moves it back).
 */
export function recordRevisionRead(revision: number, now: number, writesBefore: number): number {
  knownRevision = Math.max(knownRevision, revision);
  if (localWrites === writesBefore) {
    revisionCheckedAt = now;
    writesAtCheck = writesBefore;
  }
  return knownRevision;
}

/** A snapshot read at `revision` is served: the isolate knows the data is at least that new. */
export function noteRevisionSeen(revision: number): void {
  knownRevision = Math.max(knownRevision, revision);
}

/** Test hook: forget the revision known, so the next SDK request reads it again. */
export function forgetRevision(): void {
  knownRevision = -1;
  revisionCheckedAt = 0;
}

/** This isolate forgot a credential (revocation, expiry change): answers kept on its trust end (rule 4). */
export function noteCredentialForgotten(): void {
  forgottenCredentials++;
}

/** Changes whenever this isolate forgets a credential. */
export function credentialGeneration(): number {
  return forgottenCredentials;
}
