/**
 * OpenID Connect: the settings (Unleash Enterprise's `/api/admin/auth/oidc/settings`), the
 * sign-in legs `/auth/oidc/login` and `/auth/oidc/callback` against a provider whose documents
 * the local receiver serves (tokens signed with a test key), the password switch
 * (`/api/admin/auth/simple/settings`) and sign-out. The flow against a real OpenID provider in
 * a browser is test/ui/sso.ui.test.ts.
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { createUser, loginAs, STRONG_PASSWORD, withSession } from './support/auth';
import { receivedAt } from './support/integrations';
import { captureLogs } from './support/logs';
import { unique } from './support/names';
import { signInAs } from './support/users';
import { serveJson, serveKeys, signToken, testKey, type TestKey } from './support/sso';
import { count, lastEvent, parsedEvent } from './support/db';
import { SSO_SYNC_USER } from '../src/db/groups';

const host = `idp-${crypto.randomUUID().slice(0, 8)}.idp.test`;
const ISSUER = `https://${host}`;
const CLIENT_ID = 'unleash-worker-test';
const CLIENT_SECRET = 'test-client-secret-0123456789';
let key: TestKey;

const SETTINGS = {
  enabled: true,
  discoverUrl: ISSUER,
  clientId: CLIENT_ID,
  secret: CLIENT_SECRET,
  autoCreate: true,
  defaultRootRole: 'Editor',
  emailDomains: '',
  enableSingleSignOut: true,
  idTokenSigningAlgorithm: 'RS256',
};

beforeAll(async () => {
  key = await testKey();
  await serveJson(`${host}/.well-known/openid-configuration`, {
    issuer: ISSUER,
    authorization_endpoint: `${ISSUER}/authorize`,
    token_endpoint: `${ISSUER}/token`,
    jwks_uri: `${ISSUER}/jwks`,
    userinfo_endpoint: `${ISSUER}/userinfo`,
    end_session_endpoint: `${ISSUER}/session/end`,
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
  });
  await serveKeys(`${host}/jwks`, [key]);
});

async function saveSettings(body: Record<string, unknown>) {
  const response = await call('POST', '/api/admin/auth/oidc/settings', { body });
  if (response.status !== 200) throw new Error(`settings: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

interface Started {
  state: string;
  nonce: string;
  challenge: string;
  cookie: string;
  location: URL;
}

async function startLogin(redirect?: string): Promise<Started> {
  const response = await call('GET', `/auth/oidc/login${redirect ? `?redirect=${encodeURIComponent(redirect)}` : ''}`, {
    token: null,
    redirect: 'manual',
  });
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get('location')!);
  const setCookie = response.headers.get('set-cookie') ?? '';
  const match = /^unleash-oidc=([A-Za-z0-9_-]{43}); Path=\/auth\/oidc; Max-Age=600; HttpOnly; SameSite=Lax$/.exec(setCookie);
  if (!match) throw new Error(`no binding cookie in ${setCookie}`);
  return {
    state: location.searchParams.get('state')!,
    nonce: location.searchParams.get('nonce')!,
    challenge: location.searchParams.get('code_challenge')!,
    cookie: `unleash-oidc=${match[1]}`,
    location,
  };
}

function idTokenClaims(started: Started, email: string, extra: Record<string, unknown> = {}) {
  return {
    iss: ISSUER,
    aud: CLIENT_ID,
    sub: crypto.randomUUID(),
    nonce: started.nonce,
    email,
    email_verified: true,
    name: 'Olive Oidc',
    ...extra,
  };
}

/** The token endpoint's next answer: this ID token. */
async function provideIdToken(idToken: string, extra: Record<string, unknown> = {}) {
  await serveJson(`${host}/token`, {
    access_token: 'test-access-token',
    token_type: 'Bearer',
    expires_in: 300,
    id_token: idToken,
    ...extra,
  });
}

