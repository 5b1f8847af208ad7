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
/** Whether this isolate listens to the change feed now (src/sdk/push/listen.ts). */
let pushListening = false;
/** The newest revision a push announced; until one at least as new is read, the tick is not slowed. */
let expectedRevision = -1;
/** When that push arrived. */
let expectedSince = 0;

/**
 * After a push, how often the revision is read again while D1 answers an older one than pushed
 * (a lagging replica, or locally another process's database not showing the commit yet), and for
 * how long. Without this, that first read counted as the tick's check, and the change waited
 * out the whole tick (the ~1 s-late quarter in bench/propagation/RESULTS.md).
 */
const PUSH_CHASE_RETRY_MS = 20;
const PUSH_CHASE_FOR_MS = 3000;

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

/**
 * How often the revision is read while the change feed's pushes arrive, unless
 * SDK_PUSH_FALLBACK_MS says otherwise: an idle isolate with streams reads D1 6 times a minute
 * instead of 60. Only a lost push waits this long; the wake-ups that used to miss (a failed D1
 * read after the wake-up, a push D1 did not show yet) now read again at once
 * (bench/propagation/RESULTS.md, run 6: no change late in either process at 10 s).
 */
const DEFAULT_PUSH_FALLBACK_MS = 10_000;

function milliseconds(value: string | undefined, fallback: number): number {
  const configured = Number(value);
  return value !== undefined && Number.isFinite(configured) && configured >= 0 ? configured : fallback;
}

/**
 * The revision tick without the change feed (SDK_REVISION_CHECK_MS): for what isolates keep
 * that no push announces (the maintenance switch), which must not slow with the fallback.
 */
export function baseCheckInterval(env: Env): number {
  return milliseconds(env.SDK_REVISION_CHECK_MS, DEFAULT_REVISION_CHECK_MS);
}

/**
 * How long a revision read stays fresh (rule 1). While this isolate listens to the change feed
 * and has seen every revision pushed to it, a change elsewhere arrives as a push, and the tick
 * is only the fallback for a lost one: it slows to SDK_PUSH_FALLBACK_MS. Otherwise (not
 * listening, or a pushed revision not read back yet, e.g. from a lagging replica) it is
 * SDK_REVISION_CHECK_MS.
 */
export function revisionCheckInterval(env: Env, now = Date.now()): number {
  const base = baseCheckInterval(env);
  if (chasingPushedRevision(now)) return Math.min(base, PUSH_CHASE_RETRY_MS);
  if (!pushListening || knownRevision < expectedRevision) return base;
  return Math.max(base, milliseconds(env.SDK_PUSH_FALLBACK_MS, DEFAULT_PUSH_FALLBACK_MS));
}

/** The revision this isolate may answer at without reading D1, or -1 when it must read (rules 1 and 2). */
export function revisionIfFresh(env: Env, now: number): number {
  if (knownRevision < 0 || localWrites !== writesAtCheck || now - revisionCheckedAt >= revisionCheckInterval(env, now)) return -1;
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
  expectedRevision = -1;
  expectedSince = 0;
}

/** Whether a pushed revision has not been read from D1 yet, and was pushed recently enough to keep reading for it. */
export function chasingPushedRevision(now = Date.now()): boolean {
  return knownRevision < expectedRevision && now - expectedSince < PUSH_CHASE_FOR_MS;
}

/** This isolate forgot a credential (revocation, expiry change): answers kept on its trust end (rule 4). */
export function noteCredentialForgotten(): void {
  forgottenCredentials++;
}

/** Changes whenever this isolate forgets a credential. */
export function credentialGeneration(): number {
  return forgottenCredentials;
}

let failedReads = 0;

/**
 * A read of the SDK data from D1 failed, and what the isolate kept was served instead. Streams
 * woken to read a change look again soon (src/sdk/client-api/streaming.ts), not at the tick:
 * otherwise one failed read (a transient D1 error; locally, SQLITE_BUSY while another process
 * writes the shared file) left the change waiting the whole tick in the very isolate that made it.
 */
export function noteReadFailed(): void {
  failedReads++;
}

/** Changes whenever a read of the SDK data fails in this isolate. */
export function failedReadCount(): number {
  return failedReads;
}

let dataMoves = 0;

/**
 * A write finished here, or a push said one finished elsewhere: open streams look again now,
 * not at their tick. Nothing is read by this itself: the revision check it leads to is due
 * anyway (rule 2, or `notePushedRevision`) and is made once for the isolate.
 */
export function dataMayHaveMoved(): void {
  dataMoves++;
}

/** Changes whenever `dataMayHaveMoved` is called; streams compare it between looks. */
export function dataMoveCount(): number {
  return dataMoves;
}

/** The isolate started or stopped listening to the change feed. */
export function notePushListening(listening: boolean): void {
  pushListening = listening;
}

/**
 * A push says a change was committed at `revision` (0: at a revision the announcer does not
 * know). Nothing is trusted from it: unless this isolate already read that revision, the
 * revision is read from D1 again at once (as after a local write: a read that began before
 * does not count), streams look again, and the tick stays at SDK_REVISION_CHECK_MS until a
 * read shows that revision. Answers whether the push was news.
 */
export function notePushedRevision(revision: number): boolean {
  if (revision > 0 && revision <= knownRevision) return false;
  if (revision > expectedRevision) {
    expectedRevision = revision;
    expectedSince = Date.now();
  }
  localWrites++;
  dataMoves++;
  return true;
}
