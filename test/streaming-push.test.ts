/**
 * A flag change reaches open streams at once: the isolate that made the write wakes its own
 * streams, a push from the change feed (src/sdk/push/) wakes the others, and the revision
 * tick stays the fallback.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createToken, envWith, fetchWith } from './support/http';
import { adminOk } from './support/admin';
import { sseReader } from './support/sse';

/** A tick far longer than any wait below: an event that arrives came from a wake-up, not from it. */
const SLOW_TICK = envWith({ SDK_REVISION_CHECK_MS: '600000' });

let backend: string;

function openStream(workerEnv = SLOW_TICK, headers: Record<string, string> = {}) {
  return fetchWith(workerEnv, 'GET', '/api/client/streaming', { authorization: backend, ...headers });
}

async function toggle(name: string, on: boolean): Promise<void> {
  await adminOk('POST', `/api/admin/projects/default/features/${name}/environments/development/${on ? 'on' : 'off'}`);
}

beforeAll(async () => {
  backend = await createToken({ tokenName: 'push-backend', type: 'backend', environment: 'development' });
  await adminOk('POST', '/api/admin/projects/default/features', { name: 'push.a' });
});

describe('streams wake at once', () => {
  it('a write wakes a waiting stream in the same isolate without waiting for the tick', async () => {
    const response = await openStream();
    expect(response.status).toBe(200);
    const stream = sseReader(response);
    try {
      const connected = await stream.next();
      expect(connected.event).toBe('unleash-connected');
      for (const on of [true, false, true]) {
        const written = Date.now();
        await toggle('push.a', on);
        // Well inside the 10-minute tick and the 15 s keep-alive timer.
        const updated = await stream.next(5000);
        expect(Date.now() - written).toBeLessThan(5000);
        expect(updated.event).toBe('unleash-updated');
        const delta = JSON.parse(updated.data!) as { events: { type: string; feature: { name: string; enabled: boolean } }[] };
        expect(delta.events.map((event) => [event.type, event.feature.name, event.feature.enabled])).toEqual([
          ['feature-updated', 'push.a', on],
        ]);
      }
    } finally {
      await stream.cancel();
    }
  });
});