function callback(started: Pick<Started, 'state' | 'cookie'>, code = 'test-code', extra = ''): Promise<Response> {
  return call('GET', `/auth/oidc/callback?code=${code}&state=${encodeURIComponent(started.state)}${extra}`, {
    token: null,
    headers: { cookie: started.cookie },
    redirect: 'manual',
  });
}

function sessionFrom(response: Response): string | null {
  const cookies = response.headers.getSetCookie();
  const session = cookies.map((cookie) => /^unleash-session=([0-9a-f]{64});/.exec(cookie)).find(Boolean);
  return session ? `unleash-session=${session[1]}` : null;
}

function expectRefused(response: Response, reason: RegExp) {
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get('location')!, 'http://localhost');
  expect(location.pathname).toBe('/login');
  expect(location.searchParams.get('errorMsg')).toMatch(reason);
  expect(sessionFrom(response)).toBeNull();
}

describe('POST /api/admin/auth/simple/settings before single sign-on is on', () => {
  it('refuses to switch passwords off (400) and writes nothing', async () => {
    const events = await count("SELECT count(*) AS n FROM events WHERE type LIKE 'setting-%'");
    const response = await call('POST', '/api/admin/auth/simple/settings', { body: { disabled: true } });
    const body = await expectError(response, 400, 'ValidationError');
    expect(body.details[0]!.message).toContain('only while single sign-on is on');
    expect(await count("SELECT count(*) AS n FROM settings WHERE name = 'unleash.auth.simple'")).toBe(0);
    expect(await count("SELECT count(*) AS n FROM events WHERE type LIKE 'setting-%'")).toBe(events);
    expect(await bodyOf(await call('GET', '/api/admin/auth/simple/settings'))).toEqual({ disabled: false });
  });

  it('the login page offers no single sign-on yet', async () => {
    const body = await expectError(await call('GET', '/api/admin/user', { token: null }), 401, 'AuthenticationRequired');
    expect(Object.keys(body)).toEqual(['id', 'name', 'message', 'details', 'path', 'type', 'defaultHidden']);
  });

  it('starting an OIDC sign-in while it is off lands on the login page with the reason', async () => {
    const response = await call('GET', '/auth/oidc/login', { token: null, redirect: 'manual' });
    expectRefused(response, /not enabled/);
  });
});

