/**
 * Across isolates, locally: two `wrangler dev` processes on one persisted state, the second
 * binding the first's change feed through a dev registry of their own
 * (bench/propagation/workers.mjs). A write through the first reaches a stream held by the
 * second through the push: both revision ticks are a minute long, so nothing else could bring it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream, startPair, type StreamEvent } from '../bench/propagation/workers.mjs';
import { testWorkerPort } from './support/node-env';

const PORT = testWorkerPort(8795);
let pair: Awaited<ReturnType<typeof startPair>>;
let backendKey: string;

async function adminCall(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${pair.a}${path}`, {
    method,
    headers: { authorization: pair.token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

beforeAll(async () => {
  pair = await startPair({ ports: [PORT, PORT + 1], inspectorPorts: [0, 0], vars: { SDK_REVISION_CHECK_MS: '60000' } });
  const created = await adminCall('POST', '/api/admin/api-tokens', { tokenName: 'push-it', type: 'backend', environment: 'development' });
  expect(created.status).toBe(201);
  backendKey = ((await created.json()) as { secret: string }).secret;
  expect((await adminCall('POST', '/api/admin/projects/default/features', { name: 'push.across' })).status).toBe(201);
}, 300_000);

afterAll(async () => {
  await pair?.stop();
});

function nextUpdate(events: StreamEvent[], from: number, timeoutMs: number): Promise<StreamEvent> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const look = () => {
      const found = events.slice(from).find((event) => event.event === 'unleash-updated');
      if (found) resolve(found);
      else if (Date.now() > deadline) reject(new Error(`no unleash-updated within ${timeoutMs} ms`));
      else setTimeout(look, 10);
    };
    look();
  });
}

describe('the change feed across two Worker processes', () => {
  it('a write through one process reaches a stream held by the other at once', async () => {
    const events: StreamEvent[] = [];
    const stream = await openStream(pair.b, backendKey, (event) => events.push(event));
    try {
      // Give the second process's stream a moment to open its socket to the feed.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      for (const on of [true, false, true]) {
        const from = events.length;
        const toggled = await adminCall(
          'POST',
          `/api/admin/projects/default/features/push.across/environments/development/${on ? 'on' : 'off'}`,
        );
        expect(toggled.status).toBe(200);
        // Far inside the one-minute tick of the second process.
        const update = await nextUpdate(events, from, 5000);
        const delta = JSON.parse(update.data!) as { events: { type: string; feature: { name: string; enabled: boolean } }[] };
        expect(delta.events.map((event) => [event.type, event.feature.name, event.feature.enabled])).toEqual([
          ['feature-updated', 'push.across', on],
        ]);
      }
    } finally {
      stream.close();
    }
  }, 60_000);
});
