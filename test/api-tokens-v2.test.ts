/**
 * Unleash 8's v2 tokens (`<scope>:<environment>.v2_<selector>_<secret>`), brought over through
 * the import: they work wherever 8.x accepts them (client, frontend and admin API,
 * `/edge/validate`) and admin URLs name them by selector as 8.x does. The shape of the secrets
 * is the one the real 8.2.0 issues under `secureTokenStorage` (see docs/decisions.md).
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createFeature } from './support/admin';
import { tokenFootprint } from './support/api-tokens';
import { sha256Hex } from './support/crypto';
import { lastEvent } from './support/db';
import { bodyOf, call, expectError } from './support/http';
import { unique } from './support/names';

function base64url(bytes: number): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(bytes))))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

/** A v2 secret as Unleash 8.2.0 makes one: 16 random bytes of selector, 32 of secret, base64url. */
function v2Secret(scope: string, environment: string, selector = base64url(16)): string {
  return `${scope}:${environment}.v2_${selector}_${base64url(32)}`;
}

function selectorOf(secret: string): string {
  return /\.v2_(.{22})_/.exec(secret)![1]!;
}

async function importV2(secret: string, body: Record<string, unknown>) {
  return call('POST', '/api/admin/api-tokens/import', { body: { secret, tokenName: unique('v2'), ...body } });
}

beforeAll(async () => {
  await createFeature('v2.flag');
  await adminOk('POST', '/api/admin/projects/default/features/v2.flag/environments/development/on');
});

