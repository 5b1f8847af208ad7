/**
 * Edge mode in front of a replay of Unleash 6.10.1 (test/support/edge-upstream.ts): the same
 * engine answers an older upstream's flags as that upstream answered them.
 */
import { env, exports } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { forgetEdgeCaches, syncObject } from '../../src/edge/scope';
import type { Env } from '../../src/env';
import type { Fixture } from '../support/edge-upstream';

const workerEnv = env as unknown as Env & { UPSTREAM: Fetcher };
/** The recorder called the upstream from loopback: remoteAddress strategies saw this address. */
const RECORDER_ADDRESS = { headers: { 'cf-connecting-ip': '127.0.0.1' } };

async function upstreamState(state: Record<string, unknown>): Promise<void> {
  await workerEnv.UPSTREAM.fetch('http://control/state', { method: 'POST', body: JSON.stringify(state) });
}
async function fixture(version: '6' | '8'): Promise<Fixture> {
  return (await workerEnv.UPSTREAM.fetch(`http://control/fixture?version=${version}`)).json();
}

function call(method: string, path: string, token: string | null, options: { body?: unknown; headers?: Record<string, string> } = {}) {
  const headers = new Headers(options.headers);
  if (token !== null) headers.set('authorization', token);
  if (!headers.has('cf-connecting-ip'))
    headers.set('cf-connecting-ip', `10.0.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`);
  if (options.body !== undefined) headers.set('content-type', 'application/json');
  return exports.default.fetch(
    new Request(`http://edge.local${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    }),
  );
}

async function json<T = any>(response: Response): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`expected JSON, got ${response.status}: ${text.slice(0, 200)}`);
  }
}

type Feature = { name: string; enabled: boolean; strategies: unknown[] };
const recordedFeatures = (f: Fixture, phase: string, token: string) =>
  f.exchanges.find(
    (e) => e.name === 'features' && e.request.phase === phase && e.request.token === token && e.request.ifNoneMatch === null,
  )!.response.body as { features: Feature[]; segments: unknown[] };

const byName = <T extends { name: string }>(list: T[]) => [...list].sort((a, b) => a.name.localeCompare(b.name));

let f6: Fixture;
beforeAll(async () => {
  await workerEnv.UPSTREAM.fetch('http://control/reset', { method: 'POST' });
  // The sync object outlives a test file: each file starts it as after an eviction.
  await syncObject(workerEnv).forgetMemory();
  forgetEdgeCaches();
  f6 = await fixture('6');
});

describe('Edge mode in front of Unleash 6.10.1 (recorded)', () => {
  it('serves a 6.10.1 scope and answers its frontend API as 6.10.1 did', async () => {
    await upstreamState({ fixture: '6' });
    const first = await call('GET', '/api/client/features', f6.tokens.clientDev, { headers: { 'unleash-client-spec': '5.2.0' } });
    expect(first.status).toBe(200);
    const body = await json<{ features: Feature[] }>(first);
    expect(byName(body.features)).toEqual(byName(recordedFeatures(f6, 'seeded', f6.tokens.clientDev).features));
    for (const exchange of f6.exchanges.filter((e) => e.name === 'frontend')) {
      const ours = await json<{ toggles: { name: string }[] }>(
        await call('GET', `/api/frontend?${exchange.request.query}`, f6.tokens.frontendDev, RECORDER_ADDRESS),
      );
      const theirs = (exchange.response.body as { toggles: { name: string }[] }).toggles;
      const differ = [...ours.toggles, ...theirs].filter(
        (t) => JSON.stringify(ours.toggles.find((o) => o.name === t.name)) !== JSON.stringify(theirs.find((o) => o.name === t.name)),
      );
      expect(differ, exchange.request.query).toEqual([]);
      expect(byName(ours.toggles), exchange.request.query).toEqual(
        byName((exchange.response.body as { toggles: { name: string }[] }).toggles),
      );
    }
  });
});
