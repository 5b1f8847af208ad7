/**
 * The binding across isolates, locally: two `wrangler dev` processes on one persisted state
 * (bench/propagation/workers.mjs), the second running a probe Worker beside the service that
 * calls it as another Worker of the account would (bench/binding/probe.mjs: this package's
 * `unleashFlags` helper over a real service binding). A write through the first process
 * reaches the second's binding through the change feed: both revision ticks are a minute long,
 * so nothing else could bring it. And a refusal's kind crosses a real Worker-to-Worker RPC.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPair } from '../bench/propagation/workers.mjs';
import { testWorkerPort } from './support/node-env';

const PORT = testWorkerPort(8795);
const FLAG = 'binding.across';
let pair: Awaited<ReturnType<typeof startPair>>;
let frontendKey: string;

async function adminCall(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${pair.a}${path}`, {
    method,
    headers: { authorization: pair.token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function probe(way: 'binding' | 'http', key: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${pair.b}/probe/${way}?flag=${FLAG}`, { headers: { authorization: key } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  pair = await startPair({
    ports: [PORT, PORT + 1],
    inspectorPorts: [0, 0],
    vars: { SDK_REVISION_CHECK_MS: '60000' },
    probe: true,
  });
  const created = await adminCall('POST', '/api/admin/api-tokens', {
    tokenName: 'binding-across',
    type: 'frontend',
    environment: 'development',
  });
  expect(created.status).toBe(201);
  frontendKey = ((await created.json()) as { secret: string }).secret;
  expect((await adminCall('POST', '/api/admin/projects/default/features', { name: FLAG })).status).toBe(201);
  const strategy = await adminCall('POST', `/api/admin/projects/default/features/${FLAG}/environments/development/strategies`, {
    name: 'default',
  });
  expect(strategy.status).toBe(200);
}, 300_000);

afterAll(async () => {
  await pair?.stop();
});

async function seen(enabled: boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const answer = await probe('binding', frontendKey);
    expect(answer.status).toBe(200);
    if (answer.body.enabled === enabled) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`the binding still answers ${String(!enabled)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the binding across two Worker processes', () => {
  it('a write through one process reaches the binding in the other through the change feed', async () => {
    // The first call reads the flag (off) and makes the second process listen to the feed.
    expect(await probe('binding', frontendKey)).toEqual({ status: 200, body: { enabled: false } });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    for (const on of [true, false, true]) {
      const toggled = await adminCall('POST', `/api/admin/projects/default/features/${FLAG}/environments/development/${on ? 'on' : 'off'}`);
      expect(toggled.status).toBe(200);
      // Far inside the one-minute tick of the second process.
      expect(await seen(on, 5000)).toBeLessThan(5000);
      // HTTP in the same process answers the same.
      expect(await probe('http', frontendKey)).toEqual({ status: 200, body: { enabled: on } });
    }
  }, 60_000);

  it('a refusal reaches the calling Worker with its kind, rethrown by the helper as UnleashBindingError', async () => {
    expect(await probe('binding', 'default:development.not-a-key')).toEqual({
      status: 403,
      body: {
        kind: 'unauthorized',
        name: 'UnleashBindingError',
        message: 'UnleashBindingUnauthorized: the key is unknown, revoked or expired',
      },
    });
    expect(await probe('binding', pair.token)).toEqual({
      status: 403,
      body: {
        kind: 'forbidden',
        name: 'UnleashBindingError',
        message: 'UnleashBindingForbidden: admin keys cannot read flags through the binding',
      },
    });
  });
});
