/**
 * The change feed: one Durable Object per deployment (one D1 database, one data revision) that
 * hears of every committed change and pushes it to every isolate listening, over hibernatable
 * WebSockets, so that they refresh at once instead of at their next revision tick.
 *
 * Why one per deployment and not one per environment: the data revision is one counter for the
 * whole database, many changes touch every environment (segments, imports, a flag's own
 * settings), and an isolate usually serves several environments; one object means one socket
 * per isolate and one call per change. It holds no storage: a listener that connects reads the
 * revision from D1 itself, and a push it misses is caught by its revision tick.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../../env';
import { parseAnnouncement, type ChangeAnnouncement } from './message';

export class ChangeFeed extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Listeners check the socket is alive without waking the object (nor paying for it).
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair('ping', 'pong'));
  }

  /** An isolate starts listening: a WebSocket upgrade. */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket') return new Response('expected a WebSocket upgrade', { status: 426 });
    const { 0: listener, 1: feed } = new WebSocketPair();
    this.ctx.acceptWebSocket(feed);
    return new Response(null, { status: 101, webSocket: listener });
  }

  /** A change was committed: tell every listening isolate. Answers how many were told. */
  async announce(change: ChangeAnnouncement): Promise<number> {
    const checked = parseAnnouncement(change);
    if (checked === null) return 0;
    const message = JSON.stringify(checked);
    let told = 0;
    for (const socket of this.ctx.getWebSockets()) {
      try {
        socket.send(message);
        told++;
      } catch {
        // Closing or gone: that isolate is back on its tick until it listens again.
      }
    }
    return told;
  }

  /** Listeners only ever send `ping` (answered without waking the object). */
  override async webSocketMessage(): Promise<void> {}

  override async webSocketClose(socket: WebSocket, code: number): Promise<void> {
    try {
      socket.close(code === 1005 || code === 1006 ? 1000 : code, 'closed');
    } catch {
      // already closed
    }
  }
}
