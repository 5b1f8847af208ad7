/** Server-sent events read off a response body, for the streaming tests (main mode and Edge mode). */
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
