import { describe, expect, it } from 'vitest';
import { clientKey } from '../src/http/rate-limit';
import { call, createToken, expectError } from './support/http';

/** A client address of its own for each test, so counts never leak between tests or runs. */
function address(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(3));
  return `192.${bytes[0]}.${bytes[1]}.${bytes[2]}`;
}

/**
 * The limiter counts in windows aligned to the clock minute: a test that must stay inside one
 * window waits for the next one when fewer than `seconds` are left of this one.
 */
async function withinOneWindow(seconds: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

async function expectTooMany(response: Response) {
  expect(response.headers.get('retry-after')).toBe('60');
  const body = await expectError(response, 429, 'TooManyRequestsError');
  expect(body).toEqual({
    id: body.id,
    name: 'TooManyRequestsError',
    message: 'Too many requests, please try again later.',
    details: [{ message: 'Too many requests, please try again later.' }],
  });
}

describe('invite routes: 20 a minute per client address', () => {
  it('answers the first 20 validate/signup calls of one address, then 429; another address is still served', async () => {
    await withinOneWindow(10);
    const ip = address();
    for (let i = 0; i < 20; i++) {
      const response =
        i % 2 === 0
          ? await call('GET', '/invite/unknown-secret/validate', { token: null, headers: { 'cf-connecting-ip': ip } })
          : await call('POST', '/invite/unknown-secret/signup', {
              token: null,
              headers: { 'cf-connecting-ip': ip },
              body: { email: 'a@example.com', name: 'A' },
            });
      expect(response.status).toBe(400);
    }
    await expectTooMany(await call('GET', '/invite/unknown-secret/validate', { token: null, headers: { 'cf-connecting-ip': ip } }));
    await expectTooMany(
      await call('POST', '/invite/unknown-secret/signup', { token: null, headers: { 'cf-connecting-ip': ip }, body: {} }),
    );
    expect((await call('GET', '/invite/unknown-secret/validate', { token: null, headers: { 'cf-connecting-ip': address() } })).status).toBe(
      400,
    );
  });

  it('does not read the body of a refused request', async () => {
    await withinOneWindow(10);
    const ip = address();
    for (let i = 0; i < 20; i++) await call('GET', '/invite/x/validate', { token: null, headers: { 'cf-connecting-ip': ip } });
    // Malformed JSON would be a 400 if it were read.
    await expectTooMany(await call('POST', '/invite/x/signup', { token: null, headers: { 'cf-connecting-ip': ip }, rawBody: '{' }));
  });
});

describe('POST /edge/validate: 30 a minute per client address and per key', () => {
  const body = { tokens: ['*:development.unknown'] };

  it('per address', async () => {
    await withinOneWindow(10);
    const ip = address();
    for (let i = 0; i < 30; i++)
      expect((await call('POST', '/edge/validate', { token: null, headers: { 'cf-connecting-ip': ip }, body })).status).toBe(200);
    await expectTooMany(await call('POST', '/edge/validate', { token: null, headers: { 'cf-connecting-ip': ip }, body }));
  });

  it('per key, whatever the address', async () => {
    await withinOneWindow(10);
    const key = `*:development.${crypto.randomUUID()}`;
    for (let i = 0; i < 30; i++)
      expect((await call('POST', '/edge/validate', { token: key, headers: { 'cf-connecting-ip': address() }, body })).status).toBe(200);
    await expectTooMany(await call('POST', '/edge/validate', { token: key, headers: { 'cf-connecting-ip': address() }, body }));
    // Other keys from new addresses are unaffected.
    expect((await call('POST', '/edge/validate', { token: `${key}-other`, body })).status).toBe(200);
  });
});

describe('SDK routes: a valid key never counts toward its address, a refused one does (300 a minute)', () => {
  const register = (instanceId: string) => ({
    appName: 'web',
    instanceId,
    sdkVersion: 'unleash-client-js:3.8.2',
    strategies: [],
    started: new Date().toISOString(),
    interval: 30000,
  });
  const metrics = (instanceId: string) => ({
    appName: 'web',
    instanceId,
    bucket: { start: new Date().toISOString(), stop: new Date().toISOString(), toggles: {} },
  });

  it('serves 20 browsers and 20 backend SDKs behind one address (one NAT) on every SDK route: 0 × 429 over 1,000 requests', async () => {
    const frontend = await createToken({ tokenName: `fe-rl-${crypto.randomUUID()}`, type: 'frontend', environment: 'development' });
    const backends = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        createToken({ tokenName: `be-rl-${i}-${crypto.randomUUID()}`, type: 'client', environment: 'development' }),
      ),
    );
    const headers = { 'cf-connecting-ip': address(), origin: 'https://app.example.com' };
    await withinOneWindow(30);
    const statuses: number[] = [];
    // 10 rounds of: each of 20 browsers registers, posts metrics and polls; each of 20 backend SDKs polls and posts metrics.
    for (let round = 0; round < 10; round++) {
      const sent = await Promise.all([
        ...Array.from({ length: 20 }, (_, i) =>
          call('POST', '/api/frontend/client/register', { token: frontend, headers, body: register(`b${i}`) }),
        ),
        ...Array.from({ length: 20 }, (_, i) =>
          call('POST', '/api/frontend/client/metrics', { token: frontend, headers, body: metrics(`b${i}`) }),
        ),
        ...Array.from({ length: 20 }, () => call('GET', '/api/frontend?userId=1', { token: frontend, headers })),
        ...backends.map((token) => call('GET', '/api/client/features', { token, headers })),
        ...backends.map((token) => call('POST', '/api/client/metrics', { token, headers, body: metrics('sdk') })),
      ]);
      statuses.push(...sent.map((response) => response.status));
    }
    expect(statuses.length).toBe(1000);
    expect(statuses.filter((status) => status === 429)).toEqual([]);
    expect(statuses.filter((status) => status >= 400)).toEqual([]);
  });

  it('counts unknown keys per address on the frontend writes: 300 are answered 401, then 429 with CORS; valid keys of that address stay served', async () => {
    const frontend = await createToken({ tokenName: `fe-rl-${crypto.randomUUID()}`, type: 'frontend', environment: 'development' });
    const headers = { 'cf-connecting-ip': address(), origin: 'https://app.example.com' };
    await withinOneWindow(20);
    const sent = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        call('POST', '/api/frontend/client/register', { token: `*:development.unknown-${i}`, headers, body: register('x') }),
      ),
    );
    expect(sent.filter((response) => response.status !== 401).map((response) => response.status)).toEqual([]);
    const refused = await call('POST', '/api/frontend/client/metrics', { token: '*:development.unknown-x', headers, body: metrics('x') });
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    await expectTooMany(refused);
    expect((await call('POST', '/api/frontend/client/metrics', { token: frontend, headers, body: metrics('x') })).status).toBe(200);
  });
});

