/**
 * Edge mode through an upstream outage AND a restart (a deploy, a recycled isolate, an evicted
 * sync object), and its rate limits with many valid SDKs behind one address, against the replay
 * of the real 8.2.0 (test/support/edge-upstream.ts). The restart is real: every Durable Object
 * is evicted (memory gone, storage kept) and the isolate's caches are dropped, on the same
 * persisted KV and storage.
 */
import { evictAllDurableObjects, runDurableObjectAlarm } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { forgetEdgeCaches, syncObject } from '../../src/edge/scope';
import type { Fixture } from '../support/edge-upstream';
import { byName, call, fixture, json, resetEdge, upstreamState, workerEnv, type Feature } from '../support/edge-client';

let f8: Fixture;
beforeAll(async () => {
  await resetEdge();
  f8 = await fixture('8');
});

async function restart(): Promise<void> {
  await evictAllDurableObjects();
  forgetEdgeCaches();
}

describe('Edge mode: restarted during an upstream outage', () => {
  it('serves every token it validated before from the persisted snapshot, says it is stale, and gives no 429 when the upstream returns', async () => {
    const nat = { headers: { 'cf-connecting-ip': '203.0.113.7' } };
    const before = await json<{ features: Feature[] }>(await call('GET', '/api/client/features', f8.tokens.clientDev, nat));
    const frontendBefore = await json(await call('GET', '/api/frontend?userId=7', f8.tokens.frontendDev, nat));
    expect((await call('GET', '/api/client/features', f8.tokens.clientProd, nat)).status).toBe(200);

    await upstreamState({ down: true });
    await restart();

    // A burst as the SDKs of one address send it right after the restart: all served.
    const statuses: number[] = [];
    let firstServedAfter: number | null = null;
    const restartedAt = Date.now();
    for (let round = 0; round < 30; round++) {
      for (const token of [f8.tokens.clientDev, f8.tokens.clientProd]) {
        const response = await call('GET', '/api/client/features', token, nat);
        statuses.push(response.status);
        if (response.status === 200) firstServedAfter ??= Date.now() - restartedAt;
        await response.body?.cancel();
      }
      // Each round the isolate's 5 s token entries are gone, as after that long.
      if (round % 5 === 4) forgetEdgeCaches();
    }
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(firstServedAfter).not.toBeNull();
    const during = await json<{ features: Feature[] }>(await call('GET', '/api/client/features', f8.tokens.clientDev, nat));
    expect(byName(during.features)).toEqual(byName(before.features));
    // The frontend token is answered from the backend scope the store re-armed.
    expect(await json(await call('GET', '/api/frontend?userId=7', f8.tokens.frontendDev, nat))).toEqual(frontendBefore);
    // A token never seen valid is still not served blind.
    expect((await call('GET', '/api/client/features', f8.tokens.unknown, nat)).status).toBe(503);

    const ready = await call('GET', '/internal-backstage/ready', null);
    expect(ready.status).toBe(200);
    const health = await json(await call('GET', '/internal-backstage/health', null));
    expect(health.status).toBe('OK');
    expect(health.upstream.stale).toBe(true);
    expect(health.upstream.lastError).toMatch(/upstream/);
    expect(Date.parse(health.upstream.staleSince)).toBeLessThanOrEqual(restartedAt);
    expect(health.tokens.offline).toBeGreaterThan(0);

    await upstreamState({ down: false, phase: 'seeded' });
    await runDurableObjectAlarm(syncObject(workerEnv));
    const back: number[] = [];
    for (let round = 0; round < 20; round++) {
      for (const token of [f8.tokens.clientDev, f8.tokens.clientProd, f8.tokens.frontendDev]) {
        const response = await call('GET', token === f8.tokens.frontendDev ? '/api/frontend' : '/api/client/features', token, nat);
        back.push(response.status);
        await response.body?.cancel();
      }
      forgetEdgeCaches();
    }
    expect(back.filter((status) => status !== 200)).toEqual([]);
    const after = await json(await call('GET', '/internal-backstage/health', null));
    expect(after.upstream.stale).toBe(false);
    expect(after.tokens.offline).toBe(0);
  });

  it('stores token secrets only as hashes', async () => {
    const stored = await runInSync();
    expect(stored.length).toBeGreaterThan(0);
    for (const [key, value] of stored) {
      expect(key).toMatch(/^token:[0-9a-f]{64}$/);
      expect(JSON.stringify(value)).not.toContain(f8.tokens.clientDev.split('.')[1]!);
      expect(typeof (value as { confirmedAt: number }).confirmedAt).toBe('number');
    }
  });
});

async function runInSync(): Promise<[string, unknown][]> {
  const { runInDurableObject } = await import('cloudflare:test');
  return runInDurableObject(syncObject(workerEnv), async (_instance, state) => [...(await state.storage.list({ prefix: 'token:' }))]);
}

