/** Server-sent events read off a response body, for the streaming tests (main mode and Edge mode). */
import { expect } from 'vitest';
import { streamingConnections } from '../../src/sdk/client-api/streaming';
export interface SseEvent {
  event?: string;
  id?: string;
  data?: string;
  comment?: string;
}

/** Reads server-sent events off a response body, one at a time. */
export function sseReader(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    async next(timeoutMs = 5000): Promise<SseEvent> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: SseEvent = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) event.comment = line.slice(1).trim();
            else {
              const colon = line.indexOf(':');
              const field = line.slice(0, colon) as 'event' | 'id' | 'data';
              event[field] = line.slice(colon + 1).trimStart();
            }
          }
          return event;
        }
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new Error('no event in time');
        const chunk = await Promise.race([
          reader.read(),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no event in time')), remaining)),
        ]);
        if (chunk.done) throw new Error('stream ended');
        buffer += decoder.decode(chunk.value, { stream: true });
      }
    },
    async cancel() {
      await reader.cancel();
    },
  };
}

/**
 * A HEAD on the stream answers its headers with no body and leaves no stream loop running
 * (the loop would otherwise write into a body nobody reads until `waitUntil` ends). The streams
 * earlier tests cancelled end first, so any stream left counts against the HEAD.
 */
export async function expectHeadLeavesNoStream(head: () => Promise<Response>): Promise<void> {
  const settle = async () => {
    const deadline = Date.now() + 5_000;
    while (streamingConnections() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  };
  await settle();
  const before = streamingConnections();
  const response = await head();
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  expect(await response.text()).toBe('');
  await settle();
  expect(streamingConnections()).toBe(before);
}
