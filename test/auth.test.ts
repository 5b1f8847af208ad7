import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import worker from '../src/index';
import { toErrorResponse } from '../src/http/errors';
import { ADMIN_TOKEN, bodyOf, call, createToken, expectError } from './support/http';
import { sha256Hex } from './support/crypto';

describe('authentication of /api/admin routes', () => {
  it("401 AuthenticationRequired without an Authorization header, in Unleash's shape", async () => {
    const response = await call('GET', '/api/admin/api-tokens', { token: null });
    const body = await expectError(response, 401, 'AuthenticationRequired');
    const message =
      'You must log in to use Unleash. Your request had no authorization header, so we could not authorize you. Try logging in at /auth/simple/login';
    expect(body).toEqual({
      id: body.id,
      name: 'AuthenticationRequired',
      message,
      details: [{ message }],
      path: '/auth/simple/login',
      type: 'password',
      defaultHidden: false,
    });
  });

  it('401 for an empty header, an unknown key and an over-long key', async () => {
    await expectError(await call('GET', '/api/admin/api-tokens', { token: '' }), 401, 'AuthenticationRequired');
    const unknown = await expectError(
      await call('GET', '/api/admin/api-tokens', { token: '*:*.not-a-key' }),
      401,
      'AuthenticationRequired',
    );
    expect(unknown.message).toBe('You must log in to use Unleash.');
    await expectError(await call('GET', '/api/admin/api-tokens', { token: 'x'.repeat(5000) }), 401, 'AuthenticationRequired');
  });

  it('accepts the key raw or as Bearer <key>, any case', async () => {
    expect((await call('GET', '/api/admin/api-tokens', { token: ADMIN_TOKEN })).status).toBe(200);
    expect((await call('GET', '/api/admin/api-tokens', { token: `Bearer ${ADMIN_TOKEN}` })).status).toBe(200);
    expect((await call('GET', '/api/admin/api-tokens', { token: `bearer  ${ADMIN_TOKEN}` })).status).toBe(200);
  });

  it('accepts every INIT_ADMIN_API_TOKENS secret (comma-separated, trimmed)', async () => {
    expect((await call('GET', '/api/admin/api-tokens', { token: '*:*.second-admin-token' })).status).toBe(200);
  });

  it('403 NoAccessError for client and frontend keys', async () => {
    for (const type of ['client', 'frontend']) {
      const key = await createToken({ tokenName: `sdk-${type}`, type });
      const body = await expectError(await call('GET', '/api/admin/api-tokens', { token: key }), 403, 'NoAccessError');
      expect(body.message).toBe('invalid token: expected a different token type for this endpoint');
    }
  });

  it('an admin token created through the API may call admin routes', async () => {
    const key = await createToken({ tokenName: 'made-admin', type: 'admin' });
    expect((await call('GET', '/api/admin/api-tokens', { token: key })).status).toBe(200);
  });

  it('401 for an expired key', async () => {
    const key = await createToken({ tokenName: 'expired', type: 'admin', expiresAt: '2020-01-01T00:00:00Z' });
    await expectError(await call('GET', '/api/admin/api-tokens', { token: key }), 401, 'AuthenticationRequired');
  });

  it('a key expiring in a moment works until then and not after', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const expiresAt = new Date(Date.now() + 5 * 60_000).toISOString();
      const key = await createToken({ tokenName: 'soon-expired', type: 'admin', expiresAt });
      expect((await call('GET', '/api/admin/api-tokens', { token: key })).status).toBe(200);
      vi.setSystemTime(Date.now() + 6 * 60_000);
      await expectError(await call('GET', '/api/admin/api-tokens', { token: key }), 401, 'AuthenticationRequired');
    } finally {
      vi.useRealTimers();
    }
  });

  it('falls back to D1 when KV has no entry, and refills KV', async () => {
    const key = await createToken({ tokenName: 'kv-miss', type: 'admin' });
    const kvKey = `apikey:${await sha256Hex(key)}`;
    expect(await env.TOKENS.get(kvKey)).not.toBeNull();
    await env.TOKENS.delete(kvKey);

    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request('http://localhost/api/admin/api-tokens', { headers: { authorization: key } }),
      env,
      ctx,
    );
    expect(response.status).toBe(200);
    await waitOnExecutionContext(ctx);
    const refilled = await env.TOKENS.get<Record<string, unknown>>(kvKey, 'json');
    expect(refilled).toMatchObject({ type: 'admin', name: 'kv-miss', projects: ['*'], environment: '*', expiresAt: null });
  });

  it('records when a token was last seen', async () => {
    const created = await call('POST', '/api/admin/api-tokens', { body: { tokenName: 'seen', type: 'admin' } });
    const { secret } = await bodyOf(created);
    const ctx = createExecutionContext();
    await worker.fetch(new Request('http://localhost/api/admin/api-tokens', { headers: { authorization: secret } }), env, ctx);
    await waitOnExecutionContext(ctx);
    const token = await bodyOf(await call('GET', created.headers.get('location')!));
    expect(Date.parse(token.seenAt)).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('unknown paths', () => {
  it('under /api/admin: 401 without a key, 403 for an SDK key, 404 NotFoundError with an admin key', async () => {
    await expectError(await call('GET', '/api/admin/nope', { token: null }), 401, 'AuthenticationRequired');
    const key = await createToken({ tokenName: 'path-probe', type: 'client' });
    await expectError(await call('GET', '/api/admin/nope', { token: key }), 403, 'NoAccessError');
    const body = await expectError(await call('GET', '/api/admin/nope'), 404, 'NotFoundError');
    expect(body.message).toBe('The path you were looking for (/api/admin/nope) is not available.');
  });

  it('elsewhere: 404 NotFoundError', async () => {
    await expectError(await call('GET', '/api/nothing-here', { token: null }), 404, 'NotFoundError');
  });

  it('collapses repeated slashes and answers HEAD like GET without a body', async () => {
    expect((await call('GET', '//api//admin/api-tokens')).status).toBe(200);
    const head = await call('HEAD', '/api/admin/api-tokens');
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });
});

describe('unexpected failures', () => {
  it('answer 500 with a generic body: no stack, no SQL', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const response = toErrorResponse(new Error('D1_ERROR: no such column: secret_hash in SELECT * FROM api_tokens'));
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain('SELECT');
    expect(text).not.toContain('D1_ERROR');
    expect(JSON.parse(text)).toMatchObject({ name: 'UnknownError', details: [{ message: 'Unexpected error occurred.' }] });
    expect(spy).toHaveBeenCalledOnce();
    spy.mockRestore();
  });
});
