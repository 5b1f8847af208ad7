import { beforeAll, describe, expect, it } from 'vitest';
import { count, rows } from './support/db';
import { bodyOf, call, createToken, expectError } from './support/http';
import { captureLogs } from './support/logs';
import { signInAs } from './support/users';

let editor: string;
let frontendKey: string;

beforeAll(async () => {
  editor = await signInAs('Editor');
  frontendKey = await createToken({ tokenName: 'cors-frontend', type: 'frontend', environment: 'development', projects: ['*'] });
});

async function eventCount(): Promise<number> {
  return count('SELECT count(*) AS n FROM events');
}

function fromOrigin(origin: string) {
  return call('GET', '/api/frontend', { token: frontendKey, headers: { origin } });
}

function preflightFrom(origin: string) {
  return call('OPTIONS', '/api/frontend', { token: null, headers: { origin, 'access-control-request-method': 'GET' } });
}

async function saveOrigins(origins: string[]): Promise<void> {
  const response = await call('POST', '/api/admin/ui-config/cors', { body: { frontendApiOrigins: origins } });
  expect(response.status).toBe(204);
  expect(await response.text()).toBe('');
}

describe('POST /api/admin/ui-config/cors', () => {
  it('saves the origins: the frontend API answers an allowed origin with CORS headers at once, another without', async () => {
    // Nothing saved yet: every origin (`*`, as FRONTEND_API_ORIGINS defaults).
    expect((await fromOrigin('https://elsewhere.example')).headers.get('access-control-allow-origin')).toBe('*');
    await saveOrigins(['https://app.example']);
    expect((await bodyOf(await call('GET', '/api/admin/ui-config'))).frontendApiOrigins).toEqual(['https://app.example']);

    const allowed = await fromOrigin('https://app.example');
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    const other = await fromOrigin('https://elsewhere.example');
    expect(other.status).toBe(200);
    expect(other.headers.has('access-control-allow-origin')).toBe(false);
    expect((await preflightFrom('https://app.example')).headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect((await preflightFrom('https://elsewhere.example')).headers.has('access-control-allow-origin')).toBe(false);
    // Errors of the frontend API carry the same headers.
    const refused = await call('GET', '/api/frontend', { token: 'not-a-key', headers: { origin: 'https://app.example' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('https://app.example');

    const [created] = await rows<{ data: string; pre_data: string | null }>(
      "SELECT data, pre_data FROM events WHERE type = 'setting-created' ORDER BY id DESC LIMIT 1",
    );
    expect(JSON.parse(created!.data)).toEqual({ id: 'unleash.frontend', frontendApiOrigins: ['https://app.example'] });
    expect(created!.pre_data).toBeNull();

    // `*` (or an empty list, as in Unleash) allows every origin again.
    await saveOrigins(['*']);
    expect((await fromOrigin('https://elsewhere.example')).headers.get('access-control-allow-origin')).toBe('*');
    const [updated] = await rows<{ data: string; pre_data: string }>(
      "SELECT data, pre_data FROM events WHERE type = 'setting-updated' ORDER BY id DESC LIMIT 1",
    );
    expect(JSON.parse(updated!.data)).toEqual({ id: 'unleash.frontend', frontendApiOrigins: ['*'] });
    expect(JSON.parse(updated!.pre_data)).toEqual({ frontendApiOrigins: ['https://app.example'] });
  });

  it('refuses invalid origins and bodies as Unleash does, and a caller without UPDATE_CORS, writing nothing', async () => {
    const before = await eventCount();
    const settings = await rows('SELECT content FROM settings WHERE name = ?', 'unleash.frontend');
    for (const origin of ['bad', 'https://app.example/', 'https://*.example', 'https://app.example/path']) {
      const error = await expectError(
        await call('POST', '/api/admin/ui-config/cors', { body: { frontendApiOrigins: [origin] } }),
        400,
        'ValidationError',
      );
      expect(error.details[0]!.message).toBe(`Invalid origin: ${origin}`);
    }
    await expectError(await call('POST', '/api/admin/ui-config/cors', { body: { frontendApiOrigins: 'x' } }), 400, 'ValidationError');
    await expectError(await call('POST', '/api/admin/ui-config/cors', { body: { extra: 1 } }), 400, 'ValidationError');
    await expectError(await call('POST', '/api/admin/ui-config/cors', { body: {} }), 404, 'NotFoundError');
    await expectError(
      await call('POST', '/api/admin/ui-config/cors', { body: { frontendApiOrigins: ['https://x.example'] }, token: editor }),
      403,
      'NoAccessError',
    );
    await expectError(
      await call('POST', '/api/admin/ui-config/cors', { body: { frontendApiOrigins: ['https://x.example'] }, token: frontendKey }),
      403,
      'NoAccessError',
    );
    expect(await eventCount()).toBe(before);
    expect(await rows('SELECT content FROM settings WHERE name = ?', 'unleash.frontend')).toEqual(settings);
  });
});

describe('POST /api/admin/ui-config', () => {
  it('saves frontendSettings.frontendApiOrigins (204), 404 without frontendSettings, 400 without the list', async () => {
    const response = await call('POST', '/api/admin/ui-config', {
      body: { frontendSettings: { frontendApiOrigins: ['https://b.example'] } },
    });
    expect(response.status).toBe(204);
    expect((await bodyOf(await call('GET', '/api/admin/ui-config'))).frontendApiOrigins).toEqual(['https://b.example']);
    expect((await fromOrigin('https://b.example')).headers.get('access-control-allow-origin')).toBe('https://b.example');
    const before = await eventCount();
    await expectError(await call('POST', '/api/admin/ui-config', { body: {} }), 404, 'NotFoundError');
    await expectError(await call('POST', '/api/admin/ui-config', { body: { frontendSettings: {} } }), 400, 'ValidationError');
    await expectError(
      await call('POST', '/api/admin/ui-config', {
        body: { frontendSettings: { frontendApiOrigins: ['https://c.example'] } },
        token: editor,
      }),
      403,
      'NoAccessError',
    );
    expect(await eventCount()).toBe(before);
    await saveOrigins(['*']);
  });
});

describe('GET /api/admin/telemetry/settings', () => {
  it('says that nothing is collected, to any admin-API caller', async () => {
    const body = await bodyOf(await call('GET', '/api/admin/telemetry/settings', { token: editor }));
    expect(body).toEqual({ versionInfoCollectionEnabled: false, featureInfoCollectionEnabled: false });
    await expectError(await call('GET', '/api/admin/telemetry/settings', { token: null }), 401, 'AuthenticationRequired');
  });
});

describe('POST /api/admin/record-ui-error', () => {
  it('logs a report (204) and stores nothing; refuses a body without errorMessage and one too large', async () => {
    const before = await eventCount();
    const logs = captureLogs();
    const response = await call('POST', '/api/admin/record-ui-error', {
      token: editor,
      headers: { 'cf-connecting-ip': '192.0.2.77' },
      body: { errorMessage: 'Cannot read properties of undefined', errorStack: 'at Page (page.tsx:1)' },
    });
    expect(response.status).toBe(204);
    const logged = logs.entries.find((entry) => entry.msg === 'UI error reported');
    expect(logged).toMatchObject({
      level: 'warn',
      errorMessage: 'Cannot read properties of undefined',
      errorStack: 'at Page (page.tsx:1)',
    });
    await expectError(
      await call('POST', '/api/admin/record-ui-error', { headers: { 'cf-connecting-ip': '192.0.2.77' }, body: { errorStack: 'x' } }),
      400,
      'ValidationError',
    );
    const huge = await call('POST', '/api/admin/record-ui-error', {
      headers: { 'cf-connecting-ip': '192.0.2.77' },
      body: { errorMessage: 'x'.repeat(20_000) },
    });
    expect(huge.status).toBe(413);
    expect(await eventCount()).toBe(before);
  });

  it('is rate limited per address (429 with retry-after)', async () => {
    captureLogs();
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const response = await call('POST', '/api/admin/record-ui-error', {
        headers: { 'cf-connecting-ip': '192.0.2.78' },
        body: { errorMessage: `error ${i}` },
      });
      statuses.push(response.status);
      if (response.status === 429) {
        expect(response.headers.get('retry-after')).toBe('60');
        break;
      }
    }
    expect(statuses.filter((status) => status === 204).length).toBeGreaterThan(0);
    expect(statuses.at(-1)).toBe(429);
  });
});
