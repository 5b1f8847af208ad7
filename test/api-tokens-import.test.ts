import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createFeature } from './support/admin';
import { signedInUser, withSession } from './support/auth';
import { CREATED_TOKEN_KEYS, TOKEN_EVENT_DATA_KEYS, tokenFootprint } from './support/api-tokens';
import { sha256Hex } from './support/crypto';
import { lastEvent } from './support/db';
import { bodyOf, call, createToken, expectError, type CallOptions } from './support/http';
import { unique } from './support/names';

const PATH = '/api/admin/api-tokens/import';

/** A secret as Unleash 6 issues them, for the given scope. */
function secretFor(scope: string, environment: string): string {
  const hex = [...crypto.getRandomValues(new Uint8Array(28))].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${scope}:${environment}.${hex}`;
}

function importToken(body: unknown, options: CallOptions = {}) {
  return call('POST', PATH, { ...options, body });
}

beforeAll(async () => {
  await env.DB.batch([env.DB.prepare("INSERT INTO projects (id, name) VALUES ('imp2', 'Import 2'), ('imp3', 'Import 3')")]);
  await createFeature('imported.flag');
  await adminOk('POST', '/api/admin/projects/default/features/imported.flag/environments/development/on');
});

describe('POST /api/admin/api-tokens/import', () => {
  it('creates a client token with the given secret, answers it once in the created shape, and stores only its hash', async () => {
    const secret = secretFor('default', 'development');
    const response = await importToken({
      secret,
      tokenName: 'moved-backend',
      type: 'client',
      environment: 'development',
      projects: ['default'],
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(CREATED_TOKEN_KEYS);
    expect(body).toMatchObject({ secret, tokenName: 'moved-backend', type: 'client', environment: 'development', projects: ['default'] });
    const location = response.headers.get('location')!;
    expect(location).toMatch(/^\/api\/admin\/api-tokens\/[0-9a-f-]{36}$/);

    const stored = await env.DB.prepare('SELECT * FROM api_tokens WHERE secret_hash = ?')
      .bind(await sha256Hex(secret))
      .first();
    expect(stored).not.toBeNull();
    expect(JSON.stringify(stored)).not.toContain(secret.slice(secret.indexOf('.') + 7));
    for (const key of (await env.TOKENS.list()).keys) {
      expect(key.name).not.toContain(secret);
      expect((await env.TOKENS.get(key.name)) ?? '').not.toContain(secret.slice(secret.indexOf('.') + 7));
    }
  });

  it('the imported client secret works on /api/client/features at once', async () => {
    const secret = secretFor('default', 'development');
    expect((await importToken({ secret, tokenName: 'sdk', type: 'client', environment: 'development', project: 'default' })).status).toBe(
      201,
    );
    const response = await call('GET', '/api/client/features', { token: secret });
    expect(response.status).toBe(200);
    const features = (await bodyOf<{ features: { name: string; enabled: boolean }[] }>(response)).features;
    expect(features.find((feature) => feature.name === 'imported.flag')).toMatchObject({ enabled: true });
  });

  it('the imported frontend secret works on /api/frontend', async () => {
    const secret = secretFor('*', 'development');
    expect((await importToken({ secret, tokenName: 'web', type: 'frontend', environment: 'development' })).status).toBe(201);
    const response = await call('GET', '/api/frontend', { token: secret });
    expect(response.status).toBe(200);
    const toggles = (await bodyOf<{ toggles: { name: string }[] }>(response)).toggles;
    expect(toggles.map((toggle) => toggle.name)).toContain('imported.flag');
  });

  it('keeps a several-project token ([] prefix), an admin token (*:*) and a legacy secret without prefix', async () => {
    const several = secretFor('[]', 'production');
    const many = await importToken({
      secret: several,
      tokenName: 'multi',
      type: 'client',
      environment: 'production',
      projects: ['imp2', 'imp3'],
    });
    expect(many.status).toBe(201);
    expect((await bodyOf(many)).projects).toEqual(['imp2', 'imp3']);

    const adminSecret = secretFor('*', '*');
    expect((await importToken({ secret: adminSecret, tokenName: 'moved-admin', type: 'admin' })).status).toBe(201);
    expect((await call('GET', '/api/admin/projects', { token: adminSecret })).status).toBe(200);

    const legacy = 'a'.repeat(20) + crypto.randomUUID().replaceAll('-', '');
    expect((await importToken({ secret: legacy, tokenName: 'legacy', type: 'client', environment: 'development' })).status).toBe(201);
    expect((await call('GET', '/api/client/features', { token: legacy })).status).toBe(200);
  });

  it("records api-token-created without the secret, in the created token's shape", async () => {
    const secret = secretFor('imp2', 'production');
    await importToken({ secret, tokenName: 'audited', type: 'frontend', environment: 'production', projects: ['imp2'] });
    const event = await lastEvent('api-token-created');
    expect(event).toMatchObject({ project: 'imp2', environment: 'production', created_by: 'admin' });
    const data = JSON.parse(event!.data!);
    expect(Object.keys(data)).toEqual(TOKEN_EVENT_DATA_KEYS);
    expect(data).toMatchObject({ tokenName: 'audited', type: 'frontend', projects: ['imp2'] });
    expect(JSON.stringify(event)).not.toContain(secret.slice(secret.indexOf('.') + 1));
  });

  describe('refusals (nothing written)', () => {
    async function refused(body: unknown, status: number, name: string, options: CallOptions = {}) {
      const before = await tokenFootprint();
      const error = await expectError(await importToken(body, options), status, name);
      expect(await tokenFootprint()).toEqual(before);
      return error;
    }
    const valid = () => ({ secret: secretFor('*', 'development'), tokenName: unique('t'), type: 'client', environment: 'development' });

    it('401 without credentials', async () => {
      const before = await tokenFootprint();
      const response = await importToken(valid(), { token: null });
      expect(response.status).toBe(401);
      expect(await tokenFootprint()).toEqual(before);
    });

    it('403 for a client or frontend key', async () => {
      const client = await createToken({ tokenName: unique('c'), type: 'client', environment: 'development' });
      const frontend = await createToken({ tokenName: unique('f'), type: 'frontend', environment: 'development' });
      await refused(valid(), 403, 'NoAccessError', { token: client });
      await refused(valid(), 403, 'NoAccessError', { token: frontend });
    });

    it('403 for an Editor', async () => {
      const editor = await signedInUser(2);
      const error = await refused(valid(), 403, 'NoAccessError', withSession(editor.cookie));
      expect(error.message).toContain('ADMIN');
    });

    it('an Admin user (session) may import', async () => {
      const admin = await signedInUser(1);
      expect((await importToken(valid(), withSession(admin.cookie))).status).toBe(201);
    });

    it('400 for secrets too short, with spaces or control characters, or shaped like a personal access token', async () => {
      for (const secret of [
        'short.secret',
        `*:development.${'a'.repeat(20)} x`,
        `*:development.${'a'.repeat(20)}\u0000`,
        `user:${'a'.repeat(56)}`,
      ]) {
        const error = await refused({ ...valid(), secret }, 400, 'ValidationError');
        expect(error.details[0]!.path).toBe('/body/secret');
      }
      await refused({ ...valid(), secret: 'x'.repeat(513) }, 400, 'ValidationError');
      await refused({ ...valid(), secret: undefined }, 400, 'ValidationError');
    });

    it("400 when the secret's prefix names another scope than the token's", async () => {
      const cases = [
        { secret: secretFor('*', 'production'), type: 'client', environment: 'development' },
        { secret: secretFor('imp2', 'development'), type: 'client', environment: 'development', projects: ['imp3'] },
        { secret: secretFor('*', 'development'), type: 'client', environment: 'development', projects: ['imp2', 'imp3'] },
        { secret: secretFor('*', 'development'), type: 'admin' },
      ];
      for (const body of cases) {
        const error = await refused({ tokenName: 'mismatch', ...body }, 400, 'ValidationError');
        expect(error.details[0]).toMatchObject({ path: '/body/secret' });
        expect(error.details[0]!.message).toContain('does not match');
      }
    });

    it("400 for the creation rules' violations and unknown environments or projects", async () => {
      await refused({ ...valid(), tokenName: undefined }, 400, 'ValidationError');
      await refused({ ...valid(), secret: secretFor('*', 'nowhere'), environment: 'nowhere' }, 400, 'ValidationError');
      await refused({ ...valid(), secret: secretFor('ghost', 'development'), project: 'ghost' }, 400, 'ValidationError');
    });

    it('409 for a secret some token already has', async () => {
      const body = valid();
      expect((await importToken(body)).status).toBe(201);
      const error = await refused({ ...body, tokenName: 'again' }, 409, 'NameExistsError');
      expect(error.message).not.toContain(body.secret);
      const created = await createToken({ tokenName: unique('n'), type: 'client', environment: 'development' });
      await refused({ ...valid(), secret: created }, 409, 'NameExistsError');
    });
  });
});
