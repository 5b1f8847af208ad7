/**
 * Telling every isolate that the data moved, so that streams and hot snapshots refresh at once
 * instead of at their next revision tick: this isolate's own streams directly, the others
 * through the change feed (change-feed.ts). D1 stays the source of truth: an announcement only
 * makes its receivers read D1 again, and a lost one is caught by their revision tick.
 */
import { dataMayHaveMoved } from '../../db/coherence';
import { getDb } from '../../db/client';
import type { Env } from '../../env';
import { log } from '../../log';
import { CHANGE_FEED_NAME, type ChangeAnnouncement } from './message';
import { newestChanges } from './store';

/** Past this, the announcer gives up: the other isolates see the change at their tick. */
const ANNOUNCE_TIMEOUT_MS = 2000;
/** How many changes an announcement names; with more, it says "anything may have changed". */
const MAX_NAMED_CHANGES = 20;

/** The newest revision this isolate announced or was told of: a write that did not move it is not announced. */
let lastAnnounced = 0;

/** A push told this isolate of `revision`: its own writes need not announce it again. */
export function noteAnnounced(revision: number): void {
  lastAnnounced = Math.max(lastAnnounced, revision);
}

/**
 * Tells every isolate listening to the change feed that a change was committed. A small entry
 * for any announcer: the service after a write, Edge mode after its upstream refreshed a scope
 * (`{ revision: 0, scope }`). Answers whether the feed took it; never rejects (an unreachable
 * feed is logged, and every isolate still has its tick).
 */
export async function announceChange(env: Pick<Env, 'CHANGE_FEED'>, change: ChangeAnnouncement): Promise<boolean> {
  // Not bound where no change feed is configured (an environment without it): nobody listens.
  if (env.CHANGE_FEED === undefined) return false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  try {
    const feed = env.CHANGE_FEED.get(env.CHANGE_FEED.idFromName(CHANGE_FEED_NAME));
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ANNOUNCE_TIMEOUT_MS} ms`)), ANNOUNCE_TIMEOUT_MS);
    });
    await Promise.race([feed.announce(change), timeout]);
    return true;
  } catch (error) {
    log.warn('change feed unreachable: other isolates see the change at their revision tick', { revision: change.revision, error });
    return false;
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}

/** The change a write just committed, read back through the write's own D1 session, or null when SDKs see nothing new. */
async function committedChange(env: Env): Promise<ChangeAnnouncement | null> {
  const after = lastAnnounced;
  const rows = await newestChanges(getDb(env), after, MAX_NAMED_CHANGES + 1);
  const revision = rows[0]?.eventId;
  if (revision === undefined || revision <= lastAnnounced) return null;
  lastAnnounced = revision;
  // Named only when the log since the last announcement is short and every row is one flag in one environment.
  const complete = after > 0 && rows.length <= MAX_NAMED_CHANGES;
  const named = complete && rows.every((row) => row.kind === 'feature' && row.featureName !== null && row.environment !== null);
  if (!named) return { revision };
  return {
    revision,
    environments: [...new Set(rows.map((row) => row.environment!))],
    features: [...new Set(rows.map((row) => row.featureName!))],
  };
}

/**
 * A write finished in this isolate and was answered with success (the admin and public routes'
 * after-answer hook, and the import queue after each batch): this isolate's streams look again
 * now, and the change feed tells the other isolates. Never rejects.
 */
export async function announceWrite(env: Env): Promise<void> {
  dataMayHaveMoved();
  try {
    const change = await committedChange(env);
    if (change !== null) await announceChange(env, change);
  } catch (error) {
    log.warn('could not read the change to announce: other isolates see it at their revision tick', { error });
  }
}