describe('sign-in: 10 a minute per client address, as Unleash', () => {
  it('answers 10 login attempts of one address (right or wrong), then 429; another address is still served', async () => {
    await withinOneWindow(15);
    const ip = address();
    const attempt = (from: string) =>
      call('POST', '/auth/simple/login', {
        token: null,
        headers: { 'cf-connecting-ip': from },
        body: { username: 'nobody@example.com', password: 'wrong' },
      });
    for (let i = 0; i < 10; i++) expect((await attempt(ip)).status).toBe(401);
    await expectTooMany(await attempt(ip));
    expect((await attempt(address())).status).toBe(401);
  });

  it('limits the password check the signup page calls, at 60 a minute', async () => {
    await withinOneWindow(15);
    const ip = address();
    const check = () =>
      call('POST', '/auth/reset/validate-password', {
        token: null,
        headers: { 'cf-connecting-ip': ip },
        body: { password: 'Str0ng-enough-pass!' },
      });
    for (let i = 0; i < 60; i++) expect((await check()).status).toBe(200);
    await expectTooMany(await check());
  });
});

describe('clientKey', () => {
  it('keys IPv4 by address and IPv6 by its /64; without cf-connecting-ip, one shared key', () => {
    const key = (ip?: string) => clientKey(new Request('http://x/', { headers: ip ? { 'cf-connecting-ip': ip } : {} }));
    expect(key('203.0.113.7')).toBe('203.0.113.7');
    expect(key('2001:db8:0:1::5')).toBe('2001:db8:0:1::/64');
    expect(key('2001:0db8:0000:0001:ffff:1:2:3')).toBe('2001:db8:0:1::/64');
    expect(key('::1')).toBe('0:0:0:0::/64');
    expect(key()).toBe('unknown');
  });
});
