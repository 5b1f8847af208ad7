/**
 * The login history (Admin → Login history, Unleash Enterprise's `/api/admin/logins`): every
 * password, OpenID Connect and Cloudflare Access sign-in attempt is recorded with Unleash's
 * fields, refused ones with their reason, never a secret; admins list, download, delete; the
 * cron keeps 14 days. Also the SAML 2.0 page's settings: SAML is not offered, switching it on is
 * refused and nothing is stored.
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, envWith, expectError, fetchWith } from './support/http';
import { createUser, STRONG_PASSWORD } from './support/auth';
import { count, eventsSince, parsedEvent, rows } from './support/db';
import { unique } from './support/names';
import { signInAs } from './support/users';
import { serveJson, serveKeys, signToken, teamDomain, testKey, type TestKey } from './support/sso';
import { expireLoginHistory, LOGIN_HISTORY_RETENTION_MS } from '../src/scheduled';

interface LoginEvent {
  id: number;
  username: string;
  auth_type: string;
  created_at: string;
  successful: boolean;
  ip: string | null;
  failure_reason: string | null;
}

async function history(): Promise<LoginEvent[]> {
  const response = await call('GET', '/api/admin/logins');
  expect(response.status).toBe(200);
  return (await bodyOf<{ events: LoginEvent[] }>(response)).events;
}

/** The audit trail a deletion leaves (never the deleted rows' contents). */
const DELETED = 'login-history-deleted';

async function maxEventId(): Promise<number> {
  return count('SELECT coalesce(max(id), 0) AS n FROM events');
}

async function eventsOf(username: string): Promise<LoginEvent[]> {
  return (await history()).filter((event) => event.username === username);
}

function passwordLogin(username: string, password: string, ip: string): Promise<Response> {
  return call('POST', '/auth/simple/login', { token: null, body: { username, password }, headers: { 'cf-connecting-ip': ip } });
}

