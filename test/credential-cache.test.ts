/**
 * The credential cache (isolate -> KV -> D1) under revocation races, far-future expiries and
 * floods of unknown keys. Each test here failed on the cache as it was before these fixes.
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { findRecord, forgetInIsolate, isolateCacheLimits, KV_TTL_SECONDS } from '../src/auth/token-records';
import worker from '../src/index';
import { ADMIN_TOKEN, bodyOf, call, expectError } from './support/http';
import { sha256Hex } from './support/crypto';
import { captureLogs } from './support/logs';

async function createClientToken(tokenName: string, expiresAt?: string) {
  const response = await call('POST', '/api/admin/api-tokens', {
    body: { tokenName, type: 'client', environment: 'development', ...(expiresAt ? { expiresAt } : {}) },
  });
  expect(response.status).toBe(201);
  const { secret } = await bodyOf<{ secret: string }>(response);
  return { secret, id: response.headers.get('location')!.split('/').pop()! };
}

/** KV's own view of an entry's expiry (seconds since the epoch), from a listing. */
async function kvExpirationOf(key: string): Promise<number | undefined> {
  const listing = await env.TOKENS.list({ prefix: key });
  return listing.keys.find((entry) => entry.name === key)?.expiration;
}

describe('revocation wins every race', () => {
  it('a PUT of a new expiry racing the DELETE of the same token never brings it back (50 rounds)', async () => {
    for (let round = 0; round < 50; round++) {
      const { secret, id } = await createClientToken(`race-${round}`);
      expect((await call('GET', '/api/client/features', { token: secret })).status).toBe(200);
      const [put, del] = await Promise.all([
        call('PUT', `/api/admin/api-tokens/${id}`, { body: { expiresAt: '2031-01-01T00:00:00Z' } }),
        call('DELETE', `/api/admin/api-tokens/${id}`),
      ]);
      expect([200, 404]).toContain(put.status);
      expect(del.status).toBe(200);
      const hash = await sha256Hex(secret);
      // What another isolate would see: nothing in KV, and D1 says unknown.
      expect(await env.TOKENS.get(`apikey:${hash}`), `round ${round}: KV entry resurrected`).toBeNull();
      forgetInIsolate('apikey', hash);
      await expectError(await call('GET', '/api/client/features', { token: secret }), 401, 'AuthenticationRequired');
    }
  });

  it('a KV refill racing a revoke is undone', async () => {
    for (let round = 0; round < 20; round++) {
      const { secret, id } = await createClientToken(`refill-race-${round}`);
      const hash = await sha256Hex(secret);
      await env.TOKENS.delete(`apikey:${hash}`);
      forgetInIsolate('apikey', hash);
      // The lookup misses KV, reads D1 and refills KV in the background while the token is revoked.
      const ctx = createExecutionContext();
      const lookup = findRecord(env, ctx, 'apikey', hash);
      const revoke = call('DELETE', `/api/admin/api-tokens/${id}`);
      await Promise.all([lookup, revoke]);
      await waitOnExecutionContext(ctx);
      expect(await env.TOKENS.get(`apikey:${hash}`), `round ${round}`).toBeNull();
    }
  });

  it('every KV entry expires within the bound, even for a token that never expires', async () => {
    const { secret } = await createClientToken('no-expiry');
    const expiration = await kvExpirationOf(`apikey:${await sha256Hex(secret)}`);
    expect(expiration).toBeDefined();
    expect(expiration!).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + KV_TTL_SECONDS + 1);
  });
});

describe('a revoke that cannot empty KV', () => {
  it('answers 500 instead of a silent 200 (the key may still pass elsewhere until KV drops it)', async () => {
    const { secret, id } = await createClientToken('kv-down');
    // The KV binding (not our code) refuses deletes, as during a KV outage.
    const failingKv = new Proxy(env.TOKENS, {
      get(target, property) {
        if (property === 'delete')
          return async () => {
            throw new Error('KV unavailable');
          };
        const value = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const logs = captureLogs();
    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request(`http://localhost/api/admin/api-tokens/${id}`, { method: 'DELETE', headers: { authorization: ADMIN_TOKEN } }),
      { ...env, TOKENS: failingKv },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    await expectError(response, 500, 'UnknownError');
    logs.restore();
    expect(logs.entries).toEqual([
      expect.objectContaining({
        level: 'error',
        msg: 'unhandled error',
        method: 'DELETE',
        path: expect.stringMatching(/^\/api\/admin\/api-tokens\//),
      }),
    ]);
    expect(logs.text()).toContain('KV delete of a revoked apikey failed 3 times');
    // D1 went first: the key is refused wherever KV does not answer for it.
    expect(await env.DB.prepare('SELECT count(*) AS n FROM api_tokens WHERE id = ?').bind(id).first('n')).toBe(0);
    // Retrying the DELETE by secret empties KV although D1 no longer knows the token.
    const key = `apikey:${await sha256Hex(secret)}`;
    expect(await env.TOKENS.get(key)).not.toBeNull();
    // The token is gone (a delete of an unknown token answers 200, as 6.10.1), and KV no longer answers for it either.
    expect((await call('DELETE', `/api/admin/api-tokens/${encodeURIComponent(secret)}`)).status).toBe(200);
    expect(await env.TOKENS.get(key)).toBeNull();
    forgetInIsolate('apikey', await sha256Hex(secret));
    await expectError(await call('GET', '/api/client/features', { token: secret }), 401, 'AuthenticationRequired');
  });
});

describe('far-future expiries', () => {
  it('a token expiring after 2038-01-19 reaches KV (KV expirations are 32-bit)', async () => {
    const { secret } = await createClientToken('far-future', '2100-01-01T00:00:00Z');
    const key = `apikey:${await sha256Hex(secret)}`;
    expect(await env.TOKENS.get(key)).not.toBeNull();
    expect(await kvExpirationOf(key)).toBeLessThan(2 ** 31);
    expect((await call('GET', '/api/client/features', { token: secret })).status).toBe(200);
  });
});

describe('unknown keys', () => {
  it('a flood of unknown keys cannot push a known key out of the isolate cache', async () => {
    // Small bounds so the flood is quick; the eviction rule is the same at any size.
    const saved = { ...isolateCacheLimits };
    isolateCacheLimits.known = 100;
    isolateCacheLimits.unknown = 100;
    try {
      const { secret } = await createClientToken('flooded');
      const hash = await sha256Hex(secret);
      const ctx = createExecutionContext();
      expect(await findRecord(env, ctx, 'apikey', hash)).not.toBeNull();
      await waitOnExecutionContext(ctx);
      // Take the key out of KV and D1 behind the cache's back: only the isolate still knows it.
      await env.TOKENS.delete(`apikey:${hash}`);
      await env.DB.prepare('DELETE FROM api_tokens WHERE secret_hash = ?').bind(hash).run();

      const flood = Array.from({ length: 250 }, (_, i) => `flood-${i}-${crypto.randomUUID()}`);
      await Promise.all(flood.map(async (key) => findRecord(env, ctx, 'apikey', await sha256Hex(key))));
      expect(await findRecord(env, ctx, 'apikey', hash)).not.toBeNull();
    } finally {
      Object.assign(isolateCacheLimits, saved);
    }
  });
});
