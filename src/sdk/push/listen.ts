/**
 * This isolate's ear on the change feed: one WebSocket to the feed's Durable Object, opened by
 * a long-lived request (an open stream) and owned by it, since a Workers WebSocket belongs to
 * the request that opened it. When that stream ends, the socket is closed and another stream
 * opens a new one at its next look. A push makes the isolate read the revision again at once
 * and its streams look again (coherence.ts `notePushedRevision`); while the socket is up, the
 * revision tick slows to the fallback SDK_PUSH_FALLBACK_MS. Calls that are not streams (the
 * binding's RPC calls) open one too and hold it for a while after answering (`listenWhileServing`).
 */
import { dataMayHaveMoved, notePushedRevision, notePushListening } from '../../db/coherence';
import type { Env } from '../../env';
import { log } from '../../log';
import { noteAnnounced } from './announce';
import { parseAnnouncement, type ChangeAnnouncement, CHANGE_FEED_NAME } from './message';

/** How often the owner checks the socket is alive (the feed answers `ping` without waking). */
const PING_MS = 30_000;
/** Waits after a failed attempt before the next, doubled per failure up to the maximum. */
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 60_000;

interface Ear {
  socket: WebSocket;
  owner: object;
  pingedAt: number;
  /** Whether the answer to the last ping came. */
  answered: boolean;
}

let ear: Ear | null = null;
let opening = false;
let failures = 0;
let retryAt = 0;
let pushesReceived = 0;

/** Announcements pushed to this isolate so far (tests, bench). */
export function pushCount(): number {
  return pushesReceived;
}

/** Whether this isolate listens to the change feed now. */
export function listening(): boolean {
  return ear !== null;
}

function hear(data: unknown): void {
  if (typeof data !== 'string' || data === 'pong') {
    if (ear !== null) ear.answered = true;
    return;
  }
  let change: ChangeAnnouncement | null = null;
  try {
    change = parseAnnouncement(JSON.parse(data));
  } catch {
    // not JSON: ignored below
  }
  if (change === null) return;
  pushesReceived++;
  noteAnnounced(change.revision);
  notePushedRevision(change.revision);
}

function deaf(closing: Ear, failed: boolean): void {
  if (ear !== closing) return;
  ear = null;
  notePushListening(false);
  if (failed) {
    failures++;
    retryAt = Date.now() + Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (failures - 1));
  }
}

async function open(namespace: NonNullable<Env['CHANGE_FEED']>, owner: object): Promise<void> {
  opening = true;
  try {
    const feed = namespace.get(namespace.idFromName(CHANGE_FEED_NAME));
    const response = await feed.fetch('https://change-feed/listen', { headers: { upgrade: 'websocket' } });
    const socket = response.webSocket;
    if (response.status !== 101 || socket === null) throw new Error(`the change feed answered ${response.status}`);
    socket.accept();
    const opened: Ear = { socket, owner, pingedAt: Date.now(), answered: true };
    ear = opened;
    failures = 0;
    socket.addEventListener('message', (event) => hear(event.data));
    socket.addEventListener('close', () => deaf(opened, false));
    socket.addEventListener('error', () => deaf(opened, true));
    notePushListening(true);
    // Changes committed before the socket was up were announced to nobody here: read again.
    notePushedRevision(0);
  } catch (error) {
    failures++;
    retryAt = Date.now() + Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (failures - 1));
    log.warn('cannot listen to the change feed: streams wake at the revision tick', { failures, error });
  } finally {
    opening = false;
  }
}

/**
 * Called by an open stream at each look (from its own request context): opens the socket when
 * none is open (unless the last attempt failed moments ago), and, from the owner, checks that
 * it still answers. Answers the opening for the caller to wait on, or null.
 */
export function listenForChanges(env: Env, owner: object): Promise<void> | null {
  if (env.CHANGE_FEED === undefined) return null;
  const now = Date.now();
  if (ear !== null) {
    if (ear.owner !== owner || now - ear.pingedAt < PING_MS) return null;
    // Only the owner may use the socket (it belongs to its request).
    if (!ear.answered) {
      const silent = ear;
      deaf(silent, true);
      try {
        silent.socket.close(1000, 'no answer to ping');
      } catch {
        // already closed
      }
      return null;
    }
    try {
      ear.answered = false;
      ear.pingedAt = now;
      ear.socket.send('ping');
    } catch {
      deaf(ear, true);
    }
    return null;
  }
  if (opening || now < retryAt) return null;
  return open(env.CHANGE_FEED, owner);
}

/** The stream that owns the socket ends: close it (answers whether it did); another stream opens one at its next look. */
export function stopListening(owner: object): boolean {
  if (ear === null || ear.owner !== owner) return false;
  const leaving = ear;
  deaf(leaving, false);
  try {
    leaving.socket.close(1000, 'owner left');
  } catch {
    // already closed
  }
  return true;
}

/**
 * How long a call that is not a stream keeps the socket it opened: under the 30 s a Worker may
 * go on working after its answer (`waitUntil`), and under PING_MS, so it never needs a ping.
 */
const HOLD_MS = 20_000;
/** How long such a call waits for the socket to open before answering (from the revision tick's data). */
const OPEN_WAIT_MS = 500;

/**
 * For calls that are not streams (the binding's RPC calls, src/binding/entrypoint.ts): when this
 * isolate does not listen, the call opens the socket, waits for it (at most OPEN_WAIT_MS: the
 * opening reads the revision again, so this call already answers from the newest data), and
 * owns it for HOLD_MS after that through `waitUntil`; then it is closed, streams look again
 * (one of them takes it over) and the next call opens another. While an isolate serves such
 * calls, it hears every change at once, as one with an open stream does.
 */
export async function listenWhileServing(env: Env, ctx: ExecutionContext): Promise<void> {
  const owner = {};
  const opening = listenForChanges(env, owner);
  if (opening === null) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const held = opening.then(async () => {
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    if (stopListening(owner)) dataMayHaveMoved();
  });
  ctx.waitUntil(held);
  await Promise.race([opening, new Promise((resolve) => (timer = setTimeout(resolve, OPEN_WAIT_MS)))]);
  if (timer !== undefined) clearTimeout(timer);
}
