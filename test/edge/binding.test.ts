/**
 * The binding (src/binding/entrypoint.ts) in Edge mode: `exports.UnleashFlags` is the loopback
 * service binding to the Worker's entrypoint, here the Worker of wrangler.toml's [env.edge] in
 * front of the recorded Unleash 8.2.0 (test/support/edge-upstream.ts). Its answers are held to
 * the Edge's own `POST /api/frontend` for the same key and context, and to the upstream's.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { UnleashContext, UnleashToggles } from '../../src/binding/types';
import { forgetEdgeCaches, syncObject } from '../../src/edge/scope';
import { flags, refusal, refusedWith } from '../support/binding';
import { call, fixture, json, RECORDER_ADDRESS, resetEdge, upstreamReceived, workerEnv } from '../support/edge-client';
import type { Fixture } from '../support/edge-upstream';

async function edgeFrontend(token: string, context: UnleashContext): Promise<UnleashToggles> {
  const response = await call('POST', '/api/frontend', token, { body: { context }, ...RECORDER_ADDRESS });
  expect(response.status).toBe(200);
  return json<UnleashToggles>(response);
}

const names = (toggles: { name: string }[]) => toggles.map((toggle) => toggle.name).sort();

let f8: Fixture;
beforeAll(async () => {
  await resetEdge();
  f8 = await fixture('8');
});

describe('the binding in Edge mode', () => {
  it('answers a backend key from its own scope only: production sees production’s flags', async () => {
    // First, as on HTTP: a frontend key is answered from a backend scope this Edge has seen.
    expect(await flags().isEnabled(f8.tokens.clientDev, 'edge-rec-variants', { userId: 'u1' })).toBe(true);
    expect(await flags().isEnabled(f8.tokens.clientProd, 'edge-rec-variants', { userId: 'u1' })).toBe(false);
    const evaluation = await flags().evaluate(f8.tokens.clientDev, 'edge-rec-nope', {});
    expect(evaluation).toMatchObject({ enabled: false, found: false });
  });

  it('answers getAll exactly as the Edge’s POST /api/frontend, and as the upstream did, for the recorded contexts', async () => {
    const recorded = f8.exchanges.filter((e) => e.name === 'frontend');
    expect(recorded.length).toBeGreaterThanOrEqual(50);
    const scoped = flags().withKey(f8.tokens.frontendDev);
    let toggles = 0;
    for (const exchange of recorded) {
      const context: UnleashContext = {
        ...Object.fromEntries(new URLSearchParams(exchange.request.query)),
        remoteAddress: RECORDER_ADDRESS.headers['cf-connecting-ip'],
      };
      // Random rollouts: one number held for both answers (the binding runs in this isolate).
      vi.spyOn(Math, 'random').mockReturnValue(0.5);
      const expected = await edgeFrontend(f8.tokens.frontendDev, context);
      const actual = await scoped.getAll(context);
      const keyFirst = await flags().getAll(f8.tokens.frontendDev, context);
      vi.restoreAllMocks();
      expect(JSON.stringify(actual), exchange.request.query).toBe(JSON.stringify(expected));
      expect(JSON.stringify(keyFirst)).toBe(JSON.stringify(expected));
      expect(names(actual.toggles), exchange.request.query).toEqual(
        names((exchange.response.body as { toggles: { name: string }[] }).toggles),
      );
      toggles += actual.toggles.length;
    }
    // The recorded contexts turn flags on: the comparison is not of empty lists.
    expect(toggles).toBeGreaterThan(0);
  });

  it('refuses an unknown key, asking the upstream once, and a malformed key without asking it', async () => {
    const validations = async () => (await upstreamReceived()).filter((r) => r.path === '/edge/validate').length;
    const before = await validations();
    expect(await refusal(flags().withKey('not-a-token'))).toMatch(/^UnleashBindingUnauthorized/);
    expect(await validations()).toBe(before);
    expect(await refusal(flags().withKey(f8.tokens.unknown))).toMatch(/^UnleashBindingUnauthorized/);
    expect(await refusal(flags().getAll(f8.tokens.unknown, {}))).toMatch(/^UnleashBindingUnauthorized/);
    expect(await refusal(flags().isEnabled(f8.tokens.unknown, 'edge-rec-users', {}))).toMatch(/^UnleashBindingUnauthorized/);
    // Remembered as unknown (in the sync object too): one question upstream for all of them.
    forgetEdgeCaches();
    expect(await refusal(flags().getAll(f8.tokens.unknown, {}))).toMatch(/^UnleashBindingUnauthorized/);
    expect(await validations()).toBe(before + 1);
    // The kind crosses RPC as the error's own `kind` (its class does not).
    for (const key of ['not-a-token', f8.tokens.unknown])
      expect(await refusedWith(flags().isEnabled(key, 'edge-rec-users', {}))).toEqual({
        name: 'Error',
        kind: 'unauthorized',
        message: 'UnleashBindingUnauthorized: the key is unknown, revoked or expired',
      });
  });

  it('refuses a frontend key no backend scope covers yet with the kind noScope', async () => {
    await resetEdge();
    const refused = await refusedWith(flags().getAll(f8.tokens.frontendDev, {}));
    expect(refused).toMatchObject({
      name: 'Error',
      kind: 'noScope',
      message: expect.stringMatching(/^UnleashBindingNoScope: No backend token/),
    });
    // Once a backend key of that scope is seen, the same key is answered.
    expect(await flags().isEnabled(f8.tokens.clientDev, 'edge-rec-variants', { userId: 'u1' })).toBe(true);
    expect(await flags().getAll(f8.tokens.frontendDev, {})).toMatchObject({ toggles: expect.any(Array) });
  });

  it('forwards its usage upstream with the Edge’s metrics, to /api/client/metrics/bulk', async () => {
    const appName = 'edge-binding-app';
    for (let i = 0; i < 3; i++) await flags().isEnabled(f8.tokens.clientDev, 'edge-rec-variants', { appName, userId: `u${i}` });
    await flags().isEnabled(f8.tokens.clientDev, 'edge-rec-off', { appName });
    const before = (await upstreamReceived()).length;
    // The usage is handed on after each call returns (waitUntil): wait for it to be merged.
    const sent = await vi.waitFor(async () => {
      await syncObject(workerEnv).flushMetrics(true);
      const posts = (await upstreamReceived()).slice(before).filter((r) => r.path === '/api/client/metrics/bulk');
      const ours = posts.flatMap((post) =>
        (JSON.parse(post.body) as { metrics: { appName: string }[] }).metrics
          .filter((row) => row.appName === appName)
          .map((row) => ({ ...row, sentWith: post.token })),
      );
      expect(ours).toHaveLength(2);
      return ours;
    });
    expect(sent).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          featureName: 'edge-rec-variants',
          appName,
          environment: 'development',
          yes: 3,
          no: 0,
          sentWith: f8.tokens.clientDev,
        }),
        expect.objectContaining({
          featureName: 'edge-rec-off',
          appName,
          environment: 'development',
          yes: 0,
          no: 1,
          sentWith: f8.tokens.clientDev,
        }),
      ]),
    );
  });
});
