/**
 * Cloudflare Access: a request carrying `Cf-Access-Jwt-Assertion` signs its person in when
 * ACCESS_TEAM_DOMAIN and ACCESS_AUD are set. Tokens are signed with test key pairs; the team's
 * key set is served by the local receiver at a made-up team domain.
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../src/env';
import { ADMIN_TOKEN, BASE, bodyOf, envWith, expectError, fetchWith } from './support/http';
import { createUser, loginAs } from './support/auth';
import { receivedAt } from './support/integrations';
import { captureLogs } from './support/logs';
import { unique } from './support/names';
import { serveKeys, signToken, tamper, teamDomain, testKey, type TestKey } from './support/sso';

const AUD = 'test-access-aud-0123456789abcdef';
let team: { domain: string; certs: string };
let key: TestKey;
let accessEnv: Env;

beforeAll(async () => {
  team = teamDomain();
  key = await testKey();
  await serveKeys(team.certs, [key]);
  accessEnv = envWith({ ACCESS_TEAM_DOMAIN: team.domain, ACCESS_AUD: AUD });
});

function accessRequest(
  token: string | null,
  method = 'GET',
  path = '/api/admin/user',
  options: { body?: unknown; headers?: Record<string, string>; workerEnv?: Env } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  if (token !== null) headers['cf-access-jwt-assertion'] = token;
  return fetchWith(options.workerEnv ?? accessEnv, method, path, headers, options.body);
}

function claimsFor(email: string, extra: Record<string, unknown> = {}) {
  return { iss: team.domain, aud: [AUD], email, sub: crypto.randomUUID(), type: 'app', ...extra };
}

async function userCount(email?: string): Promise<number> {
  const row = email
    ? await env.DB.prepare('SELECT count(*) AS n FROM users WHERE email = ?').bind(email).first<{ n: number }>()
    : await env.DB.prepare('SELECT count(*) AS n FROM users').first<{ n: number }>();
  return row!.n;
}

function email(): string {
  return `${unique('access')}@example.com`.toLowerCase();
}

describe('Cloudflare Access sign-in', () => {
  it('a valid assertion signs a new person in: created from the email and name as a Viewer, then reused', async () => {
    const address = email();
    const token = await signToken(key, claimsFor(address, { name: 'Ada Access' }));
    const first = await accessRequest(token);
    expect(first.status).toBe(200);
    const me = await bodyOf(first);
    expect(me.user).toMatchObject({ email: address, name: 'Ada Access', isAPI: false });
    expect(me.permissions).toEqual([]);

    const row = await env.DB.prepare(
      `SELECT u.id, u.seen_at AS seenAt, u.password_hash AS passwordHash, ru.role_id AS role FROM users u JOIN role_user ru ON ru.user_id = u.id WHERE u.email = ?`,
    )
      .bind(address)
      .first<{ id: number; seenAt: string | null; passwordHash: string | null; role: number }>();
    expect(row).toMatchObject({ id: me.user.id, role: 3, passwordHash: null });
    expect(row!.seenAt).not.toBeNull();
    const event = await env.DB.prepare(
      "SELECT created_by AS createdBy, data FROM events WHERE type = 'user-created' ORDER BY id DESC LIMIT 1",
    ).first<{
      createdBy: string;
      data: string;
    }>();
    expect(event!.createdBy).toBe('unleash_system_user');
    expect(JSON.parse(event!.data)).toMatchObject({ id: me.user.id, email: address, rootRole: 3 });

    // The next request (a new token, as Access issues them) is the same person, not a new user.
    const again = await accessRequest(await signToken(key, claimsFor(address)));
    expect((await bodyOf(again)).user.id).toBe(me.user.id);
    expect(await userCount(address)).toBe(1);
  });

  it('links an existing user with that email (any case) and answers as them, with their permissions', async () => {
    const address = email();
    const editor = await createUser('Editor', { email: address });
    const before = await userCount();
    const token = await signToken(key, claimsFor(address.toUpperCase()));
    const me = await bodyOf(await accessRequest(token));
    expect(me.user.id).toBe(editor.id);
    expect(await userCount()).toBe(before);

    const flag = unique('access-flag');
    const created = await accessRequest(token, 'POST', '/api/admin/projects/default/features', {
      body: { name: flag },
      headers: { origin: BASE },
    });
    expect(created.status).toBe(201);
    const event = await env.DB.prepare("SELECT created_by AS createdBy FROM events WHERE type = 'feature-created' AND feature_name = ?")
      .bind(flag)
      .first<{ createdBy: string }>();
    expect(event!.createdBy).toBe(editor.username);
  });

  it('writes need our own origin, as with the session cookie (the browser sends Access its cookie everywhere)', async () => {
    const address = email();
    await createUser('Editor', { email: address });
    const token = await signToken(key, claimsFor(address));
    const flag = unique('access-csrf');
    const forged = await accessRequest(token, 'POST', '/api/admin/projects/default/features', {
      body: { name: flag },
      headers: { origin: 'https://evil.example.com' },
    });
    await expectError(forged, 403, 'NoAccessError');
    const row = await env.DB.prepare('SELECT count(*) AS n FROM features WHERE name = ?').bind(flag).first<{ n: number }>();
    expect(row!.n).toBe(0);
  });

  it('a Viewer signed in by Access is refused a write (403) and nothing is written', async () => {
    const address = email();
    const token = await signToken(key, claimsFor(address));
    const flag = unique('access-viewer');
    const refused = await accessRequest(token, 'POST', '/api/admin/projects/default/features', {
      body: { name: flag },
      headers: { origin: BASE },
    });
    await expectError(refused, 403, 'NoAccessError');
    const row = await env.DB.prepare('SELECT count(*) AS n FROM features WHERE name = ?').bind(flag).first<{ n: number }>();
    expect(row!.n).toBe(0);
  });

  describe('assertions that never authenticate (401, nobody created)', () => {
    const cases: [string, () => Promise<string>][] = [
      ['expired (past the 30 s skew)', async () => signToken(key, claimsFor(email(), { exp: Math.floor(Date.now() / 1000) - 120 }))],
      [
        'not yet valid (nbf ahead, past the skew)',
        async () => signToken(key, claimsFor(email(), { nbf: Math.floor(Date.now() / 1000) + 300 })),
      ],
      ['for another application (wrong aud)', async () => signToken(key, claimsFor(email(), { aud: ['another-application'] }))],
      ['from another team (wrong iss)', async () => signToken(key, claimsFor(email(), { iss: 'https://other-team.cloudflareaccess.com' }))],
      ['signed with a key the team does not have (unknown kid)', async () => signToken(await testKey(), claimsFor(email()))],
      ['signed with another key under a known kid', async () => signToken(await testKey(), claimsFor(email()), { kid: key.kid })],
      [
        'with a tampered payload',
        async () => tamper(await signToken(key, claimsFor(email())), (payload) => (payload.email = 'admin@example.com')),
      ],
      [
        'without an email (a service token)',
        async () => signToken(key, { iss: team.domain, aud: [AUD], common_name: 'ci.access', sub: '' }),
      ],
      ['that is not a JWT at all', async () => 'not-a-token'],
    ];
    for (const [name, make] of cases) {
      it(name, async () => {
        const logs = captureLogs();
        const before = await userCount();
        const response = await accessRequest(await make());
        const body = await expectError(response, 401, 'AuthenticationRequired');
        expect(body.message).toBe('You must log in to use Unleash.');
        expect(await userCount()).toBe(before);
        // An assertion that does not verify is logged; a valid one without an email (a service token) is nobody, not an attack.
        expect(logs.messages()).toEqual(name.startsWith('without an email') ? [] : ['Cloudflare Access assertion refused']);
      });
    }

    it('a valid assertion also fails the other checks if its signature is cut off', async () => {
      const logs = captureLogs();
      const token = await signToken(key, claimsFor(email()));
      await expectError(await accessRequest(token.slice(0, token.lastIndexOf('.') + 1)), 401, 'AuthenticationRequired');
      expect(logs.messages()).toEqual(['Cloudflare Access assertion refused']);
    });
  });

  it('allows a small clock skew: a token expired 10 s ago still passes', async () => {
    const token = await signToken(key, claimsFor(email(), { exp: Math.floor(Date.now() / 1000) - 10 }));
    expect((await accessRequest(token)).status).toBe(200);
  });

  it("picks up rotated keys: a token under the team's new key passes, one under the retired key no longer does", async () => {
    const rotation = teamDomain();
    const oldKey = await testKey();
    const newKey = await testKey();
    const rotationEnv = envWith({ ACCESS_TEAM_DOMAIN: rotation.domain, ACCESS_AUD: AUD });
    const claims = (address: string) => ({ iss: rotation.domain, aud: AUD, email: address, sub: crypto.randomUUID() });
    await serveKeys(rotation.certs, [oldKey]);
    const address = email();
    expect(
      (await accessRequest(await signToken(oldKey, claims(address)), 'GET', '/api/admin/user', { workerEnv: rotationEnv })).status,
    ).toBe(200);
    // Cached: a second request does not fetch the key set again.
    expect(
      (await accessRequest(await signToken(oldKey, claims(address)), 'GET', '/api/admin/user', { workerEnv: rotationEnv })).status,
    ).toBe(200);
    expect((await receivedAt(rotation.certs)).length).toBe(1);

    await serveKeys(rotation.certs, [newKey]);
    // An unknown key id fetches the key set again, at most once every 2 s.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const rotated = await accessRequest(await signToken(newKey, claims(address)), 'GET', '/api/admin/user', { workerEnv: rotationEnv });
    expect(rotated.status).toBe(200);
    expect((await receivedAt(rotation.certs)).length).toBe(2);
    const logs = captureLogs();
    const retired = await accessRequest(await signToken(oldKey, claims(address)), 'GET', '/api/admin/user', { workerEnv: rotationEnv });
    await expectError(retired, 401, 'AuthenticationRequired');
    expect(logs.messages()).toEqual(['Cloudflare Access assertion refused']);
  });

  it('without ACCESS_TEAM_DOMAIN and ACCESS_AUD the header is ignored: no credential, the login hint', async () => {
    const token = await signToken(key, claimsFor(email()));
    const response = await accessRequest(token, 'GET', '/api/admin/user', { workerEnv: env as unknown as Env });
    const body = await expectError(response, 401, 'AuthenticationRequired');
    expect(body).toMatchObject({ path: '/auth/simple/login', type: 'password', defaultHidden: false });
  });

  it('with Access configured, requests without the header still use the session cookie or a key', async () => {
    const user = await createUser('Viewer');
    const cookie = await loginAs(user.username, user.password);
    const bySession = await accessRequest(null, 'GET', '/api/admin/user', { headers: { cookie } });
    expect((await bodyOf(bySession)).user.id).toBe(user.id);
    const byKey = await accessRequest(null, 'GET', '/api/admin/user', { headers: { authorization: ADMIN_TOKEN } });
    expect(byKey.status).toBe(200);
  });

  it('signing out of a person signed in by Access ends at the Access sign-out page', async () => {
    const token = await signToken(key, claimsFor(email()));
    const response = await accessRequest(token, 'POST', '/logout', { headers: { origin: BASE } });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/cdn-cgi/access/logout');
  });

  it('the team key set is fetched from the configured team domain only', async () => {
    const requests = await receivedAt(team.certs);
    expect(requests.length).toBeGreaterThanOrEqual(1);
    expect(requests.every((request) => request.url === `${team.domain}/cdn-cgi/access/certs`)).toBe(true);
  });
});

describe('Cloudflare Access provisioning rules (from the OIDC settings)', () => {
  async function saveSettings(body: Record<string, unknown>) {
    const response = await accessRequest(null, 'POST', '/api/admin/auth/oidc/settings', { headers: { authorization: ADMIN_TOKEN }, body });
    expect(response.status).toBe(200);
  }

  it('auto-create off: existing people sign in, new ones are refused (403) and not created', async () => {
    await saveSettings({ enabled: false, autoCreate: false });
    try {
      const address = email();
      const refused = await accessRequest(await signToken(key, claimsFor(address)));
      const body = await expectError(refused, 403, 'NoAccessError');
      expect(body.message).toContain('new accounts are not created on sign-in');
      expect(await userCount(address)).toBe(0);
      const existing = email();
      const user = await createUser('Viewer', { email: existing });
      expect((await bodyOf(await accessRequest(await signToken(key, claimsFor(existing))))).user.id).toBe(user.id);
    } finally {
      await saveSettings({ enabled: false, autoCreate: true });
    }
  });

  it('email-domain allow list and default root role: allowed domains get the role, others are refused', async () => {
    await saveSettings({ enabled: false, autoCreate: true, emailDomains: '@allowed.example, second.example', defaultRootRole: 'Editor' });
    try {
      const allowed = `${unique('dom')}@Allowed.Example`;
      const created = await accessRequest(await signToken(key, claimsFor(allowed)));
      expect(created.status).toBe(200);
      const role = await env.DB.prepare('SELECT ru.role_id AS role FROM users u JOIN role_user ru ON ru.user_id = u.id WHERE u.email = ?')
        .bind(allowed.toLowerCase())
        .first<{ role: number }>();
      expect(role!.role).toBe(2);
      const other = `${unique('dom')}@elsewhere.example`;
      const refused = await accessRequest(await signToken(key, claimsFor(other)));
      await expectError(refused, 403, 'NoAccessError');
      expect(await userCount(other)).toBe(0);
    } finally {
      await saveSettings({ enabled: false, autoCreate: true });
    }
  });

  it('maps a group claim to a root role on creation', async () => {
    await saveSettings({
      enabled: false,
      autoCreate: true,
      enableGroupSyncing: true,
      groupJsonPath: 'custom.groups',
      rootRoleMapping: [
        { group: 'flag-admins', rootRole: 'Admin' },
        { group: 'flag-editors', rootRole: 2 },
      ],
    });
    try {
      const admin = email();
      await accessRequest(await signToken(key, claimsFor(admin, { custom: { groups: ['staff', 'flag-admins'] } })));
      const editor = email();
      await accessRequest(await signToken(key, claimsFor(editor, { custom: { groups: 'flag-editors' } })));
      const plain = email();
      await accessRequest(await signToken(key, claimsFor(plain, { groups: ['flag-admins'] })));
      const roles = await env.DB.prepare(
        'SELECT u.email, ru.role_id AS role FROM users u JOIN role_user ru ON ru.user_id = u.id WHERE u.email IN (?, ?, ?)',
      )
        .bind(admin, editor, plain)
        .all<{ email: string; role: number }>();
      expect(Object.fromEntries(roles.results.map((row) => [row.email, row.role]))).toEqual({ [admin]: 1, [editor]: 2, [plain]: 3 });
    } finally {
      await saveSettings({ enabled: false, autoCreate: true });
    }
  });
});

describe('Cloudflare Access sign-in and SSO group sync', () => {
  it('joins the groups the Access claim maps to once the OIDC group-sync settings are saved, and not before', async () => {
    const mapping = unique('access-team');
    const created = await fetchWith(
      env,
      'POST',
      '/api/admin/groups',
      { authorization: ADMIN_TOKEN },
      { name: unique('access-g'), mappingsSSO: [mapping] },
    );
    expect(created.status).toBe(201);
    const group = await bodyOf(created);
    const memberships = (userId: number) =>
      env.DB.prepare('SELECT created_by AS createdBy FROM group_user WHERE group_id = ? AND user_id = ?').bind(group.id, userId).all();

    // Without saved group-sync settings, the claim is not read.
    const before = await accessRequest(await signToken(key, claimsFor(email(), { groups: [mapping] })));
    expect(before.status).toBe(200);
    expect((await memberships((await bodyOf(before)).user.id)).results).toEqual([]);

    const saved = await fetchWith(
      env,
      'POST',
      '/api/admin/auth/oidc/settings',
      { authorization: ADMIN_TOKEN },
      // Saved OIDC settings also rule Access sign-ins' account creation: keep creating people.
      { enabled: false, autoCreate: true, enableGroupSyncing: true, groupJsonPath: 'groups' },
    );
    expect(saved.status).toBe(200);
    try {
      const after = await accessRequest(await signToken(key, claimsFor(email(), { groups: [mapping, 'unmapped'] })));
      expect(after.status).toBe(200);
      expect((await memberships((await bodyOf(after)).user.id)).results).toEqual([{ createdBy: 'SSO' }]);
    } finally {
      await fetchWith(
        env,
        'POST',
        '/api/admin/auth/oidc/settings',
        { authorization: ADMIN_TOKEN },
        { enabled: false, autoCreate: true, enableGroupSyncing: false },
      );
    }
  });
});