describe('v2 tokens (Unleash 8.1+)', () => {
  it('an imported v2 client token serves the client API; only its hash and public part are kept', async () => {
    const secret = v2Secret('default', 'development');
    const created = await importV2(secret, { type: 'client', environment: 'development', projects: ['default'] });
    expect(created.status).toBe(201);
    expect((await bodyOf(created)).secret).toBe(secret);

    const response = await call('GET', '/api/client/features', { token: secret });
    expect(response.status).toBe(200);
    const features = (await bodyOf<{ features: { name: string; enabled: boolean }[] }>(response)).features;
    expect(features.find((feature) => feature.name === 'v2.flag')).toMatchObject({ enabled: true });
    expect((await call('GET', '/api/client/features', { token: `Bearer ${secret}` })).status).toBe(200);

    const secretPart = secret.slice(secret.lastIndexOf('_') + 1);
    const stored = await env.DB.prepare('SELECT * FROM api_tokens WHERE secret_hash = ?')
      .bind(await sha256Hex(secret))
      .first<{ secret_prefix: string }>();
    expect(stored!.secret_prefix).toBe(`default:development.v2_${selectorOf(secret)}`);
    expect(JSON.stringify(stored)).not.toContain(secretPart);
    for (const key of (await env.TOKENS.list()).keys) expect((await env.TOKENS.get(key.name)) ?? '').not.toContain(secretPart);

    // Listed by its public part (8.x lists the selector), never the secret.
    const listed = (await bodyOf<{ tokens: { secret: string }[] }>(await adminOk('GET', '/api/admin/api-tokens'))).tokens;
    const mine = listed.find((token) => token.secret.startsWith(`default:development.v2_${selectorOf(secret)}***`));
    expect(mine).toBeDefined();
    expect(JSON.stringify(listed)).not.toContain(secretPart);
  });

  it('refuses (401) a v2 secret whose selector is known but whose secret part is not', async () => {
    const secret = v2Secret('default', 'development');
    expect((await importV2(secret, { type: 'client', environment: 'development', projects: ['default'] })).status).toBe(201);
    const forged = v2Secret('default', 'development', selectorOf(secret));
    await expectError(await call('GET', '/api/client/features', { token: forged }), 401, 'AuthenticationRequired');
    // One character off at the end, as a truncated copy would be.
    const truncated = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    await expectError(await call('GET', '/api/client/features', { token: truncated }), 401, 'AuthenticationRequired');
  });

  it('a v2 frontend token serves the frontend API, and each type keeps to its own API (403 across)', async () => {
    const frontend = v2Secret('*', 'development');
    const client = v2Secret('*', 'development');
    expect((await importV2(frontend, { type: 'frontend', environment: 'development' })).status).toBe(201);
    expect((await importV2(client, { type: 'backend', environment: 'development' })).status).toBe(201);
    const answer = await call('GET', '/api/frontend', { token: frontend });
    expect(answer.status).toBe(200);
    expect((await bodyOf<{ toggles: { name: string }[] }>(answer)).toggles.map((toggle) => toggle.name)).toContain('v2.flag');
    expect((await call('GET', '/api/client/features', { token: client })).status).toBe(200);
    await expectError(await call('GET', '/api/frontend', { token: client }), 403, 'NoAccessError');
    await expectError(await call('GET', '/api/client/features', { token: frontend }), 403, 'NoAccessError');
  });

  it('a v2 admin token (`*:*.v2_…`) serves the admin API and is refused on the client API', async () => {
    const admin = v2Secret('*', '*');
    expect((await importV2(admin, { type: 'admin' })).status).toBe(201);
    expect((await call('GET', '/api/admin/projects', { token: admin })).status).toBe(200);
    await expectError(await call('GET', '/api/client/features', { token: admin }), 403, 'NoAccessError');
  });

  it('/edge/validate answers v2 tokens with their scope, and leaves out unknown and forged ones', async () => {
    const client = v2Secret('default', 'development');
    const frontend = v2Secret('default', 'development');
    await importV2(client, { type: 'client', environment: 'development', projects: ['default'] });
    await importV2(frontend, { type: 'frontend', environment: 'development', projects: ['default'] });
    const unknown = v2Secret('default', 'development');
    const forged = v2Secret('default', 'development', selectorOf(client));
    const response = await call('POST', '/edge/validate', { token: null, body: { tokens: [client, frontend, unknown, forged] } });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({
      tokens: [
        { token: client, type: 'client', projects: ['default'], environment: 'development' },
        { token: frontend, type: 'frontend', projects: ['default'], environment: 'development' },
      ],
    });
  });

  it('admin URLs name a v2 token by its selector or its secret: expiry change, lookup and revocation', async () => {
    const secret = v2Secret('*', 'development');
    const tokenName = unique('v2-admin-url');
    expect((await importV2(secret, { tokenName, type: 'client', environment: 'development' })).status).toBe(201);
    const selector = selectorOf(secret);

    expect((await call('PUT', `/api/admin/api-tokens/${selector}`, { body: { expiresAt: '2031-01-01T00:00:00.000Z' } })).status).toBe(200);
    const updated = await lastEvent('api-token-updated');
    expect(JSON.parse(updated!.data!)).toMatchObject({ tokenName, expiresAt: '2031-01-01T00:00:00.000Z' });
    const one = await bodyOf(await call('GET', `/api/admin/api-tokens/${selector}`));
    expect(one).toMatchObject({ tokenName, expiresAt: '2031-01-01T00:00:00.000Z' });
    expect(one.secret).toMatch(new RegExp(`^\\*:development\\.v2_${selector.replaceAll('-', '\\-')}\\*\\*\\*`));

    expect((await call('DELETE', `/api/admin/api-tokens/${selector}`)).status).toBe(200);
    const deleted = await lastEvent('api-token-deleted');
    expect(JSON.parse(deleted!.pre_data!)).toMatchObject({ tokenName });
    expect(JSON.stringify(deleted)).not.toContain(secret.slice(secret.lastIndexOf('_') + 1));
    await expectError(await call('GET', '/api/client/features', { token: secret }), 401, 'AuthenticationRequired');

    // By the whole secret, as 8.x also accepts.
    const other = v2Secret('*', 'development');
    expect((await importV2(other, { type: 'client', environment: 'development' })).status).toBe(201);
    expect((await call('DELETE', `/api/admin/api-tokens/${encodeURIComponent(other)}`)).status).toBe(200);
    await expectError(await call('GET', '/api/client/features', { token: other }), 401, 'AuthenticationRequired');
  });

  it('an unknown selector or v2 secret finds nothing: 404 for a secret, an empty list for a selector (it could be a name)', async () => {
    await expectError(await call('GET', `/api/admin/api-tokens/${encodeURIComponent(v2Secret('*', 'development'))}`), 404, 'NotFoundError');
    expect(await bodyOf(await call('GET', `/api/admin/api-tokens/${base64url(16)}`))).toEqual({ tokens: [] });
    const before = await tokenFootprint();
    expect((await call('DELETE', `/api/admin/api-tokens/${base64url(16)}`)).status).toBe(200);
    await expectError(
      await call('PUT', `/api/admin/api-tokens/${base64url(16)}`, { body: { expiresAt: '2031-01-01T00:00:00.000Z' } }),
      404,
      'NotFoundError',
    );
    expect(await tokenFootprint()).toEqual(before);
  });

  describe('by selector and verifier (read from an 8.1+ database: the secret itself is never known)', () => {
    /** Unleash 8's verifier: the base64url SHA-256 of the whole secret. */
    async function verifierOf(secret: string): Promise<string> {
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(secret)));
      return btoa(String.fromCharCode(...digest))
        .replaceAll('+', '-')
        .replaceAll('/', '_')
        .replace(/=+$/, '');
    }
    const importByVerifier = (body: Record<string, unknown>) =>
      call('POST', '/api/admin/api-tokens/import', { body: { tokenName: unique('v2db'), ...body } });

    it('the SDK keeps its key unchanged (all projects, one project); the answer and the event show the public part only', async () => {
      for (const [scope, projects] of [
        ['*', ['*']],
        ['default', ['default']],
      ] as const) {
        const secret = v2Secret(scope, 'development');
        const selector = selectorOf(secret);
        const created = await importByVerifier({
          type: 'client',
          environment: 'development',
          projects,
          selector,
          verifier: await verifierOf(secret),
        });
        expect(created.status).toBe(201);
        expect((await bodyOf(created)).secret).toBe(`${scope}:development.v2_${selector}`);
        const response = await call('GET', '/api/client/features', { token: secret });
        expect(response.status).toBe(200);
        const features = (await bodyOf<{ features: { name: string }[] }>(response)).features;
        expect(features.some((feature) => feature.name === 'v2.flag')).toBe(true);
        const event = await lastEvent('api-token-created');
        expect(JSON.stringify(event)).not.toContain(secret.slice(secret.lastIndexOf('_') + 1));
        // Another secret part under the same selector is refused.
        await expectError(
          await call('GET', '/api/client/features', { token: v2Secret(scope, 'development', selector) }),
          401,
          'AuthenticationRequired',
        );
      }
    });

    it('400 for a secret and a verifier together, a selector alone, or a malformed verifier; nothing written', async () => {
      const secret = v2Secret('*', 'development');
      const verifier = await verifierOf(secret);
      const before = await tokenFootprint();
      for (const body of [
        { secret, selector: selectorOf(secret), verifier },
        { selector: selectorOf(secret) },
        { selector: selectorOf(secret), verifier: 'not-a-verifier' },
      ]) {
        await expectError(await importByVerifier({ type: 'client', environment: 'development', ...body }), 400, 'ValidationError');
      }
      expect(await tokenFootprint()).toEqual(before);
      expect((await call('GET', '/api/client/features', { token: secret })).status).toBe(401);
    });
  });

  describe('import refusals (nothing written)', () => {
    it('409 for a v2 secret whose selector another token has', async () => {
      const secret = v2Secret('*', 'development');
      expect((await importV2(secret, { type: 'client', environment: 'development' })).status).toBe(201);
      const before = await tokenFootprint();
      const error = await expectError(
        await importV2(v2Secret('*', 'development', selectorOf(secret)), { type: 'client', environment: 'development' }),
        409,
        'NameExistsError',
      );
      expect(error.message).toContain('selector');
      expect(await tokenFootprint()).toEqual(before);
    });

    it("400 when a v2 secret's prefix names another scope than the token's", async () => {
      const before = await tokenFootprint();
      const error = await expectError(
        await importV2(v2Secret('*', 'production'), { type: 'client', environment: 'development' }),
        400,
        'ValidationError',
      );
      expect(error.details[0]).toMatchObject({ path: '/body/secret' });
      expect(await tokenFootprint()).toEqual(before);
    });
  });
});
