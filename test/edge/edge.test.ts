/**
 * Edge mode (wrangler.toml [env.edge]) against a replay of answers recorded from the real
 * Unleash 8.2.0 and 6.10.1 (test/support/edge-upstream.ts, scripts/record-upstream.mjs).
 * One sync object serves the whole file, as one serves a deployment: the tests run in order.
 */

import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { kvKey } from '../../src/edge/persisted';
import { beforeAll, describe, expect, it } from 'vitest';
import { syncObject, forgetEdgeCaches } from '../../src/edge/scope';
import type { Fixture } from '../support/edge-upstream';
import {
  workerEnv,
  RECORDER_ADDRESS,
  upstreamState,
  upstreamReceived,
  fixture,
  call,
  json,
  recordedFeatures,
  byName,
  resetEdge,
  type Feature,
} from '../support/edge-client';

const WEBHOOK_SECRET = 'edge-test-webhook-secret';

let f8: Fixture;
beforeAll(async () => {
  await resetEdge();
  f8 = await fixture('8');
});

describe('Edge mode in front of Unleash 8.2.0 (recorded)', () => {
  it('refuses a request without a token, and a malformed or unknown token, with 401 in Unleash error shape', async () => {
    const none = await call('GET', '/api/client/features', null);
    expect(none.status).toBe(401);
    expect(Object.keys(await json(none))).toEqual(expect.arrayContaining(['id', 'name', 'message', 'details']));
    const before = (await upstreamReceived()).length;
    expect((await call('GET', '/api/client/features', 'not-a-token')).status).toBe(401);
    // A malformed token never reaches the upstream.
    expect((await upstreamReceived()).length).toBe(before);
    expect((await call('GET', '/api/client/features', f8.tokens.unknown)).status).toBe(401);
    expect((await call('GET', '/api/frontend', f8.tokens.unknown)).status).toBe(401);
    const validations = (await upstreamReceived()).filter((r) => r.path === '/edge/validate');
    expect(validations).toHaveLength(1);
    // Remembered as invalid: asking again (from another isolate too) costs the upstream nothing.
    forgetEdgeCaches();
    for (let i = 0; i < 5; i++) expect((await call('GET', '/api/client/features', f8.tokens.unknown)).status).toBe(401);
    expect((await upstreamReceived()).filter((r) => r.path === '/edge/validate')).toHaveLength(1);
  });

  it('answers a backend token with its scope’s flags as the upstream sent them, with an ETag and 304', async () => {
    const response = await call('GET', '/api/client/features', f8.tokens.clientDev, { headers: { 'unleash-client-spec': '5.2.0' } });
    expect(response.status).toBe(200);
    const body = await json<{ features: Feature[]; segments: unknown[]; query: unknown }>(response);
    const recorded = recordedFeatures(f8, 'seeded', f8.tokens.clientDev);
    expect(byName(body.features)).toEqual(byName(recorded.features));
    expect(body.segments).toEqual(recorded.segments);
    expect(body.query).toEqual({ project: ['default'], environment: 'development', inlineSegmentConstraints: false });
    const etag = response.headers.get('etag')!;
    const again = await call('GET', '/api/client/features', f8.tokens.clientDev, {
      headers: { 'unleash-client-spec': '5.2.0', 'if-none-match': etag },
    });
    expect(again.status).toBe(304);
    // An old SDK gets the segment's constraints inlined, as Unleash serves it.
    const old = await json<{ features: (Feature & { strategies: { constraints: unknown[]; segments?: unknown }[] })[] }>(
      await call('GET', '/api/client/features', f8.tokens.clientDev),
    );
    const segmented = old.features.find((feature) => feature.name === 'edge-rec-segment')!;
    expect(segmented.strategies[0]!.segments).toBeUndefined();
    const segment = (recorded.segments as { name: string; constraints: unknown[] }[]).find((s) => s.name === 'edge-rec-segment')!;
    expect(segmented.strategies[0]!.constraints).toEqual(segment.constraints);
  });

  it('answers /api/client/delta from the same snapshot: a hydration, then 304 at that revision', async () => {
    const first = await call('GET', '/api/client/delta', f8.tokens.clientDev);
    expect(first.status).toBe(200);
    const body = await json<{ events: { type: string; features: Feature[] }[] }>(first);
    expect(body.events).toHaveLength(1);
    expect(body.events[0]!.type).toBe('hydration');
    expect(byName(body.events[0]!.features)).toEqual(byName(recordedFeatures(f8, 'seeded', f8.tokens.clientDev).features));
    const again = await call('GET', '/api/client/delta', f8.tokens.clientDev, { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });

  it('answers one flag, and 404 for a flag the scope does not have', async () => {
    const one = await call('GET', '/api/client/features/edge-rec-users', f8.tokens.clientDev);
    expect(one.status).toBe(200);
    expect((await json<Feature>(one)).name).toBe('edge-rec-users');
    const missing = await call('GET', '/api/client/features/edge-rec-nope', f8.tokens.clientDev);
    expect(missing.status).toBe(404);
    expect((await json(missing)).name).toBe('NotFoundError');
  });

  it('never answers one scope’s flags to another: production sees production’s', async () => {
    const spec = { headers: { 'unleash-client-spec': '5.2.0' } };
    const prod = await json<{ features: Feature[] }>(await call('GET', '/api/client/features', f8.tokens.clientProd, spec));
    const dev = await json<{ features: Feature[] }>(await call('GET', '/api/client/features', f8.tokens.clientDev, spec));
    const enabled = (list: Feature[], name: string) => list.find((feature) => feature.name === name)!.enabled;
    expect(enabled(prod.features, 'edge-rec-variants')).toBe(false);
    expect(enabled(dev.features, 'edge-rec-variants')).toBe(true);
    expect(byName(prod.features)).toEqual(byName(recordedFeatures(f8, 'seeded', f8.tokens.clientProd).features));
  });

  it('refuses a token of the other kind with 403', async () => {
    const wrong = await call('GET', '/api/client/features', f8.tokens.frontendDev);
    expect(wrong.status).toBe(403);
    expect((await json(wrong)).message).toBe('invalid token: expected a different token type for this endpoint');
    expect((await call('GET', '/api/frontend', f8.tokens.clientDev)).status).toBe(403);
  });

  it('answers the frontend API exactly as the upstream’s own /api/frontend did for the recorded contexts', async () => {
    const recorded = f8.exchanges.filter((e) => e.name === 'frontend');
    expect(recorded.length).toBeGreaterThanOrEqual(50);
    for (const exchange of recorded) {
      const ours = await call('GET', `/api/frontend?${exchange.request.query}`, f8.tokens.frontendDev, RECORDER_ADDRESS);
      expect(ours.status).toBe(200);
      const upstream = (exchange.response.body as { toggles: { name: string }[] }).toggles;
      expect(byName((await json<{ toggles: { name: string }[] }>(ours)).toggles), exchange.request.query).toEqual(byName(upstream));
    }
  });

  it('answers the /api/proxy aliases, POST with a context, and CORS on answers and errors', async () => {
    const exchange = f8.exchanges.find((e) => e.name === 'frontend')!;
    const context = Object.fromEntries(new URLSearchParams(exchange.request.query));
    const posted = await call('POST', '/api/proxy', f8.tokens.frontendDev, {
      body: { context },
      headers: { origin: 'https://app.example' },
    });
    expect(posted.status).toBe(200);
    expect(posted.headers.get('access-control-allow-origin')).toBe('*');
    const upstream = (exchange.response.body as { toggles: { name: string }[] }).toggles;
    expect(byName((await json(posted)).toggles)).toEqual(byName(upstream));
    const refused = await call('GET', '/api/frontend', null, { headers: { origin: 'https://app.example' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers /all with disabled flags too, /features/:name one flag, and an unknown strategy as off, never a 500', async () => {
    const all = await json<{ toggles: { name: string; enabled: boolean }[] }>(
      await call('GET', '/api/frontend/all?userId=u1', f8.tokens.frontendDev),
    );
    expect(all.toggles.find((toggle) => toggle.name === 'edge-rec-off')).toMatchObject({ enabled: false });
    expect(all.toggles.find((toggle) => toggle.name === 'edge-rec-users')).toMatchObject({ enabled: true });
    const custom = await call('GET', '/api/frontend/features/edge-rec-custom', f8.tokens.frontendDev);
    expect(custom.status).toBe(200);
    expect(await json(custom)).toMatchObject({ name: 'edge-rec-custom', enabled: false });
    expect((await call('GET', '/api/frontend/features/edge-rec-nope', f8.tokens.frontendDev)).status).toBe(404);
  });

  it('answers /edge/validate downstream with only the valid tokens', async () => {
    const response = await call('POST', '/edge/validate', null, { body: { tokens: [f8.tokens.clientDev, f8.tokens.unknown, 'junk'] } });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({
      tokens: [{ token: f8.tokens.clientDev, type: 'client', projects: ['default'], environment: 'development' }],
    });
  });

  it('keeps the admin API and UI off, with a 404 that says so', async () => {
    for (const path of ['/api/admin/features', '/', '/login']) {
      const response = await call('GET', path, '*:*.some-admin-token');
      expect(response.status).toBe(404);
      const body = await json(response);
      expect(body.name).toBe('NotFoundError');
      expect(body.message).toContain('Edge mode');
    }
  });

  it('refreshes every scope at once when the upstream’s webhook calls, and only with the shared secret', async () => {
    await upstreamState({ phase: 'toggled' });
    const before = (await upstreamReceived()).length;
    const refused = await call('POST', '/edge/webhook', 'wrong-secret', { body: { event: {} } });
    expect(refused.status).toBe(401);
    expect((await upstreamReceived()).length).toBe(before);
    const users = async () =>
      (await json<{ features: Feature[] }>(await call('GET', '/api/client/features', f8.tokens.clientDev))).features.find(
        (feature) => feature.name === 'edge-rec-users',
      )!.enabled;
    expect(await users()).toBe(true);
    const pushed = await call('POST', '/edge/webhook', WEBHOOK_SECRET, { body: { event: {} } });
    expect(pushed.status).toBe(200);
    expect(await json(pushed)).toMatchObject({ changed: 1 });
    expect(await users()).toBe(false);
    // The polls went with the last ETag: the unchanged scope got its 304.
    const polls = (await upstreamReceived()).slice(before).filter((r) => r.path === '/api/client/features');
    expect(polls.every((poll) => poll.ifNoneMatch !== null)).toBe(true);
  });

  it('after a webhook, asks again shortly until the upstream’s revision tick shows the change, even when a regular alarm polled first', async () => {
    const stub = syncObject(workerEnv);
    const nextAlarm = () => runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    const users = async () =>
      (await json<{ features: Feature[] }>(await call('GET', '/api/client/features', f8.tokens.clientDev))).features.find(
        (feature) => feature.name === 'edge-rec-users',
      )!.enabled;
    await upstreamState({ phase: 'seeded' });
    await call('POST', '/edge/webhook', WEBHOOK_SECRET, { body: { event: {} } });
    expect(await users()).toBe(true);
    // A flag changed upstream, but Unleash has not moved its client API's revision yet: 304s.
    const pushed = await call('POST', '/edge/webhook', WEBHOOK_SECRET, { body: { event: {} } });
    expect(await json(pushed)).toMatchObject({ changed: 0 });
    // An alarm comes before the tick too (the regular one may be due then): still 304s, and
    // the next ask is still a catch-up step away, not an interval.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await users()).toBe(true);
    expect(await nextAlarm()).toBeLessThanOrEqual(Date.now() + 1_000);
    // The tick: the next catch-up poll gets the change, asking only for the flags.
    await upstreamState({ phase: 'toggled' });
    const before = (await upstreamReceived()).length;
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await upstreamReceived()).slice(before).map((r) => r.path)).toEqual(expect.arrayContaining(['/api/client/features']));
    expect((await upstreamReceived()).slice(before).some((r) => r.path === '/edge/validate')).toBe(false);
    expect(await users()).toBe(false);
    // One scope moved: Unleash's tick has passed, so the others' 304s are real and the regular
    // interval takes over (production is not asked again and again).
    expect(await nextAlarm()).toBeGreaterThan(Date.now() + 5_000);
  });

  it('keeps answering the last good snapshot while the upstream is down, persisted for cold isolates, and says how stale', async () => {
    const good = await json<{ features: Feature[] }>(await call('GET', '/api/client/features', f8.tokens.clientDev));
    await upstreamState({ down: true });
    await runDurableObjectAlarm(syncObject(workerEnv));
    forgetEdgeCaches();
    const during = await call('GET', '/api/client/features', f8.tokens.clientDev);
    expect(during.status).toBe(200);
    expect(byName((await json<{ features: Feature[] }>(during)).features)).toEqual(byName(good.features));
    const stored = await workerEnv.EDGE_SNAPSHOTS!.get(kvKey(workerEnv.EDGE_UPSTREAM_URL!, 'development:default'), 'json');
    const names = (list: Feature[]) => list.map((feature) => feature.name).sort();
    expect(names((JSON.parse((stored as { text: string }).text) as { features: Feature[] }).features)).toEqual(names(good.features));
    const health = await json(await call('GET', '/internal-backstage/health', null));
    expect(health.status).toBe('OK');
    expect(health.scopes.find((s: { scope: string }) => s.scope === 'development:default').lastError).toMatch(/upstream/);
    await upstreamState({ down: false, phase: 'seeded' });
    await runDurableObjectAlarm(syncObject(workerEnv));
    const after = await json(await call('GET', '/internal-backstage/health', null));
    expect(after.scopes.every((s: { lastError: string | null }) => s.lastError === null)).toBe(true);
    expect((await call('GET', '/internal-backstage/ready', null)).status).toBe(200);
  });

  it('shows tokens and flags in the backstage only to the holder of the webhook secret, tokens redacted', async () => {
    expect((await call('GET', '/internal-backstage/tokens', null)).status).toBe(401);
    const tokens = await json(await call('GET', '/internal-backstage/tokens', WEBHOOK_SECRET));
    expect(tokens.tokens.length).toBeGreaterThan(0);
    expect(JSON.stringify(tokens)).not.toContain(f8.tokens.clientDev);
    const features = await call('GET', '/internal-backstage/features', WEBHOOK_SECRET);
    expect(features.status).toBe(200);
  });

  it('stops a token revoked upstream within one sync interval', async () => {
    expect((await call('GET', '/api/client/features', f8.tokens.revoked)).status).toBe(200);
    await upstreamState({ validatePhase: 'revoked', phase: 'revoked' });
    await runDurableObjectAlarm(syncObject(workerEnv));
    forgetEdgeCaches();
    expect((await call('GET', '/api/client/features', f8.tokens.revoked)).status).toBe(401);
    expect((await call('GET', '/api/client/features', f8.tokens.clientDev)).status).toBe(200);
    await upstreamState({ validatePhase: 'seeded', phase: 'seeded' });
  });

  it('merges SDK metrics and registrations and forwards them upstream to /api/client/metrics/bulk with equal counts', async () => {
    const bucket = (yes: number, no: number) => ({
      appName: 'edge-test-app',
      instanceId: 'i1',
      bucket: {
        start: new Date(Date.now() - 60_000).toISOString(),
        stop: new Date().toISOString(),
        toggles: { 'edge-rec-rollout': { yes, no, variants: { blue: yes } }, 'edge-rec-users': { yes: 0, no: 0 } },
      },
    });
    expect((await call('POST', '/api/client/metrics', f8.tokens.clientDev, { body: bucket(3, 1) })).status).toBe(202);
    expect((await call('POST', '/api/client/metrics', f8.tokens.clientDev, { body: bucket(2, 5) })).status).toBe(202);
    expect((await call('POST', '/api/frontend/client/metrics', f8.tokens.frontendDev, { body: bucket(1, 0) })).status).toBe(202);
    const registration = {
      appName: 'edge-test-app',
      instanceId: 'i1',
      strategies: ['default'],
      started: new Date().toISOString(),
      interval: 10_000,
    };
    expect((await call('POST', '/api/client/register', f8.tokens.clientDev, { body: registration })).status).toBe(202);
    expect((await call('POST', '/api/client/metrics', f8.tokens.clientDev, { body: { appName: '' } })).status).toBe(400);
    const before = (await upstreamReceived()).length;
    await syncObject(workerEnv).flushMetrics(true);
    const posts = (await upstreamReceived()).slice(before).filter((r) => r.path === '/api/client/metrics/bulk');
    expect(posts).toHaveLength(1);
    const sent = JSON.parse(posts[0]!.body);
    expect(posts[0]!.token).toBe(f8.tokens.clientDev);
    expect(sent.metrics).toEqual([
      expect.objectContaining({
        featureName: 'edge-rec-rollout',
        appName: 'edge-test-app',
        environment: 'development',
        yes: 6,
        no: 6,
        variants: { blue: 6 },
      }),
    ]);
    expect(sent.applications).toEqual([
      expect.objectContaining({ appName: 'edge-test-app', instanceId: 'i1', environment: 'development' }),
    ]);
    // Nothing left: the next minute sends nothing.
    await syncObject(workerEnv).flushMetrics(true);
    expect((await upstreamReceived()).slice(before).filter((r) => r.path === '/api/client/metrics/bulk')).toHaveLength(1);
  });
});
