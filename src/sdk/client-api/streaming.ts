/**
 * `GET /api/client/streaming`: Unleash's streaming API (Enterprise in Unleash, open here) as
 * server-sent events. On connect, `unleash-connected` carries what the client lacks since its
 * `Last-Event-ID` (a hydration when it has none); then `unleash-updated` carries each change
 * it can see, and a comment keeps the connection alive at least every 15 s.
 *
 * No connection polls D1. The connections of an isolate wait on one shared tick (a timer in
 * one of their request contexts, every revision-check interval); on each tick the first of
 * them reads the revision (once per isolate, through the snapshot's own check) and every
 * connection computes its delta from the isolate's snapshot and change log in memory. Each
 * connection also keeps a keep-alive timer, which re-arms the shared tick if the connection
 * that owned it went away.
 */
import type { Env } from '../../env';
import { log } from '../../log';
import { deltaBody, deltaSince, parseRevision, type DeltaEvents, type DeltaQuery } from './delta';
import { deltaQueryOf } from './delta-routes';
import { revisionCheckInterval } from '../../db/coherence';
import { snapshotFor } from './snapshot';
import { BACKEND_TOKEN_TYPES } from '../../auth/principal';
import { route, sdk, type Route, type SdkContext } from '../../http/route';

const KEEP_ALIVE_MS = 15_000;
/** The client reconnects (with Last-Event-ID) after this; bounds what one request holds. */
const MAX_CONNECTION_MS = 10 * 60_000;
const MIN_TICK_MS = 250;

interface Tick {
  promise: Promise<void>;
  resolve: () => void;
  due: number;
  /** The connection whose request context runs the timer. */
  owner: object;
}

let tick: Tick | null = null;

/**
 * The next shared tick. The caller's request context arms it when none is pending, or when the
 * pending one is overdue (its timer died with the request that armed it).
 */
function nextTick(env: Env, owner: object): Promise<void> {
  const now = Date.now();
  const interval = Math.max(MIN_TICK_MS, revisionCheckInterval(env));
  if (tick && now - tick.due > interval + 1000) tick = null;
  if (!tick) {
    let resolve!: () => void;
    const promise = new Promise<void>((done) => (resolve = done));
    const armed: Tick = { promise, resolve, due: now + interval, owner };
    tick = armed;
    setTimeout(() => {
      if (tick === armed) tick = null;
      armed.resolve();
    }, interval);
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

function sleep(ms: number, signal: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void signal.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function sseEvent(name: string, id: number, delta: DeltaEvents | null): string {
  return `event: ${name}\nid: ${id}\ndata: ${deltaBody(delta ?? { events: [], lastEventId: id })}\n\n`;
}

interface Connection {
  environment: string;
  query: DeltaQuery;
  lastEventId: number;
  lastWriteAt: number;
  openedAt: number;
}

async function serve(
  env: Env,
  connection: Connection,
  writer: WritableStreamDefaultWriter<Uint8Array>,
  gone: Promise<void>,
): Promise<void> {
  const encoder = new TextEncoder();
  let closed = false;
  void gone.then(() => (closed = true));
  try {
    while (!closed && Date.now() - connection.openedAt < MAX_CONNECTION_MS) {
      await Promise.race([nextTick(env, connection), sleep(KEEP_ALIVE_MS, gone)]);
      if (closed) break;
      let update: DeltaEvents | null = null;
      try {
        const snapshot = await snapshotFor(env, connection.environment);
        update = await deltaSince(env, snapshot, connection.query, connection.lastEventId);
      } catch (error) {
        log.warn('streaming: could not compute an update; retrying on the next tick', { error });
      }
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
    leaveTick(connection);
  }
}

async function streaming(context: SdkContext): Promise<Response> {
  const { env, ctx, request } = context;
  const { environment, query } = deltaQueryOf(context);
  const since = parseRevision(request.headers.get('last-event-id'));
  const snapshot = await snapshotFor(env, environment);
  const initial = await deltaSince(env, snapshot, query, since);
  const lastEventId = initial?.lastEventId ?? since ?? snapshot.revision;

  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  // Settles when the client disconnects (the readable side is cancelled) or the stream ends.
  const gone = writer.closed.then(
    () => undefined,
    () => undefined,
  );
  const now = Date.now();
  const connection: Connection = { environment, query, lastEventId, lastWriteAt: now, openedAt: now };
  // Not awaited: the body is read only once the response is returned.
  void writer.write(new TextEncoder().encode(sseEvent('unleash-connected', lastEventId, initial))).catch(() => undefined);
  ctx.waitUntil(serve(env, connection, writer, gone));
  return new Response(readable, {
    headers: {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      // Tells proxies such as nginx not to buffer the stream.
      'x-accel-buffering': 'no',
    },
  });
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
