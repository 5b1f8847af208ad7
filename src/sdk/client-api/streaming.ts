/**
 * `GET /api/client/streaming`: Unleash's streaming API (Enterprise in Unleash, open here) as
 * server-sent events. On connect, `unleash-connected` carries what the client lacks since its
 * `Last-Event-ID` (a hydration when it has none); then `unleash-updated` carries each change
 * it can see, and a comment keeps the connection alive at least every 15 s.
 *
 * No connection polls D1. The connections of an isolate wait on one shared tick (a timer in
 * one of their request contexts), which fires at the revision-check interval, the fallback,
 * or within LOOK_MS of a write in this isolate or a push about one in another (src/sdk/push/):
 * then the first of them reads the revision (once per isolate, through the snapshot's own
 * check) and every connection computes its delta from the isolate's snapshot and change log
 * in memory. Each connection also keeps a keep-alive timer, which re-arms the shared tick if
 * the connection that owned it went away.
 *
 * The loop does not know where flags come from: a `StreamSource` gives it the isolate's snapshot
 * and the events since a revision. The service's source reads its snapshot and change log;
 * Edge mode's (src/edge/streaming.ts) reads the upstream's snapshot of the token's scope.
 */
import type { Env } from '../../env';
import { ApiError } from '../../http/errors';
import { log } from '../../log';
import { deltaBody, deltaSince, parseRevision, type DeltaEvents } from './delta';
import { deltaQueryOf } from './delta-routes';
import {
  chasingPushedRevision,
  credentialGeneration,
  dataMayHaveMoved,
  dataMoveCount,
  failedReadCount,
  revisionCheckInterval,
} from '../../db/coherence';
import { findRecord, trustedUntil } from '../../auth/token-records';
import { listenForChanges, stopListening } from '../push/listen';
import { snapshotFor, type Snapshot } from './snapshot';
import { BACKEND_TOKEN_TYPES } from '../../auth/principal';
import { untyped, type UntypedAnswer } from '../../http/responses';
import { route, sdk, type Route, type SdkContext } from '../../http/route';

const KEEP_ALIVE_MS = 15_000;
/** The client reconnects (with Last-Event-ID) after this; bounds what one request holds. */
const MAX_CONNECTION_MS = 10 * 60_000;
const MIN_TICK_MS = 250;

/**
 * How often the tick's owner looks, in memory, whether the data may have moved (a write in this
 * isolate, a push about one elsewhere). A write's own request cannot wake the streams itself:
 * code resumed by a short request's promise runs in that request, whose I/O ends with it, so
 * the wake-up goes through a timer of a long-lived connection, as the tick does.
 */
const LOOK_MS = 25;

/**
 * After a look whose D1 read failed, the next look comes this soon, then twice as late per
 * failed look, never later than the tick. Waiting for the tick instead left a change a whole
 * tick late in the isolate that wrote it (bench/propagation/RESULTS.md, run 6).
 */
const FAILED_READ_RETRY_MS = 20;

interface Tick {
  promise: Promise<void>;
  resolve: () => void;
  due: number;
  /** `dataMoveCount()` when armed: any change wakes everyone before `due`. */
  moves: number;
  /** When the owner's timer last looked; a tick not looked at for a while died with its request. */
  lookedAt: number;
  /** The connection whose request context runs the timer. */
  owner: object;
}

/** Where a stream's flags come from. */
export interface StreamSource {
  /** The isolate's snapshot of the stream's scope (its own cache decides how often it is checked). */
  snapshot: () => Promise<Snapshot>;
  /** The events that bring a client at `since` (undefined: it has nothing) to `snapshot`; null when nothing it sees changed. */
  eventsSince: (snapshot: Snapshot, since: number | undefined) => Promise<DeltaEvents | null>;
  /** How often the isolate's connections look for a change now, ms (the service's slows while it hears pushes). */
  checkMs: () => number;
  /** Whether the caller may still stream (the service: its key is neither revoked nor expired); absent: always. */
  allowed?: () => Promise<boolean>;
  /** Called at each look from the connection's own request context (the service listens to the change feed). */
  look?: (owner: object) => void;
  /** The connection ended. */
  leave?: (owner: object) => void;
}

let tick: Tick | null = null;
let openConnections = 0;