describe('GET and POST /api/admin/auth/oidc/settings', () => {
  it('answers {} before anything is saved', async () => {
    expect(await bodyOf(await call('GET', '/api/admin/auth/oidc/settings'))).toEqual({});
  });

  it('refuses callers without ADMIN (403) and anonymous ones (401); nothing is written', async () => {
    const editor = await signInAs('Editor');
    await expectError(await call('POST', '/api/admin/auth/oidc/settings', { token: editor, body: SETTINGS }), 403, 'NoAccessError');
    await expectError(await call('GET', '/api/admin/auth/oidc/settings', { token: editor }), 403, 'NoAccessError');
    await expectError(await call('POST', '/api/admin/auth/oidc/settings', { token: null, body: SETTINGS }), 401, 'AuthenticationRequired');
    expect(await count("SELECT count(*) AS n FROM settings WHERE name = 'unleash.enterprise.auth.oidc'")).toBe(0);
  });

  it('refuses incomplete or unsafe settings (400) and writes nothing', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...SETTINGS, discoverUrl: '' }, 'discoverUrl is required'],
      [{ ...SETTINGS, clientId: '' }, 'clientId is required'],
      [{ ...SETTINGS, discoverUrl: 'http://idp.example.com' }, 'https://'],
      [{ ...SETTINGS, discoverUrl: 'not a url' }, 'https://'],
      [{ ...SETTINGS, defaultRootRole: 'Overlord' }, 'Could not find root role'],
      [{ ...SETTINGS, rootRoleMapping: [{ group: 'x', rootRole: 999 }] }, 'Could not find root role'],
    ];
    for (const [body, message] of cases) {
      const error = await expectError(await call('POST', '/api/admin/auth/oidc/settings', { body }), 400, 'ValidationError');
      expect(error.details[0]!.message).toContain(message);
    }
    await expectError(
      await call('POST', '/api/admin/auth/oidc/settings', { body: { ...SETTINGS, enabled: 'yes' } }),
      400,
      'ValidationError',
    );
    await expectError(
      await call('POST', '/api/admin/auth/oidc/settings', { body: { ...SETTINGS, idTokenSigningAlgorithm: 'none' } }),
      400,
      'ValidationError',
    );
    expect(await count("SELECT count(*) AS n FROM settings WHERE name = 'unleash.enterprise.auth.oidc'")).toBe(0);
  });

  it('saves them, never echoes the secret in full, keeps it when it comes back masked, and records setting events', async () => {
    const saved = await saveSettings(SETTINGS);
    expect(saved).toMatchObject({ ...SETTINGS, secret: '********6789', defaultRootRoleId: 2, defaultRootRole: 'Editor' });
    const read = await bodyOf(await call('GET', '/api/admin/auth/oidc/settings'));
    expect(read).toEqual(saved);
    expect(JSON.stringify(read)).not.toContain(CLIENT_SECRET);
    const created = await env.DB.prepare("SELECT data FROM events WHERE type = 'setting-created' ORDER BY id DESC LIMIT 1").first<{
      data: string;
    }>();
    expect(JSON.parse(created!.data)).toMatchObject({ id: 'unleash.enterprise.auth.oidc', secret: '********6789' });
    expect(created!.data).not.toContain(CLIENT_SECRET);

    // The UI posts the form back with the masked secret: the stored one stays.
    await saveSettings({ ...read });
    const stored = await env.DB.prepare("SELECT content FROM settings WHERE name = 'unleash.enterprise.auth.oidc'").first<{
      content: string;
    }>();
    expect(JSON.parse(stored!.content).secret).toBe(CLIENT_SECRET);
    const updated = await env.DB.prepare(
      "SELECT data, pre_data AS preData FROM events WHERE type = 'setting-updated' ORDER BY id DESC LIMIT 1",
    ).first<{
      data: string;
      preData: string;
    }>();
    expect(updated!.data + updated!.preData).not.toContain(CLIENT_SECRET);
  });

  it('the login page now lists the OpenID Connect button (Unleash Enterprise `options`)', async () => {
    const body = await expectError(await call('GET', '/api/admin/user', { token: null }), 401, 'AuthenticationRequired');
    expect(body).toMatchObject({
      path: '/auth/simple/login',
      type: 'password',
      defaultHidden: false,
      options: [{ type: 'oidc', message: 'Sign in with OpenID Connect', path: '/auth/oidc/login' }],
    });
  });
});

describe('GET /auth/oidc/login', () => {
  it('redirects to the provider with the code flow, PKCE (S256), state and nonce, and stores only hashes', async () => {
    const started = await startLogin('/projects/default');
    expect(started.location.origin + started.location.pathname).toBe(`${ISSUER}/authorize`);
    const params = Object.fromEntries(started.location.searchParams);
    expect(params).toMatchObject({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: 'http://localhost/auth/oidc/callback',
      scope: 'openid email profile',
      code_challenge_method: 'S256',
    });
    for (const value of [started.state, started.nonce, started.challenge]) expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await env.DB.prepare('SELECT * FROM oidc_logins').all<Record<string, string>>();
    const stored = JSON.stringify(rows.results);
    for (const secret of [started.state, started.nonce, started.cookie.split('=')[1]!]) expect(stored).not.toContain(secret);
    expect(rows.results.some((row) => row.redirect === '/projects/default')).toBe(true);
  });

  it('keeps the redirect to paths of ours only', async () => {
    for (const redirect of ['https://evil.example.com/', '//evil.example.com', '/\\evil.example.com']) {
      await startLogin(redirect);
      const row = await env.DB.prepare('SELECT redirect FROM oidc_logins ORDER BY rowid DESC LIMIT 1').first<{ redirect: string }>();
      expect(row!.redirect).toBe('/');
    }
  });
});

