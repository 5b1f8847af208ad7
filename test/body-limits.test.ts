import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import worker from '../src/index';
import { describe, expect, it } from 'vitest';
import { BASE, expectError } from './support/http';

const CHUNK = 64 * 1024;

/** A JSON-looking body of `chunks` x 64 KiB, sent without Content-Length; counts what was pulled. */
function streamedBody(chunks: number) {
  const state = { pulled: 0 };
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === chunks) return controller.close();
      const chunk = new Uint8Array(CHUNK).fill(0x20); // spaces: valid JSON whitespace
      if (sent === 0) chunk.set(new TextEncoder().encode('{"email":"x@example.com","name":"'));
      sent++;
      state.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { stream, state };
}

describe('request bodies without Content-Length', () => {
  it('an anonymous 8 MiB streamed signup body is cut at the 100 kB limit: 413, the rest never read', async () => {
    const { stream, state } = streamedBody(128);
    const request = new Request<unknown, IncomingRequestCfProperties>(`${BASE}/invite/x/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      // @ts-expect-error workerd accepts `duplex` for streamed request bodies
      duplex: 'half',
    });
    expect(request.headers.get('content-length')).toBeNull();
    // Straight to the handler: through the Worker's own binding, the body would cross a workerd
    // pipe whose unread rest workerd reports on stderr when the answer comes first (as intended here).
    const ctx = createExecutionContext();
    const response = await worker.fetch(request, env, ctx);
    await waitOnExecutionContext(ctx);
    const body = await expectError(response, 413, 'PayloadTooLargeError');
    expect(body.message).toBe('The request body is larger than the 100000 bytes this endpoint accepts.');
    // Reading stops at the limit: a few chunks of read-ahead at most, not 8 MiB.
    expect(state.pulled).toBeLessThan(1024 * 1024);
  });

  it('a streamed body under the limit is read whole and parsed as before', async () => {
    const { stream } = streamedBody(1);
    const response = await exports.default.fetch(
      new Request(`${BASE}/invite/x/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream }),
    );
    // 64 KiB of an unterminated string: a JSON error, which proves the whole body was read.
    const body = await expectError(response, 400, 'ValidationError');
    expect(body.details[0]!.message).toMatch(/^The request body is not valid JSON: /);
  });
});