/**
 * The next shared tick: at the check interval (or within `retryMs`, after a failed read), or
 * within LOOK_MS of a write or push. The caller's request context arms it when none is pending,
 * or when the pending one stopped being looked at (its timer died with the request that armed
 * it); a pending one due later than the caller needs is brought forward.
 */
function nextTick(checkMs: number, owner: object, retryMs: number): Promise<void> {
  const now = Date.now();
  // While a pushed revision is not readable yet, look again at the short chase interval, not the tick.
  const tickMs = chasingPushedRevision(now) ? checkMs : Math.max(MIN_TICK_MS, checkMs);
  const interval = retryMs > 0 ? Math.min(retryMs, tickMs) : tickMs;
  if (tick && now - tick.lookedAt > LOOK_MS + 1000) tick = null;
  if (tick) tick.due = Math.min(tick.due, now + interval);
  else {
    let resolve!: () => void;
    const promise = new Promise<void>((done) => (resolve = done));
    const armed: Tick = { promise, resolve, due: now + interval, moves: dataMoveCount(), lookedAt: now, owner };
    tick = armed;
    const look = () => {
      if (tick !== armed) return;
      armed.lookedAt = Date.now();
      if (armed.lookedAt < armed.due && dataMoveCount() === armed.moves) {
        setTimeout(look, LOOK_MS);
        return;
      }
      tick = null;
      armed.resolve();
    };
    setTimeout(look, LOOK_MS);
  }
  return tick.promise;
}

/** A closing connection that armed the pending tick hands it off: wake everyone now, and the next waiter re-arms it. */
function leaveTick(owner: object): void {
  if (tick?.owner !== owner) return;
  const leaving = tick;
  tick = null;
  leaving.resolve();
}

/** Settles after `ms`, when `signal` settles, or when cancelled (so that an earlier wake-up leaves no timer behind). */
function sleep(ms: number, signal: Promise<void>): { done: Promise<void>; cancel: () => void } {
  let cancel!: () => void;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    cancel = () => {
      clearTimeout(timer);
      resolve();
    };
    void signal.then(cancel);
  });
  return { done, cancel };
}

function sseEvent(name: string, id: number, delta: DeltaEvents | null): string {
  return `event: ${name}\nid: ${id}\ndata: ${deltaBody(delta ?? { events: [], lastEventId: id })}\n\n`;
}

interface Connection {
  source: StreamSource;
  lastEventId: number;
  lastWriteAt: number;
  openedAt: number;
  /** `dataMoveCount()` when the connection last looked for an update. */
  moves: number;
}

async function serve(connection: Connection, writer: WritableStreamDefaultWriter<Uint8Array>, gone: Promise<void>): Promise<void> {
  const { source } = connection;
  const encoder = new TextEncoder();
  let closed = false;
  void gone.then(() => (closed = true));
  openConnections++;
  // 0 while the last look read what it needed; else how soon to look again (a D1 read failed).
  let retryMs = 0;
  try {
    while (!closed && Date.now() - connection.openedAt < MAX_CONNECTION_MS) {
      source.look?.(connection);
      // A write or push since this connection last looked: look again at once.
      if (dataMoveCount() === connection.moves) {
        const keepAlive = sleep(KEEP_ALIVE_MS, gone);
        await Promise.race([nextTick(source.checkMs(), connection, retryMs), keepAlive.done]);
        keepAlive.cancel();
      }
      connection.moves = dataMoveCount();
      if (closed) break;
      if (source.allowed) {
        try {
          if (!(await source.allowed())) break;
        } catch (error) {
          log.warn('streaming: could not check the key; checking again at the next look', { error });
        }
      }
      let update: DeltaEvents | null = null;
      // The service's snapshotFor serves the kept snapshot when D1 fails: the failure shows in the count.
      const failuresBefore = failedReadCount();
      let failed = false;
      try {
        const snapshot = await source.snapshot();
        update = await source.eventsSince(snapshot, connection.lastEventId);
      } catch (error) {
        // The caller is refused now (Edge mode: the upstream revoked the token): the stream ends.
        if (error instanceof ApiError && (error.status === 401 || error.status === 403)) break;
        failed = true;
        log.warn('streaming: could not compute an update; retrying soon', { error });
      }
      failed ||= failedReadCount() !== failuresBefore;
      retryMs = failed ? Math.min(retryMs === 0 ? FAILED_READ_RETRY_MS : retryMs * 2, KEEP_ALIVE_MS) : 0;
      const now = Date.now();
      if (update) {
        await writer.write(encoder.encode(sseEvent('unleash-updated', update.lastEventId, update)));
        connection.lastEventId = update.lastEventId;
        connection.lastWriteAt = now;
      } else if (now - connection.lastWriteAt >= KEEP_ALIVE_MS - MIN_TICK_MS) {
        await writer.write(encoder.encode(': keep-alive\n\n'));
        connection.lastWriteAt = now;
      }
    }
    if (!closed) await writer.close();
  } catch {
    // The client went away mid-write: nothing to do.
  } finally {
    openConnections--;
    leaveTick(connection);
    source.leave?.(connection);
  }
}

