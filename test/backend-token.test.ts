import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { GrantAccess } from '../src/auth/access';
import type { UserPrincipal } from '../src/auth/principal';
import { getDb } from '../src/db/client';
import type { Env } from '../src/env';
import { createToken as createTokenAs } from '../src/identity/api-tokens/service';
import { bodyOf, call, createToken, expectError } from './support/http';

function userWith(...permissions: string[]): UserPrincipal {
  return {
    kind: 'user',
    userId: 77,
    actorName: 'perm-user',
    via: 'personal-token',
    credentialId: 'test',
    access: new GrantAccess(permissions.map((permission) => ({ permission, project: null, environment: null }))),
  };
}

describe('backend tokens (Unleash 7+ name for client tokens)', () => {
  it('are created through POST /api/admin/api-tokens in any case, echoing `backend`', async () => {
    for (const type of ['backend', 'BACKEND', 'Backend']) {
      const response = await call('POST', '/api/admin/api-tokens', { body: { tokenName: `bt-${type}`, type, environment: 'development' } });
      expect(response.status).toBe(201);
      const body = await bodyOf(response);
      expect(body.type).toBe('backend');
      expect(body.secret).toMatch(/^\*:development\.[0-9a-f]{56}$/);
    }
  });

  it('cannot be scoped to all environments, like client tokens', async () => {
    const body = await expectError(
      await call('POST', '/api/admin/api-tokens', { body: { tokenName: 'bt-star', type: 'backend', environment: '*' } }),
      400,
      'ValidationError',
    );
    expect(body.details).toEqual([{ path: '/body/environment', message: 'Client token cannot be scoped to all environments' }]);
  });

  it('are listed and fetched as `client`, as Unleash 8 reports them', async () => {
    const secret = await createToken({ tokenName: 'bt-listed', type: 'backend', environment: 'development' });
    const list = await bodyOf<{ tokens: { tokenName: string; type: string }[] }>(await call('GET', '/api/admin/api-tokens'));
    expect(list.tokens.find((token) => token.tokenName === 'bt-listed')?.type).toBe('client');
    const one = await bodyOf(await call('GET', `/api/admin/api-tokens/${encodeURIComponent(secret)}`));
    expect(one.type).toBe('client');
  });

  it('read the client API exactly like client tokens', async () => {
    const backend = await createToken({ tokenName: 'bt-read', type: 'backend', environment: 'development' });
    const client = await createToken({ tokenName: 'bt-read-client', type: 'client', environment: 'development' });
    const viaBackend = await call('GET', '/api/client/features', { token: backend });
    const viaClient = await call('GET', '/api/client/features', { token: client });
    expect(viaBackend.status).toBe(200);
    expect(viaBackend.headers.get('etag')).toBe(viaClient.headers.get('etag'));
    expect(await viaBackend.text()).toBe(await viaClient.text());
    const register = await call('POST', '/api/client/register', {
      token: backend,
      body: { appName: 'bt-app', instanceId: 'i1', strategies: ['default'], started: new Date().toISOString(), interval: 10 },
    });
    expect(register.status).toBe(202);
    const metrics = await call('POST', '/api/client/metrics', {
      token: backend,
      body: {
        appName: 'bt-app',
        instanceId: 'i1',
        bucket: { start: new Date().toISOString(), stop: new Date().toISOString(), toggles: {} },
      },
    });
    expect(metrics.status).toBe(202);
  });

  it('are refused by the frontend API and the admin API (403)', async () => {
    const backend = await createToken({ tokenName: 'bt-refused', type: 'backend', environment: 'development' });
    await expectError(await call('GET', '/api/frontend', { token: backend }), 403, 'NoAccessError');
    await expectError(await call('GET', '/api/admin/projects', { token: backend }), 403, 'NoAccessError');
  });

  it('are reported by /edge/validate with type `client`, which Edge reads as its backend type', async () => {
    const backend = await createToken({ tokenName: 'bt-edge', type: 'backend', environment: 'development' });
    const response = await call('POST', '/edge/validate', { token: null, body: { tokens: [backend] } });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({ tokens: [{ token: backend, type: 'client', projects: ['*'], environment: 'development' }] });
  });

  it('name backend in the type pattern of the 400 for an unknown type', async () => {
    const body = await expectError(
      await call('POST', '/api/admin/api-tokens', { body: { tokenName: 'bt-bad', type: 'backends' } }),
      400,
      'ValidationError',
    );
    expect(body.details[0]!.message).toContain('^(admin|client|backend|frontend)$');
  });

  it('need the client-key permission to be created, like client keys', async () => {
    const bindings = env as unknown as Env;
    const body = { type: 'backend' as const, tokenName: 'bt-perm', environment: 'development' };
    const created = await createTokenAs(bindings, getDb(bindings), userWith('CREATE_CLIENT_API_TOKEN'), body);
    expect(created.body.type).toBe('backend');
    await expect(createTokenAs(bindings, getDb(bindings), userWith('CREATE_FRONTEND_API_TOKEN'), body)).rejects.toMatchObject({
      message: expect.stringContaining('CREATE_CLIENT_API_TOKEN'),
    });
  });
});
