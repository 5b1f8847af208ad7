/**
 * Edge mode in front of an Unleash 8.2.0 that issues v2 tokens (`secureTokenStorage` on;
 * recorded in test/fixtures/edge-upstream-8-v2.json by scripts/record-upstream.mjs): a v2 key
 * is never refused here as malformed but goes to the upstream like any other, and what Edge
 * forwards to `/api/client/metrics/bulk` keeps 8.x's fields (`sdkFlavor`, `seenTokens`).
 */

import { beforeAll, describe, expect, it } from 'vitest';
import { syncObject } from '../../src/edge/scope';
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

let v2: Fixture;
beforeAll(async () => {
  await resetEdge();
  await upstreamState({ fixture: '8v2' });
  v2 = await fixture('8v2');
});

const V2_FORM = /^[^:]+:[^.]+\.v2_[A-Za-z0-9_-]{22}_[A-Za-z0-9_-]{43}$/;

describe('Edge mode in front of Unleash 8.2.0 issuing v2 tokens (recorded)', () => {
  it('the recording holds v2 tokens only', () => {
    for (const token of Object.values(v2.tokens)) expect(token).toMatch(V2_FORM);
  });

  it('passes a v2 backend key to the upstream and serves its scope as the upstream sent it', async () => {
    const before = (await upstreamReceived()).length;
    const response = await call('GET', '/api/client/features', v2.tokens.clientDev, { headers: { 'unleash-client-spec': '5.2.0' } });
    expect(response.status).toBe(200);
    const body = await json<{ features: Feature[] }>(response);
    expect(byName(body.features)).toEqual(byName(recordedFeatures(v2, 'seeded', v2.tokens.clientDev).features));
    const asked = (await upstreamReceived()).slice(before);
    const validation = asked.find((r) => r.path === '/edge/validate')!;
    expect(JSON.parse(validation.body).tokens).toContain(v2.tokens.clientDev);
    // The upstream's flags were fetched with the v2 key itself.
    expect(asked.filter((r) => r.path === '/api/client/features').map((r) => r.token)).toContain(v2.tokens.clientDev);
  });

  it('answers a v2 frontend key as the upstream did', async () => {
    for (const exchange of v2.exchanges.filter((e) => e.name === 'frontend').slice(0, 10)) {
      const ours = await json<{ toggles: { name: string }[] }>(
        await call('GET', `/api/frontend?${exchange.request.query}`, v2.tokens.frontendDev, RECORDER_ADDRESS),
      );
      expect(byName(ours.toggles), exchange.request.query).toEqual(
        byName((exchange.response.body as { toggles: { name: string }[] }).toggles),
      );
    }
  });

  it('refuses (401) a v2 key the upstream does not know, after asking it, not as malformed', async () => {
    const before = (await upstreamReceived()).length;
    const response = await call('GET', '/api/client/features', v2.tokens.unknown);
    expect(response.status).toBe(401);
    const validation = (await upstreamReceived()).slice(before).find((r) => r.path === '/edge/validate');
    expect(JSON.parse(validation!.body).tokens).toEqual([v2.tokens.unknown]);
  });

  it('forwards bulk metrics with the SDK fields intact and the keys its SDKs used as seenTokens', async () => {
    await syncObject(workerEnv).flushMetrics(true);
    const now = new Date().toISOString();
    const application = {
      appName: 'edge-v2-app',
      instanceId: 'edge-v2-i1',
      environment: 'development',
      sdkVersion: 'unleash-client-node:6.1.0',
      sdkFlavor: 'unleash-openfeature-node-provider',
      sdkFlavorVersion: '1.0.1',
      started: now,
      interval: 10,
    };
    const downstream = await call('POST', '/api/client/metrics/bulk', v2.tokens.clientDev, {
      body: {
        applications: [application],
        metrics: [{ featureName: 'edge-rec-rollout', appName: 'edge-v2-app', environment: 'development', timestamp: now, yes: 2, no: 1 }],
        seenTokens: [v2.tokens.clientProd],
      },
    });
    expect(downstream.status).toBe(202);
    // An SDK using the frontend key here: it is seen too.
    expect((await call('GET', '/api/frontend', v2.tokens.frontendDev)).status).toBe(200);

    const before = (await upstreamReceived()).length;
    await syncObject(workerEnv).flushMetrics(true);
    const posts = (await upstreamReceived()).slice(before).filter((r) => r.path === '/api/client/metrics/bulk');
    expect(posts).toHaveLength(1);
    expect(posts[0]!.token).toBe(v2.tokens.clientDev);
    const sent = JSON.parse(posts[0]!.body);
    expect(Object.keys(sent)).toEqual(['applications', 'metrics', 'seenTokens']);
    expect(sent.applications).toEqual([{ ...application, environment: 'development' }]);
    expect(sent.metrics).toEqual([expect.objectContaining({ featureName: 'edge-rec-rollout', yes: 2, no: 1 })]);
    expect([...sent.seenTokens].sort()).toEqual([v2.tokens.clientDev, v2.tokens.clientProd, v2.tokens.frontendDev].sort());

    // Sent once: the next forward has nothing to send.
    await syncObject(workerEnv).flushMetrics(true);
    expect((await upstreamReceived()).slice(before).filter((r) => r.path === '/api/client/metrics/bulk')).toHaveLength(1);
  });

  it('forwards keys seen while no metrics came, alone, and refuses a malformed bulk post (400) with nothing kept', async () => {
    await syncObject(workerEnv).flushMetrics(true);
    const bad = await call('POST', '/api/client/metrics/bulk', v2.tokens.clientDev, {
      body: { applications: [], metrics: [], seenTokens: 'not-a-list' },
    });
    expect(bad.status).toBe(400);
    expect((await call('GET', '/api/client/features', v2.tokens.clientDev)).status).toBe(200);
    const before = (await upstreamReceived()).length;
    await syncObject(workerEnv).flushMetrics(true);
    const posts = (await upstreamReceived()).slice(before).filter((r) => r.path === '/api/client/metrics/bulk');
    expect(posts.map((post) => JSON.parse(post.body))).toEqual([{ applications: [], metrics: [], seenTokens: [v2.tokens.clientDev] }]);
  });
});