/** Open streams in this isolate (for tests and logs). */
export function streamingConnections(): number {
  return openConnections;
}

/**
 * The event stream of one client at revision `since` (its `Last-Event-ID`, parsed): what it
 * lacks now as `unleash-connected`, then the loop above in the background.
 */
export async function openStream(ctx: ExecutionContext, source: StreamSource, since: number | undefined): Promise<Response> {
  const snapshot = await source.snapshot();
  const initial = await source.eventsSince(snapshot, since);
  const lastEventId = initial?.lastEventId ?? since ?? snapshot.revision;

  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  // Settles when the client disconnects (the readable side is cancelled) or the stream ends.
  const gone = writer.closed.then(
    () => undefined,
    () => undefined,
  );
  const now = Date.now();
  const connection: Connection = { source, lastEventId, lastWriteAt: now, openedAt: now, moves: dataMoveCount() };
  // Not awaited: the body is read only once the response is returned.
  void writer.write(new TextEncoder().encode(sseEvent('unleash-connected', lastEventId, initial))).catch(() => undefined);
  ctx.waitUntil(serve(connection, writer, gone));
  return new Response(readable, {
    headers: {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      // Tells proxies such as nginx not to buffer the stream.
      'x-accel-buffering': 'no',
    },
  });
}

/**
 * Whether a stream's key still works: trusted by the isolate and nothing forgotten since
 * `generation.seen`, or else found again (isolate cache, KV, D1). A revoked or expired key ends
 * its stream: at once in the isolate that revoked it (the revocation wakes the streams), within
 * the isolate's trust of a key record (10 s) and the next look elsewhere.
 */
async function keyStillValid(env: Env, ctx: ExecutionContext, keyHash: string, generation: { seen: number }): Promise<boolean> {
  const now = credentialGeneration();
  if (now === generation.seen && trustedUntil('apikey', keyHash) > Date.now()) return true;
  const record = await findRecord(env, ctx, 'apikey', keyHash);
  if (record === null || (record.expiresAt !== null && Date.parse(record.expiresAt) <= Date.now())) return false;
  generation.seen = now;
  return true;
}

async function streaming(context: SdkContext): Promise<UntypedAnswer> {
  const { env, ctx, request, principal } = context;
  const { environment, query } = deltaQueryOf(context);
  const keyHash = principal.token.hash;
  const generation = { seen: credentialGeneration() };
  const source: StreamSource = {
    snapshot: () => snapshotFor(env, environment),
    eventsSince: (snapshot, since) => deltaSince(env, snapshot, query, since),
    checkMs: () => revisionCheckInterval(env),
    allowed: () => keyStillValid(env, ctx, keyHash, generation),
    // Pushes about writes in other isolates come over the isolate's socket to the change feed.
    look: (owner) => void listenForChanges(env, owner),
    // Its socket closes with it: the others look now, and one of them opens a new one.
    leave: (owner) => {
      if (stopListening(owner)) dataMayHaveMoved();
    },
  };
  return untyped(await openStream(ctx, source, parseRevision(request.headers.get('last-event-id'))));
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/client/streaming',
    access: sdk(BACKEND_TOKEN_TYPES),
    tag: 'Client',
    operationId: 'getStreaming',
    summary: 'Flag changes as server-sent events',
    responses: { 200: { description: 'Success', schema: null, contentType: 'text/event-stream' } },
    errors: [400, 401, 403],
    handler: streaming,
  }),
];