describe('Edge mode: rate limits never refuse a valid key', () => {
  it('answers valid keys polling from one address every time their cache entry expires, 0 × 429', async () => {
    const nat = { headers: { 'cf-connecting-ip': '198.51.100.20' } };
    const valid = [f8.tokens.clientDev, f8.tokens.clientProd];
    const statuses: number[] = [];
    // 60 polls of each key, each after its isolate entry expired (the limit is 60 a minute per
    // address: counting valid keys, as before, would refuse the second half).
    for (let poll = 0; poll < 60; poll++) {
      forgetEdgeCaches();
      for (const token of valid) {
        const response = await call('GET', '/api/client/features', token, nat);
        statuses.push(response.status);
        await response.body?.cancel();
      }
      const frontend = await call('GET', '/api/frontend', f8.tokens.frontendDev, nat);
      statuses.push(frontend.status);
      await frontend.body?.cancel();
    }
    expect(statuses.length).toBe(180);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  });

  it('answers an admin key on the SDK routes with Unleash’s 403 and its bare message', async () => {
    // Recorded: 8.2.0's /edge/validate lists its admin key with `type: "admin"`; its own client
    // and frontend APIs answer that key 403 `{"message":"invalid token: expected a different token type for this endpoint"}`.
    const admin = f8.exchanges.find((e) => e.name === 'validate' && e.request.phase === 'admin')!.request.tokens![0]!;
    await upstreamState({ validatePhase: 'admin' });
    try {
      for (const path of ['/api/client/features', '/api/frontend', '/api/client/delta']) {
        const response = await call('GET', path, admin);
        expect(response.status, await response.clone().text()).toBe(403);
        expect(await response.json()).toEqual({ message: 'invalid token: expected a different token type for this endpoint' });
      }
      // Never handed on to an Edge chained behind this one.
      expect(await json(await call('POST', '/edge/validate', admin, { body: { tokens: [admin] } }))).toEqual({ tokens: [] });
    } finally {
      await upstreamState({ validatePhase: 'seeded' });
    }
  });
  it('counts refused keys per address: over the limit they get 429, while that address’s valid keys stay served', async () => {
    const nat = { headers: { 'cf-connecting-ip': '198.51.100.99' } };
    // The limiter counts in windows aligned to the clock minute: stay inside one.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 20_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
    const refused: number[] = [];
    for (let i = 0; i < 70; i++) {
      const response = await call('GET', '/api/client/features', `*:development.made-up-${i}`, nat);
      refused.push(response.status);
      await response.body?.cancel();
    }
    // 401 (or 503 should more than 100 new keys a second beyond the first 10 reach the sync object).
    expect(refused.slice(0, 60).filter((status) => status !== 401 && status !== 503)).toEqual([]);
    expect(refused.slice(60).every((status) => status === 429)).toBe(true);
    expect((await call('GET', '/api/client/features', f8.tokens.clientDev, nat)).status).toBe(200);
    // Another address is not affected.
    expect([401, 503]).toContain((await call('GET', '/api/client/features', '*:development.made-up-x', {})).status);
  });
});

describe('Edge mode: the backstage as Unleash Edge', () => {
  it('serves Prometheus metrics: requests per route and status with latency, upstream calls and failures, snapshot age, tokens', async () => {
    expect((await call('GET', '/api/client/features', f8.tokens.clientDev)).status).toBe(200);
    const response = await call('GET', '/internal-backstage/metrics', null);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toMatch(
      /^http_server_duration_milliseconds_count\{http_request_method="GET",http_route="\/api\/client\/features",http_response_status_code="200"\} [1-9]\d*$/m,
    );
    expect(text).toMatch(/^http_server_duration_milliseconds_bucket\{.*le="\+Inf"\} \d+$/m);
    expect(text).toMatch(/^upstream_requests_total\{kind="features"\} [1-9]\d*$/m);
    expect(text).toMatch(/^upstream_failures_total\{kind="validate"\} \d+$/m);
    expect(text).toMatch(/^features_snapshot_age_seconds\{environment="development",projects="default"\} \d+$/m);
    expect(text).toMatch(/^token_cache_valid_tokens\{source="upstream"\} [1-9]\d*$/m);
    // Route patterns, never paths: a flag name never becomes a label.
    expect((await call('GET', '/api/client/features/some-flag-name', f8.tokens.clientDev)).status).toBe(404);
    expect(await (await call('GET', '/internal-backstage/metrics', null)).text()).not.toContain('some-flag-name');
  });

  it('serves the flag definitions per scope at /internal-backstage/features, as the upstream sent them, to the webhook secret holder only', async () => {
    expect((await call('GET', '/internal-backstage/features', null)).status).toBe(401);
    const held = await json<Record<string, { features: Feature[] }>>(
      await call('GET', '/internal-backstage/features', 'edge-test-webhook-secret'),
    );
    const recorded = f8.exchanges.find(
      (e) =>
        e.name === 'features' && e.request.phase === 'seeded' && e.request.token === f8.tokens.clientDev && e.request.ifNoneMatch === null,
    )!.response.body as { features: Feature[] };
    expect(byName(held['development:default']!.features)).toEqual(byName(recorded.features));
  });
});
