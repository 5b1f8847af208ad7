/**
 * `/api/client/streaming` in Edge mode, against the replay of answers recorded from the real
 * Unleash 8.2.0 (test/support/edge-upstream.ts): the same events and ids as the service's stream
 * (test/client-streaming.test.ts), from the upstream's snapshot of the token's scope.
 */
import { runDurableObjectAlarm } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { forgetEdgeCaches, snapshotForToken, syncObject, tokenFor } from '../../src/edge/scope';
import type { Fixture } from '../support/edge-upstream';
import {
  byName,
  call,
  fixture,
  json,
  recordedFeatures,
  resetEdge,
  upstreamReceived,
  upstreamState,
  workerEnv,
  type Feature,
} from '../support/edge-client';
import { expectHeadLeavesNoStream, sseReader } from '../support/sse';

const WEBHOOK_SECRET = 'edge-test-webhook-secret';

interface Hydration {
  events: { eventId: number; type: string; features: Feature[]; segments: unknown[] }[];
}

let f8: Fixture;
beforeAll(async () => {
  await resetEdge();
  f8 = await fixture('8');
});

const enabled = (features: Feature[], name: string) => features.find((feature) => feature.name === name)?.enabled;

describe('GET /api/client/streaming in Edge mode (recorded Unleash 8.2.0)', () => {
  it('refuses as the other client routes do: no token and an unknown one 401, a frontend token 403, bad input 400', async () => {
    const none = await call('GET', '/api/client/streaming', null);
    expect(none.status).toBe(401);
    expect(Object.keys(await json(none))).toEqual(expect.arrayContaining(['id', 'name', 'message', 'details']));
    expect((await call('GET', '/api/client/streaming', 'not-a-token')).status).toBe(401);
    const unknown = await call('GET', '/api/client/streaming', f8.tokens.unknown);
    expect(unknown.status).toBe(401);
    expect((await json(unknown)).name).toBe('AuthenticationRequired');
    const frontend = await call('GET', '/api/client/streaming', f8.tokens.frontendDev);
    expect(frontend.status).toBe(403);
    expect((await json(frontend)).message).toBe('invalid token: expected a different token type for this endpoint');
    const bad = await call('GET', '/api/client/streaming?tag=no-colon', f8.tokens.clientDev);
    expect(bad.status).toBe(400);
    expect((await json(bad)).name).toBe('ValidationError');
  });

  it('opens with unleash-connected carrying a hydration of the scope, as the upstream sent it', async () => {
    const response = await call('GET', '/api/client/streaming', f8.tokens.clientDev);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const stream = sseReader(response);
    try {
      const connected = await stream.next();
      expect(connected.event).toBe('unleash-connected');
      const hydration = JSON.parse(connected.data!) as Hydration;
      expect(hydration.events.map((event) => event.type)).toEqual(['hydration']);
      const recorded = recordedFeatures(f8, 'seeded', f8.tokens.clientDev);
      // The event id is the upstream's own revision of the answer.
      expect(connected.id).toBe(String((recorded as unknown as { meta: { revisionId: number } }).meta.revisionId));
      expect(connected.id).toBe(String(hydration.events[0]!.eventId));
      expect(byName(hydration.events[0]!.features)).toEqual(byName(recorded.features));
      expect(hydration.events[0]!.segments).toEqual(recorded.segments);
      // The same flags as the Edge's own /api/client/features answer for a segment-aware SDK.
      const full = await json<{ features: Feature[] }>(
        await call('GET', '/api/client/features', f8.tokens.clientDev, { headers: { 'unleash-client-spec': '5.2.0' } }),
      );
      expect(hydration.events[0]!.features).toEqual(full.features);
    } finally {
      await stream.cancel();
    }
  });

  it('resumes from Last-Event-ID at the current revision with an empty event list, as the service does', async () => {
    const first = sseReader(await call('GET', '/api/client/streaming', f8.tokens.clientDev));
    const connected = await first.next();
    await first.cancel();
    const resumed = sseReader(
      await call('GET', '/api/client/streaming', f8.tokens.clientDev, { headers: { 'last-event-id': connected.id! } }),
    );
    try {
      expect(await resumed.next()).toEqual({ event: 'unleash-connected', id: connected.id, data: '{"events":[]}' });
    } finally {
      await resumed.cancel();
    }
  });

  it('sends unleash-updated to an open stream once the upstream changes (webhook), and nothing to another scope’s stream', async () => {
    const dev = sseReader(await call('GET', '/api/client/streaming', f8.tokens.clientDev));
    const prod = sseReader(await call('GET', '/api/client/streaming', f8.tokens.clientProd));
    try {
      const devConnected = await dev.next();
      const prodConnected = await prod.next();
      const prodFeatures = (JSON.parse(prodConnected.data!) as Hydration).events[0]!.features;
      // Production's stream carries production's flags, never development's.
      expect(byName(prodFeatures)).toEqual(byName(recordedFeatures(f8, 'seeded', f8.tokens.clientProd).features));
      expect(enabled(prodFeatures, 'edge-rec-variants')).toBe(false);
      expect(enabled((JSON.parse(devConnected.data!) as Hydration).events[0]!.features, 'edge-rec-variants')).toBe(true);

      await upstreamState({ phase: 'toggled' });
      const pushed = await call('POST', '/edge/webhook', WEBHOOK_SECRET, { body: { event: {} } });
      expect(await json(pushed)).toMatchObject({ changed: 1 });

      const updated = await dev.next();
      expect(updated.event).toBe('unleash-updated');
      const delta = JSON.parse(updated.data!) as Hydration;
      expect(delta.events.map((event) => event.type)).toEqual(['hydration']);
      const toggled = recordedFeatures(f8, 'toggled', f8.tokens.clientDev);
      expect(byName(delta.events[0]!.features)).toEqual(byName(toggled.features));
      expect(enabled(delta.events[0]!.features, 'edge-rec-users')).toBe(false);
      expect(updated.id).toBe(String((toggled as unknown as { meta: { revisionId: number } }).meta.revisionId));
      expect(Number(updated.id)).toBeGreaterThan(Number(devConnected.id));
      // Production's scope did not move upstream (a 304): its stream gets no event.
      await expect(prod.next(1_500)).rejects.toThrow('no event in time');
    } finally {
      await dev.cancel();
      await prod.cancel();
      await upstreamState({ phase: 'seeded' });
      await runDurableObjectAlarm(syncObject(workerEnv));
    }
  });

  it('ends the stream of a token the upstream revokes, within the sync interval', async () => {
    const stream = sseReader(await call('GET', '/api/client/streaming', f8.tokens.revoked));
    try {
      expect((await stream.next()).event).toBe('unleash-connected');
      await upstreamState({ validatePhase: 'revoked', phase: 'revoked' });
      await runDurableObjectAlarm(syncObject(workerEnv));
      await expect(stream.next()).rejects.toThrow('stream ended');
      expect((await call('GET', '/api/client/streaming', f8.tokens.revoked)).status).toBe(401);
    } finally {
      await stream.cancel().catch(() => undefined);
      await upstreamState({ validatePhase: 'seeded', phase: 'seeded' });
    }
  });

  it('asks the sync object once for the streams of one token that wake together', async () => {
    forgetEdgeCaches();
    const token = (await tokenFor(workerEnv, f8.tokens.clientDev))!;
    const answers = await Promise.all([0, 1, 2].map(() => snapshotForToken(workerEnv, f8.tokens.clientDev, token)));
    // One question, one answer built: the very same object for all three.
    expect(answers[1]).toBe(answers[0]);
    expect(answers[2]).toBe(answers[0]);
  });

  it('answers HEAD with the stream’s headers and no body, and leaves no stream running', async () => {
    await expectHeadLeavesNoStream(() => call('HEAD', '/api/client/streaming', f8.tokens.clientDev));
  });

  it('costs the upstream nothing per stream: open streams are answered from the sync object’s snapshot', async () => {
    const before = (await upstreamReceived()).length;
    const streams = await Promise.all(
      [0, 1, 2].map(async () => sseReader(await call('GET', '/api/client/streaming', f8.tokens.clientDev))),
    );
    try {
      for (const stream of streams) expect((await stream.next()).event).toBe('unleash-connected');
      expect((await upstreamReceived()).slice(before).filter((r) => r.path === '/api/client/features')).toEqual([]);
    } finally {
      for (const stream of streams) await stream.cancel();
    }
  });
});
