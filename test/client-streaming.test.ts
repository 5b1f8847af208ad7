/** GET /api/client/streaming: server-sent delta events. */
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError } from './support/http';
import { adminOk } from './support/admin';
import { expectHeadLeavesNoStream, sseReader } from './support/sse';

let backend: string;

beforeAll(async () => {
  backend = await createToken({ tokenName: 'stream-backend', type: 'backend', environment: 'development' });
  await adminOk('POST', '/api/admin/projects/default/features', { name: 'stream.a' });
});

describe('GET /api/client/streaming', () => {
  it('needs a backend key (401 / 403)', async () => {
    await expectError(await call('GET', '/api/client/streaming', { token: null }), 401, 'AuthenticationRequired');
    const frontend = await createToken({ tokenName: 'stream-frontend', type: 'frontend', environment: 'development' });
    await expectError(await call('GET', '/api/client/streaming', { token: frontend }), 403, 'NoAccessError');
  });

  it('opens with unleash-connected carrying a hydration, then sends unleash-updated for each change', async () => {
    const response = await call('GET', '/api/client/streaming', { token: backend });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const stream = sseReader(response);
    try {
      const connected = await stream.next();
      expect(connected.event).toBe('unleash-connected');
      const hydration = JSON.parse(connected.data!) as { events: { eventId: number; type: string; features: { name: string }[] }[] };
      expect(hydration.events.map((event) => event.type)).toEqual(['hydration']);
      expect(connected.id).toBe(String(hydration.events[0]!.eventId));
      const full = await bodyOf(await call('GET', '/api/client/features', { token: backend, headers: { 'unleash-client-spec': '5.2.0' } }));
      expect(hydration.events[0]!.features).toEqual(full.features);

      await adminOk('POST', '/api/admin/projects/default/features/stream.a/environments/development/on');
      const updated = await stream.next();
      expect(updated.event).toBe('unleash-updated');
      const delta = JSON.parse(updated.data!) as {
        events: { eventId: number; type: string; feature: { name: string; enabled: boolean } }[];
      };
      expect(delta.events.map((event) => [event.type, event.feature.name, event.feature.enabled])).toEqual([
        ['feature-updated', 'stream.a', true],
      ]);
      expect(Number(updated.id)).toBe(delta.events[0]!.eventId);
      expect(Number(updated.id)).toBeGreaterThan(Number(connected.id));
    } finally {
      await stream.cancel();
    }
  });

  it('answers HEAD with the stream’s headers and no body, and leaves no stream running', async () => {
    await expectHeadLeavesNoStream(() => call('HEAD', '/api/client/streaming', { token: backend }));
  });

  it('resumes from Last-Event-ID: only what changed since, or an empty list when nothing did', async () => {
    const first = sseReader(await call('GET', '/api/client/streaming', { token: backend }));
    const connected = await first.next();
    await first.cancel();
    const resumed = sseReader(await call('GET', '/api/client/streaming', { token: backend, headers: { 'last-event-id': connected.id! } }));
    try {
      const again = await resumed.next();
      expect(again).toEqual({ event: 'unleash-connected', id: connected.id, data: '{"events":[]}' });
    } finally {
      await resumed.cancel();
    }
    await adminOk('PATCH', '/api/admin/projects/default/features/stream.a', [{ op: 'replace', path: '/description', value: 'while away' }]);
    const caughtUp = sseReader(await call('GET', '/api/client/streaming', { token: backend, headers: { 'last-event-id': connected.id! } }));
    try {
      const event = await caughtUp.next();
      const delta = JSON.parse(event.data!) as { events: { type: string; feature: { description: string } }[] };
      expect(delta.events.map((item) => [item.type, item.feature.description])).toEqual([['feature-updated', 'while away']]);
    } finally {
      await caughtUp.cancel();
    }
  });

  it('sends a keep-alive comment after 15 s without data (SDKs give up after 60 s, Edge sends one every 30 s)', async () => {
    const stream = sseReader(await call('GET', '/api/client/streaming', { token: backend }));
    try {
      await stream.next();
      const opened = Date.now();
      const keepAlive = await stream.next(20_000);
      expect(keepAlive).toEqual({ comment: 'keep-alive' });
      const waited = Date.now() - opened;
      expect(waited).toBeGreaterThan(14_000);
      expect(waited).toBeLessThan(17_000);
    } finally {
      await stream.cancel();
    }
  }, 30_000);
});