describe('GET /auth/oidc/callback', () => {
  it('redeems the code with the PKCE verifier and the client secret, verifies the ID token and signs the person in', async () => {
    const started = await startLogin('/projects/default');
    const email = `${unique('oidc')}@example.com`;
    await provideIdToken(await signToken(key, idTokenClaims(started, email)));
    const before = (await receivedAt(`${host}/token`)).length;
    const response = await callback(started);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/projects/default');
    const session = sessionFrom(response);
    expect(session).not.toBeNull();
    expect(response.headers.getSetCookie().some((cookie) => cookie.startsWith('unleash-oidc=; Path=/auth/oidc; Max-Age=0'))).toBe(true);

    const tokenRequests = await receivedAt(`${host}/token`);
    expect(tokenRequests.length).toBe(before + 1);
    const tokenRequest = tokenRequests.at(-1)!;
    const form = new URLSearchParams(tokenRequest.body);
    expect(form.get('grant_type')).toBe('authorization_code');
    expect(form.get('code')).toBe('test-code');
    expect(form.get('redirect_uri')).toBe('http://localhost/auth/oidc/callback');
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(form.get('code_verifier')!)));
    const challenge = btoa(String.fromCharCode(...digest))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
    expect(challenge).toBe(started.challenge);
    expect(tokenRequest.headers.authorization).toBe(`Basic ${btoa(`${CLIENT_ID}:${CLIENT_SECRET}`)}`);

    const me = await bodyOf(await call('GET', '/api/admin/user', withSession(session!)));
    expect(me.user).toMatchObject({ email, name: 'Olive Oidc' });
    const role = await env.DB.prepare('SELECT ru.role_id AS role FROM users u JOIN role_user ru ON ru.user_id = u.id WHERE u.email = ?')
      .bind(email)
      .first<{ role: number }>();
    expect(role!.role).toBe(2);
    expect(await count('SELECT count(*) AS n FROM oidc_logins WHERE redirect = ?', '/projects/default')).toBe(1); // the earlier one, never finished
  });

  it('a replayed state fails: the second use of the same answer signs nobody in', async () => {
    const started = await startLogin();
    await provideIdToken(await signToken(key, idTokenClaims(started, `${unique('replay')}@example.com`)));
    expect(sessionFrom(await callback(started))).not.toBeNull();
    const tokenRequests = (await receivedAt(`${host}/token`)).length;
    expectRefused(await callback(started), /expired or was already used/);
    expect((await receivedAt(`${host}/token`)).length).toBe(tokenRequests);
  });

  const refusals: [string, (started: Started, email: string) => Promise<string>, RegExp][] = [
    ['a wrong nonce', (started, email) => signToken(key, idTokenClaims(started, email, { nonce: 'another-nonce' })), /nonce/],
    ['no nonce', (started, email) => signToken(key, idTokenClaims(started, email, { nonce: undefined })), /does not verify/],
    ['another audience', (started, email) => signToken(key, idTokenClaims(started, email, { aud: 'another-client' })), /does not verify/],
    [
      'another issuer',
      (started, email) => signToken(key, idTokenClaims(started, email, { iss: 'https://evil.idp.test' })),
      /does not verify/,
    ],
    [
      'an expired ID token',
      (started, email) => signToken(key, idTokenClaims(started, email, { exp: Math.floor(Date.now() / 1000) - 600 })),
      /does not verify/,
    ],
    ['an unknown key', async (started, email) => signToken(await testKey(), idTokenClaims(started, email)), /does not verify/],
    ['an unverified email', (started, email) => signToken(key, idTokenClaims(started, email, { email_verified: false })), /not verified/],
  ];
  for (const [name, token, reason] of refusals) {
    it(`refuses an ID token with ${name}: no session, nobody created`, async () => {
      const logs = captureLogs();
      const started = await startLogin();
      const email = `${unique('refused')}@example.com`;
      await provideIdToken(await token(started, email));
      const users = await count('SELECT count(*) AS n FROM users');
      expectRefused(await callback(started), reason);
      expect(await count('SELECT count(*) AS n FROM users')).toBe(users);
      // A token that does not verify is logged (without the token); an unverified email is the person's answer, not logged.
      const refusedToken = logs.entries.filter((entry) => entry.msg === 'OpenID Connect ID token refused');
      expect(refusedToken.length).toBe(name === 'an unverified email' ? 0 : 1);
    });
  }

  it('refuses an answer without the browser binding cookie (a sign-in started elsewhere), and then the state is spent', async () => {
    const started = await startLogin();
    await provideIdToken(await signToken(key, idTokenClaims(started, `${unique('binding')}@example.com`)));
    expectRefused(await callback({ ...started, cookie: 'unleash-oidc=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }), /another browser/);
    expectRefused(await callback(started), /already used/);
  });

  it('refuses an unknown state, and the provider’s own error', async () => {
    const started = await startLogin();
    expectRefused(await callback({ ...started, state: 'x'.repeat(43) }), /expired or was already used/);
    expectRefused(await callback(started, 'c', '&error=access_denied'), /access_denied/);
  });

  it('completes the claims from userinfo when the ID token has no email', async () => {
    const started = await startLogin();
    const email = `${unique('userinfo')}@example.com`;
    const claims = idTokenClaims(started, email, { email: undefined, email_verified: undefined, name: undefined });
    await serveJson(`${host}/userinfo`, { sub: claims.sub, email, email_verified: true, name: 'Uma Userinfo' });
    await provideIdToken(await signToken(key, claims));
    const session = sessionFrom(await callback(started));
    expect(session).not.toBeNull();
    expect((await bodyOf(await call('GET', '/api/admin/user', withSession(session!)))).user).toMatchObject({ email, name: 'Uma Userinfo' });
    const userinfo = (await receivedAt(`${host}/userinfo`)).at(-1)!;
    expect(userinfo.headers.authorization).toBe('Bearer test-access-token');
  });

  it('links an existing user with the same email instead of creating one', async () => {
    const email = `${unique('linked')}@example.com`;
    const user = await createUser('Viewer', { email });
    const started = await startLogin();
    await provideIdToken(await signToken(key, idTokenClaims(started, email.toUpperCase())));
    const users = await count('SELECT count(*) AS n FROM users');
    const session = sessionFrom(await callback(started));
    expect((await bodyOf(await call('GET', '/api/admin/user', withSession(session!)))).user.id).toBe(user.id);
    expect(await count('SELECT count(*) AS n FROM users')).toBe(users);
  });
});

describe('POST /logout after an OIDC sign-in', () => {
  it("ends our session and sends the browser to the provider's end-session endpoint (single sign-out on)", async () => {
    const started = await startLogin();
    await provideIdToken(await signToken(key, idTokenClaims(started, `${unique('logout')}@example.com`)));
    const session = sessionFrom(await callback(started))!;
    const response = await call('POST', '/logout', { ...withSession(session), redirect: 'manual' });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(`${ISSUER}/session/end`);
    expect(Object.fromEntries(location.searchParams)).toEqual({ client_id: CLIENT_ID, post_logout_redirect_uri: 'http://localhost/login' });
    expect((await call('GET', '/api/admin/user', withSession(session))).status).toBe(401);
  });
});

describe('Password sign-in switched off (SSO on)', () => {
  it('refuses every password but the break-glass admin’s, hides the form, and switches back on', async () => {
    const person = await createUser('Admin');
    const adminPassword = await call('POST', '/api/admin/user-admin/1/change-password', { body: { password: STRONG_PASSWORD } });
    expect(adminPassword.status).toBe(200);

    const response = await call('POST', '/api/admin/auth/simple/settings', { body: { disabled: true } });
    expect(await bodyOf(response)).toEqual({ disabled: true });
    const event = await env.DB.prepare("SELECT data FROM events WHERE type = 'setting-created' ORDER BY id DESC LIMIT 1").first<{
      data: string;
    }>();
    expect(JSON.parse(event!.data)).toEqual({ id: 'unleash.auth.simple', disabled: true });

    const sessions = await count('SELECT count(*) AS n FROM sessions WHERE user_id = ?', person.id);
    const refused = await call('POST', '/auth/simple/login', {
      token: null,
      body: { username: person.username, password: person.password },
    });
    await expectError(refused, 401, 'AuthenticationRequired');
    expect(refused.headers.get('set-cookie')).toBeNull();
    expect(await count('SELECT count(*) AS n FROM sessions WHERE user_id = ?', person.id)).toBe(sessions);

    expect(await loginAs('admin', STRONG_PASSWORD)).toMatch(/^unleash-session=/);

    const hint = await expectError(await call('GET', '/api/admin/user', { token: null }), 401, 'AuthenticationRequired');
    expect(hint).toMatchObject({ defaultHidden: true, options: [{ type: 'oidc' }] });

    expect(await bodyOf(await call('POST', '/api/admin/auth/simple/settings', { body: { disabled: false } }))).toEqual({ disabled: false });
    expect(await loginAs(person.username, person.password)).toMatch(/^unleash-session=/);
  });

  it('refuses non-admins (403) and writes nothing', async () => {
    const editor = await signInAs('Editor');
    await expectError(
      await call('POST', '/api/admin/auth/simple/settings', { token: editor, body: { disabled: true } }),
      403,
      'NoAccessError',
    );
    expect(await bodyOf(await call('GET', '/api/admin/auth/simple/settings'))).toEqual({ disabled: false });
  });
});

describe('SSO group sync on every OIDC sign-in', () => {
  async function signIn(email: string, groups: unknown): Promise<number> {
    const started = await startLogin();
    await provideIdToken(await signToken(key, idTokenClaims(started, email, { groups })));
    const response = await callback(started);
    expect(sessionFrom(response)).not.toBeNull();
    const row = await env.DB.prepare('SELECT id FROM users WHERE email = ?').bind(email).first<{ id: number }>();
    return row!.id;
  }
  const memberships = (userId: number) =>
    env.DB.prepare(
      'SELECT g.name AS name, gu.created_by AS createdBy FROM group_user gu JOIN groups g ON g.id = gu.group_id WHERE gu.user_id = ? ORDER BY g.name',
    )
      .bind(userId)
      .all<{ name: string; createdBy: string }>()
      .then((result) => result.results);
  async function group(name: string, mappingsSSO: string[], users: number[] = []) {
    const response = await call('POST', '/api/admin/groups', { body: { name, mappingsSSO, users: users.map((id) => ({ user: { id } })) } });
    expect(response.status).toBe(201);
    return bodyOf(response);
  }

  it('adds the person to the groups their claim maps to, and removes only the memberships sync made', async () => {
    await saveSettings({ ...SETTINGS, enableGroupSyncing: true, groupJsonPath: 'groups' });
    const email = `${unique('sync')}@example.com`;
    const first = await signIn(email, []);
    const prefix = unique('g');
    await group(`${prefix}-dev`, ['okta-dev', 'entra-dev']);
    await group(`${prefix}-ops`, ['okta-ops']);
    await group(`${prefix}-manual`, ['okta-manual'], [first]);
    await group(`${prefix}-unmapped`, []);

    const userId = await signIn(email, ['entra-dev', 'okta-ops', 'not-mapped']);
    expect(userId).toBe(first);
    expect(await memberships(userId)).toEqual([
      { name: `${prefix}-dev`, createdBy: SSO_SYNC_USER },
      { name: `${prefix}-manual`, createdBy: expect.not.stringMatching(/^SSO$/) },
      { name: `${prefix}-ops`, createdBy: SSO_SYNC_USER },
    ]);
    expect(parsedEvent(await lastEvent('group-user-added'))).toMatchObject({ createdBy: 'SSO', data: { userId } });

    // The person left ops in the identity provider: sync removes that one; the admin's membership stays.
    await signIn(email, ['entra-dev']);
    expect((await memberships(userId)).map((m) => m.name)).toEqual([`${prefix}-dev`, `${prefix}-manual`]);
    expect(parsedEvent(await lastEvent('group-user-removed'))).toMatchObject({ createdBy: 'SSO', preData: { userId } });
    await saveSettings(SETTINGS);
  });

  it('leaves memberships alone while group syncing is off', async () => {
    await saveSettings({ ...SETTINGS, enableGroupSyncing: true, groupJsonPath: 'groups' });
    const email = `${unique('nosync')}@example.com`;
    const mapping = unique('okta-team');
    await group(unique('g-sync'), [mapping]);
    const userId = await signIn(email, [mapping]);
    expect(await memberships(userId)).toHaveLength(1);
    await saveSettings(SETTINGS);
    await signIn(email, []);
    expect(await memberships(userId)).toHaveLength(1);
  });

  it("gives the person the group's project roles on their next request after signing in", async () => {
    await saveSettings({ ...SETTINGS, enableGroupSyncing: true, groupJsonPath: 'realm_access.roles' });
    const project = (await bodyOf(await call('POST', '/api/admin/projects', { body: { id: unique('gsp'), name: 'sync' } }))).id;
    const mapping = unique('kc-role');
    const team = await group(unique('g-kc'), [mapping]);
    expect((await call('PUT', `/api/admin/projects/${project}/groups/${team.id}/roles`, { body: { roles: [5] } })).status).toBe(200);
    const email = `${unique('kc')}@example.com`;
    const started = await startLogin();
    await provideIdToken(await signToken(key, idTokenClaims(started, email, { realm_access: { roles: [mapping] } })));
    const session = sessionFrom(await callback(started))!;
    const created = await call('POST', `/api/admin/projects/${project}/features`, withSession(session, { body: { name: unique('f') } }));
    expect(created.status).toBe(201);
    await saveSettings(SETTINGS);
  });

  it('takes them away on the next request of a session still open once a sign-in no longer claims the group', async () => {
    await saveSettings({ ...SETTINGS, enableGroupSyncing: true, groupJsonPath: 'groups' });
    const project = (await bodyOf(await call('POST', '/api/admin/projects', { body: { id: unique('gsr'), name: 'sync' } }))).id;
    const mapping = unique('okta-leaves');
    const team = await group(unique('g-leaves'), [mapping]);
    expect((await call('PUT', `/api/admin/projects/${project}/groups/${team.id}/roles`, { body: { roles: [5] } })).status).toBe(200);
    const email = `${unique('leaves')}@example.com`;
    const started = await startLogin();
    await provideIdToken(await signToken(key, idTokenClaims(started, email, { groups: [mapping] })));
    const session = sessionFrom(await callback(started))!;
    const listed = async () => (await bodyOf(await call('GET', '/api/admin/user', withSession(session)))).permissions;
    const createFlag = () => call('POST', `/api/admin/projects/${project}/features`, withSession(session, { body: { name: unique('f') } }));
    expect(await listed()).toContainEqual({ permission: 'CREATE_FEATURE', project });
    expect((await createFlag()).status).toBe(201);
    // Signing in elsewhere without the group: sync removes the membership, and the first session loses the rights.
    await signIn(email, []);
    expect(await listed()).not.toContainEqual({ permission: 'CREATE_FEATURE', project });
    await expectError(await createFlag(), 403, 'NoAccessError');
    await saveSettings(SETTINGS);
  });
});