describe('password sign-in', () => {
  it('records a refused and then a successful attempt with Unleash’s fields, newest first, and never the password', async () => {
    const user = await createUser('Viewer');
    const wrong = 'Not-The-Password-1!';
    expect((await passwordLogin(user.username, wrong, '203.0.113.7')).status).toBe(401);
    const before = Date.now();
    expect((await passwordLogin(user.username, user.password, '203.0.113.8')).status).toBe(200);

    const [success, failure] = await eventsOf(user.username);
    expect(Object.keys(success!)).toEqual(['id', 'username', 'auth_type', 'created_at', 'successful', 'ip', 'failure_reason']);
    expect(success).toMatchObject({ auth_type: 'simple', successful: true, ip: '203.0.113.8', failure_reason: null });
    expect(Date.parse(success!.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(failure).toMatchObject({ auth_type: 'simple', successful: false, ip: '203.0.113.7', failure_reason: 'Wrong password' });
    expect(success!.id).toBeGreaterThan(failure!.id);

    const stored = JSON.stringify(await rows('SELECT * FROM login_events'));
    expect(stored).not.toContain(wrong);
    expect(stored).not.toContain(STRONG_PASSWORD);
  });

  it('records an unknown user with the name typed, and the answer stays the same for everyone', async () => {
    const name = unique('nobody');
    const response = await passwordLogin(name, STRONG_PASSWORD, '203.0.113.9');
    const body = await expectError(response, 401, 'AuthenticationRequired');
    expect(body.message).toContain('The combination of password and username you provided is invalid');
    expect(await eventsOf(name)).toEqual([expect.objectContaining({ successful: false, failure_reason: 'No user found' })]);
  });

  it('records a refusal that happens before the password is checked (another site’s page posting it)', async () => {
    const user = await createUser('Viewer');
    const response = await call('POST', '/auth/simple/login', {
      token: null,
      body: { username: user.username, password: user.password },
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(response.status).toBe(403);
    const [event] = await eventsOf(user.username);
    expect(event).toMatchObject({ successful: false });
    expect(event!.failure_reason).toBeTruthy();
  });
});

describe('GET, DELETE /api/admin/logins', () => {
  it('downloads the history as CSV (Accept: text/csv), with Unleash’s columns and formulas defused', async () => {
    const name = `=HYPERLINK("x",${unique('csv')})`;
    await passwordLogin(name, STRONG_PASSWORD, '198.51.100.1');
    const response = await call('GET', '/api/admin/logins', { headers: { accept: 'text/csv' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = (await response.text()).trim().split('\n');
    expect(lines[0]).toBe('id,username,auth_type,created_at,successful,ip,failure_reason');
    const line = lines.find((entry) => entry.includes('HYPERLINK'))!;
    expect(line).toMatch(/^\d+,"'=HYPERLINK\(""x"",[^"]+\)",simple,\d{4}-[^,]+,false,198\.51\.100\.1,No user found$/);
  });

  it('refuses callers who are not admins (403) and anonymous ones (401); nothing is deleted', async () => {
    await passwordLogin(unique('kept'), STRONG_PASSWORD, '198.51.100.2');
    const total = await count('SELECT count(*) AS n FROM login_events');
    const [first] = await history();
    for (const role of ['Editor', 'Viewer']) {
      const token = await signInAs(role);
      await expectError(await call('GET', '/api/admin/logins', { token }), 403, 'NoAccessError');
      await expectError(await call('DELETE', `/api/admin/logins/${first!.id}`, { token }), 403, 'NoAccessError');
      await expectError(await call('DELETE', '/api/admin/logins', { token }), 403, 'NoAccessError');
    }
    await expectError(await call('DELETE', '/api/admin/logins', { token: null }), 401, 'AuthenticationRequired');
    await expectError(await call('GET', '/api/admin/logins', { token: null }), 401, 'AuthenticationRequired');
    // Their own password sign-ins (signInAs) were recorded; nothing was deleted, and no deletion recorded.
    expect(await count('SELECT count(*) AS n FROM login_events WHERE id <= ?', first!.id)).toBe(total);
    expect(await count('SELECT count(*) AS n FROM events WHERE type = ?', DELETED)).toBe(0);
  });

  it('deletes one event (204), then answers 404 for it; a bad id is a 400', async () => {
    const name = unique('deleteone');
    await passwordLogin(name, STRONG_PASSWORD, '198.51.100.3');
    await passwordLogin(name, STRONG_PASSWORD, '198.51.100.4');
    const [newest, older] = await eventsOf(name);
    const total = await count('SELECT count(*) AS n FROM login_events');
    const since = await maxEventId();
    expect((await call('DELETE', `/api/admin/logins/${newest!.id}`)).status).toBe(204);
    expect(await eventsOf(name)).toEqual([older]);
    expect(await count('SELECT count(*) AS n FROM login_events')).toBe(total - 1);
    const recorded = await eventsSince(since);
    expect(recorded.map(parsedEvent)).toEqual([{ type: DELETED, createdBy: 'admin', data: { id: newest!.id, deleted: 1 }, preData: null }]);
    expect(JSON.stringify(recorded)).not.toContain(name);
    const afterDelete = await maxEventId();
    const missing = await expectError(await call('DELETE', `/api/admin/logins/${newest!.id}`), 404, 'NotFoundError');
    expect(missing.message).toBe(`Could not find login event with id ${newest!.id}`);
    await expectError(await call('DELETE', '/api/admin/logins/abc'), 400, 'ValidationError');
    expect(await count('SELECT count(*) AS n FROM login_events')).toBe(total - 1);
    expect(await maxEventId()).toBe(afterDelete);
  });

  it('deletes the whole history (204), recording who did it and how many rows went; an empty one records nothing', async () => {
    const name = unique('all');
    await passwordLogin(name, STRONG_PASSWORD, '198.51.100.5');
    const total = await count('SELECT count(*) AS n FROM login_events');
    expect(total).toBeGreaterThan(0);
    const since = await maxEventId();
    expect((await call('DELETE', '/api/admin/logins')).status).toBe(204);
    expect(await history()).toEqual([]);
    const recorded = await eventsSince(since);
    expect(recorded.map(parsedEvent)).toEqual([{ type: DELETED, createdBy: 'admin', data: { deleted: total }, preData: null }]);
    expect(JSON.stringify(recorded)).not.toContain(name);
    // Nothing left to delete: a write that changes nothing leaves no trace.
    const afterDelete = await maxEventId();
    expect((await call('DELETE', '/api/admin/logins')).status).toBe(204);
    expect(await maxEventId()).toBe(afterDelete);
  });
});

describe('retention', () => {
  it('the cron deletes attempts older than 14 days and keeps newer ones', async () => {
    const now = new Date();
    const old = new Date(now.getTime() - LOGIN_HISTORY_RETENTION_MS - 60_000).toISOString();
    const recent = new Date(now.getTime() - LOGIN_HISTORY_RETENTION_MS + 60_000).toISOString();
    const oldName = unique('old');
    const recentName = unique('recent');
    await env.DB.prepare(
      "INSERT INTO login_events (username, auth_type, created_at, successful) VALUES (?, 'simple', ?, 1), (?, 'simple', ?, 1)",
    )
      .bind(oldName, old, recentName, recent)
      .run();
    const summary = await expireLoginHistory.run(env, now);
    expect(summary.deleted).toBeGreaterThanOrEqual(1);
    expect(await count('SELECT count(*) AS n FROM login_events WHERE username = ?', oldName)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM login_events WHERE username = ?', recentName)).toBe(1);
  });
});

describe('OpenID Connect sign-in', () => {
  const host = `idp-${crypto.randomUUID().slice(0, 8)}.idp.test`;
  const ISSUER = `https://${host}`;
  const CLIENT_ID = 'login-history-test';
  let key: TestKey;

  beforeAll(async () => {
    key = await testKey();
    await serveJson(`${host}/.well-known/openid-configuration`, {
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/authorize`,
      token_endpoint: `${ISSUER}/token`,
      jwks_uri: `${ISSUER}/jwks`,
      token_endpoint_auth_methods_supported: ['client_secret_basic'],
    });
    await serveKeys(`${host}/jwks`, [key]);
    const saved = await call('POST', '/api/admin/auth/oidc/settings', {
      body: {
        enabled: true,
        discoverUrl: ISSUER,
        clientId: CLIENT_ID,
        secret: 'login-history-secret-0123',
        autoCreate: true,
        emailDomains: 'example.com',
      },
    });
    expect(saved.status).toBe(200);
  });

  /** Starts a sign-in, has the provider vouch for `email`, and answers the callback. */
  async function signInWith(email: string): Promise<Response> {
    const start = await call('GET', '/auth/oidc/login', { token: null, redirect: 'manual' });
    const location = new URL(start.headers.get('location')!);
    const cookie = /^(unleash-oidc=[A-Za-z0-9_-]{43});/.exec(start.headers.get('set-cookie') ?? '')![1]!;
    const claims = {
      iss: ISSUER,
      aud: CLIENT_ID,
      sub: crypto.randomUUID(),
      nonce: location.searchParams.get('nonce')!,
      email,
      email_verified: true,
    };
    const idToken = await signToken(key, claims);
    await serveJson(`${host}/token`, { access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: idToken });
    const state = encodeURIComponent(location.searchParams.get('state')!);
    return call('GET', `/auth/oidc/callback?code=c&state=${state}`, {
      token: null,
      headers: { cookie, 'cf-connecting-ip': '192.0.2.10' },
      redirect: 'manual',
    });
  }

  it('records a successful sign-in under the verified email, and no code or token', async () => {
    const email = `${unique('oidc')}@example.com`.toLowerCase();
    const response = await signInWith(email);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/');
    expect(await eventsOf(email)).toEqual([
      expect.objectContaining({ auth_type: 'oidc', successful: true, ip: '192.0.2.10', failure_reason: null }),
    ]);
    expect(JSON.stringify(await rows('SELECT * FROM login_events'))).not.toContain('login-history-secret');
  });

  it('records a refused sign-in with the reason shown on the login page', async () => {
    const email = `${unique('oidc')}@elsewhere.test`.toLowerCase();
    const response = await signInWith(email);
    const reason = new URL(response.headers.get('location')!, 'http://localhost').searchParams.get('errorMsg');
    expect(reason).toContain('not created on sign-in');
    expect(await eventsOf(email)).toEqual([expect.objectContaining({ auth_type: 'oidc', successful: false, failure_reason: reason })]);
  });

  it('an answer to no sign-in we started is not recorded (anyone can call the callback)', async () => {
    const total = await count('SELECT count(*) AS n FROM login_events');
    const response = await call('GET', '/auth/oidc/callback?code=c&state=made-up', { token: null, redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(await count('SELECT count(*) AS n FROM login_events')).toBe(total);
  });
});

describe('Cloudflare Access sign-in', () => {
  const AUD = 'login-history-aud-0123456789';
  let team: { domain: string; certs: string };
  let key: TestKey;

  beforeAll(async () => {
    team = teamDomain();
    key = await testKey();
    await serveKeys(team.certs, [key]);
  });

  it('records each Access sign-in once, however many requests its assertion makes', async () => {
    const accessEnv = envWith({ ACCESS_TEAM_DOMAIN: team.domain, ACCESS_AUD: AUD });
    const email = `${unique('access')}@example.com`.toLowerCase();
    const token = await signToken(key, { iss: team.domain, aud: [AUD], email, sub: crypto.randomUUID(), type: 'app' });
    for (let i = 0; i < 3; i++) {
      const response = await fetchWith(accessEnv, 'GET', '/api/admin/user', {
        'cf-access-jwt-assertion': token,
        'cf-connecting-ip': '192.0.2.20',
      });
      expect(response.status).toBe(200);
    }
    expect(await eventsOf(email)).toEqual([
      expect.objectContaining({ auth_type: 'cloudflare-access', successful: true, ip: '192.0.2.20', failure_reason: null }),
    ]);
    expect(JSON.stringify(await rows('SELECT * FROM login_events'))).not.toContain(token.split('.')[2]!);
  });

  it('records a refused Access identity once too, with the reason (refusals are not cached, so each request tries)', async () => {
    const accessEnv = envWith({ ACCESS_TEAM_DOMAIN: team.domain, ACCESS_AUD: AUD });
    // The OpenID Connect settings saved above allow new accounts for example.com only.
    const email = `${unique('access')}@elsewhere.test`.toLowerCase();
    const token = await signToken(key, { iss: team.domain, aud: [AUD], email, sub: crypto.randomUUID(), type: 'app' });
    for (let i = 0; i < 3; i++) {
      const response = await fetchWith(accessEnv, 'GET', '/api/admin/user', { 'cf-access-jwt-assertion': token });
      expect(response.status).toBe(403);
    }
    const events = await eventsOf(email);
    expect(events).toEqual([expect.objectContaining({ auth_type: 'cloudflare-access', successful: false, ip: null })]);
    expect(events[0]!.failure_reason).toContain('not created on sign-in');
  });
});

describe('GET and POST /api/admin/auth/saml/settings', () => {
  const SAML = {
    enabled: true,
    entityId: 'https://idp.example.com/saml',
    signOnUrl: 'https://idp.example.com/sso',
    certificate: 'MIIC-not-a-real-certificate',
    autoCreate: false,
    unleashHostname: 'localhost',
  };

  it('answers the settings off', async () => {
    expect(await bodyOf(await call('GET', '/api/admin/auth/saml/settings'))).toEqual({ enabled: false });
  });

  it('refuses to switch SAML on (400, pointing to OpenID Connect) and stores nothing', async () => {
    const settings = await count('SELECT count(*) AS n FROM settings');
    const events = await count('SELECT count(*) AS n FROM events');
    const error = await expectError(await call('POST', '/api/admin/auth/saml/settings', { body: SAML }), 400, 'ValidationError');
    expect(error.details[0]!.message).toContain('SAML 2.0 sign-in is not offered');
    expect(error.details[0]!.message).toContain('OpenID Connect');
    expect(await count('SELECT count(*) AS n FROM settings')).toBe(settings);
    expect(await count('SELECT count(*) AS n FROM events')).toBe(events);
    expect(await bodyOf(await call('GET', '/api/admin/auth/saml/settings'))).toEqual({ enabled: false });
  });

  it('saving it off is accepted and stores nothing; non-admins are refused', async () => {
    const settings = await count('SELECT count(*) AS n FROM settings');
    const response = await call('POST', '/api/admin/auth/saml/settings', { body: { ...SAML, enabled: false } });
    expect(await bodyOf(response)).toEqual({ enabled: false });
    const token = await signInAs('Editor');
    await expectError(await call('POST', '/api/admin/auth/saml/settings', { token, body: SAML }), 403, 'NoAccessError');
    await expectError(await call('GET', '/api/admin/auth/saml/settings', { token }), 403, 'NoAccessError');
    await expectError(await call('POST', '/api/admin/auth/saml/settings', { body: { enabled: 'yes' } }), 400, 'ValidationError');
    expect(await count('SELECT count(*) AS n FROM settings')).toBe(settings);
  });
});
