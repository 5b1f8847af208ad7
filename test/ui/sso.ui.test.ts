/**
 * Single sign-on with OpenID Connect, end to end: Unleash's own UI in Chromium, the Worker under
 * `wrangler dev` (client secret as a Worker secret) and a real OpenID provider (`oidc-provider`,
 * started here). The person clicks the UI's SSO button, signs in at the provider and lands in
 * the UI as the user provisioned with the default root role.
 */
import type { Browser, Page } from 'playwright-core';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  apiJson,
  launchBrowser,
  runFlow,
  SIGNED_OUT,
  startServer,
  writeCallSummary,
  type Server,
  type Session,
} from './support/harness';
import { startProvider, type TestProvider } from './support/oidc-provider';
import { createPerson, ROOT_ROLE, setPassword } from './support/setup';

const CLIENT_ID = 'unleash-ui-test';
const CLIENT_SECRET = 'ui-test-oidc-client-secret-0123456789';
const BREAK_GLASS_PASSWORD = 'Break-Glass-Passw0rd!';
const run = Date.now().toString(36);

let server: Server;
let provider: TestProvider;
let browser: Browser;

async function saveSettings(changes: Record<string, unknown> = {}) {
  await apiJson(server.base, 'POST', '/api/admin/auth/oidc/settings', {
    enabled: true,
    discoverUrl: provider.issuer,
    clientId: CLIENT_ID,
    autoCreate: true,
    defaultRootRole: 'Editor',
    enableSingleSignOut: true,
    ...changes,
  });
}

/** Cloudflare Access's side, played by the test: a team key set on loopback and tokens signed with its key. */
const ACCESS_AUD = 'ui-test-access-aud';
let accessKey: { kid: string; privateKey: CryptoKey };
let teamServer: ReturnType<typeof createServer>;
let teamDomain: string;

async function startTeam(): Promise<void> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  accessKey = { kid: 'ui-access-key', privateKey };
  const jwk = { ...(await exportJWK(publicKey)), kid: accessKey.kid, alg: 'RS256', use: 'sig' };
  teamServer = createServer((request, response) => {
    if (request.url !== '/cdn-cgi/access/certs') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => teamServer.listen(0, '127.0.0.1', resolve));
  teamDomain = `http://127.0.0.1:${(teamServer.address() as AddressInfo).port}`;
}

function accessToken(email: string): Promise<string> {
  return new SignJWT({ email, type: 'app' })
    .setProtectedHeader({ alg: 'RS256', kid: accessKey.kid })
    .setIssuer(teamDomain)
    .setAudience(ACCESS_AUD)
    .setSubject(email)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(accessKey.privateKey);
}

beforeAll(async () => {
  await startTeam();
  server = await startServer({ OIDC_CLIENT_SECRET: CLIENT_SECRET, ACCESS_TEAM_DOMAIN: teamDomain, ACCESS_AUD });
  provider = await startProvider({ workerBase: server.base, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
  browser = await launchBrowser();
  await saveSettings();
}, 600_000);

afterAll(async () => {
  writeCallSummary();
  await browser?.close();
  await provider?.stop();
  await server?.stop();
  await new Promise((resolve) => teamServer?.close(resolve));
});

async function usersWithEmail(email: string): Promise<{ id: number; rootRole: number }[]> {
  const { users } = await apiJson<{ users: { id: number; email?: string; rootRole: number }[] }>(
    server.base,
    'GET',
    '/api/admin/user-admin',
  );
  return users.filter((user) => user.email === email);
}

/** From the UI's login page to the provider and back: the SSO button, its sign-in (any password) and consent. */
async function throughProvider(page: Page, email: string): Promise<void> {
  await page.goto('/login');
  await page.getByTestId('SSO_LOGIN_BUTTON-oidc').click();
  await page.waitForURL((url) => url.origin === provider.issuer);
  await page.locator('input[name="login"]').fill(email);
  await page.locator('input[name="password"]').fill('anything-goes');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

/** The whole sign-in, back through our callback. Answers the callback URL the browser was sent to. */
async function signInWithSso(session: Session, email: string): Promise<string> {
  const { page } = session;
  session.expect(...SIGNED_OUT);
  let callbackUrl = '';
  page.on('request', (request) => {
    if (request.url().startsWith(`${server.base}/auth/oidc/callback`)) callbackUrl = request.url();
  });
  await throughProvider(page, email);
  await page.waitForURL((url) => url.origin === server.base && !url.pathname.startsWith('/auth/'));
  return callbackUrl;
}

async function whoAmI(session: Session): Promise<{ email: string; permissions: string[] }> {
  return session.page.evaluate(async () => {
    const body = await (await fetch('/api/admin/user')).json();
    return { email: body.user.email, permissions: body.permissions.map((p: { permission: string }) => p.permission) };
  });
}

describe('single sign-on with OpenID Connect in the UI', () => {
  it('the SSO button signs a new person in as an Editor, who creates a flag; a second sign-in is the same user', async () => {
    const email = `editor-${run}@example.com`;
    const flagName = `sso-flag-${run}`;
    await runFlow(
      browser,
      server.base,
      'sso-editor',
      async (session) => {
        const { page } = session;
        await signInWithSso(session, email);
        expect(new URL(page.url()).pathname).not.toMatch(/^\/login/);
        const me = await whoAmI(session);
        expect(me.email).toBe(email);
        expect(me.permissions).toContain('CREATE_FEATURE');

        await page.goto('/projects/default');
        await page.waitForLoadState('networkidle');
        const newFlag = page.locator('button', { hasText: 'New feature flag' }).last();
        await expect.poll(() => newFlag.isEnabled(), { timeout: 60_000 }).toBe(true);
        await newFlag.click();
        const dialog = page.getByRole('dialog').last();
        await dialog.getByTestId('FORM_NAME_INPUT').locator('input').fill(flagName);
        const created = page.waitForResponse(
          (r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/projects/default/features'),
        );
        await dialog.getByTestId('FORM_CREATE_BUTTON').click();
        expect((await created).status()).toBe(201);
        await page.waitForURL(new RegExp(`/projects/default/features/${flagName}$`));
      },
      [provider.issuer],
    );
    const users = await usersWithEmail(email);
    expect(users).toEqual([expect.objectContaining({ rootRole: 2 })]);
    const flag = await apiJson<{ name: string; createdBy?: { id: number } }>(
      server.base,
      'GET',
      `/api/admin/projects/default/features/${flagName}`,
    );
    expect(flag.name).toBe(flagName);

    // Signing in again (a new browser) reuses the user.
    await runFlow(browser, server.base, 'sso-again', async (session) => expect((await signInWithSso(session, email)) !== '').toBe(true), [
      provider.issuer,
    ]);
    expect((await usersWithEmail(email)).map((user) => user.id)).toEqual(users.map((user) => user.id));
  });

  it('with Viewer as the default role the new person is signed in but refused creating a flag; nothing is written', async () => {
    await saveSettings({ defaultRootRole: 'Viewer' });
    const email = `viewer-${run}@example.com`;
    const flagName = `sso-viewer-flag-${run}`;
    try {
      await runFlow(
        browser,
        server.base,
        'sso-viewer',
        async (session) => {
          const { page } = session;
          await signInWithSso(session, email);
          const me = await whoAmI(session);
          expect(me.email).toBe(email);
          expect(me.permissions).not.toContain('CREATE_FEATURE');
          await page.goto('/projects/default');
          await page.waitForLoadState('networkidle');
          // Shown, but disabled with a lock: the person lacks CREATE_FEATURE.
          const button = page.locator('button', { hasText: 'New feature flag' }).last();
          await expect.poll(() => button.isVisible(), { timeout: 60_000 }).toBe(true);
          expect(await button.isDisabled()).toBe(true);
          // The API refuses it too, from the UI's own origin.
          session.expect({ method: 'POST', path: /^\/api\/admin\/projects\/default\/features$/, status: 403 });
          const status = await page.evaluate(async (name) => {
            const response = await fetch('/api/admin/projects/default/features', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ name }),
            });
            return response.status;
          }, flagName);
          expect(status).toBe(403);
        },
        [provider.issuer],
      );
      expect(await usersWithEmail(email)).toEqual([expect.objectContaining({ rootRole: 3 })]);
      expect((await api(server.base, 'GET', `/api/admin/projects/default/features/${flagName}`)).status).toBe(404);
    } finally {
      await saveSettings();
    }
  });

  it('a replayed callback (same state, same browser cookie) signs nobody in', async () => {
    const email = `replay-${run}@example.com`;
    let callbackUrl = '';
    let binding = '';
    await runFlow(
      browser,
      server.base,
      'sso-replay',
      async (session) => {
        const { page } = session;
        page.on('request', (request) => {
          const header = request.headers().cookie ?? '';
          const match = /unleash-oidc=([A-Za-z0-9_-]+)/.exec(header);
          if (match && request.url().startsWith(`${server.base}/auth/oidc/callback`)) binding = match[1]!;
        });
        callbackUrl = await signInWithSso(session, email);
      },
      [provider.issuer],
    );
    expect(callbackUrl).toContain('state=');
    expect(binding).not.toBe('');
    const replayed = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: `unleash-oidc=${binding}` } });
    expect(replayed.status).toBe(302);
    expect(decodeURIComponent(replayed.headers.get('location')!)).toMatch(/^\/login\?errorMsg=.*already used/);
    expect(replayed.headers.getSetCookie().some((cookie) => cookie.startsWith('unleash-session='))).toBe(false);
  });

  it('an ID token for another nonce is refused: the login page says why', async () => {
    const email = `nonce-${run}@example.com`;
    await runFlow(
      browser,
      server.base,
      'sso-nonce',
      async (session) => {
        const { page } = session;
        session.expect(...SIGNED_OUT);
        // Our redirect to the provider is changed on its way: the provider will sign another nonce.
        await page.route(
          (url) => url.origin === server.base && url.pathname === '/auth/oidc/login',
          async (route) => {
            const response = await route.fetch({ maxRedirects: 0 });
            const location = new URL(response.headers().location!);
            location.searchParams.set('nonce', 'a-nonce-of-someone-else');
            await route.fulfill({ response, headers: { ...response.headers(), location: location.href } });
          },
        );
        await throughProvider(page, email);
        await page.waitForURL((url) => url.origin === server.base && url.pathname === '/login');
        await expect.poll(() => page.locator('body').innerText()).toContain('does not belong to this sign-in (nonce)');
      },
      [provider.issuer],
    );
    expect(await usersWithEmail(email)).toEqual([]);
  });

  it('the email-domain allow list refuses people of other domains: not created, told why', async () => {
    await saveSettings({ emailDomains: '@allowed.example' });
    try {
      const email = `outsider-${run}@example.com`;
      await runFlow(
        browser,
        server.base,
        'sso-domain',
        async (session) => {
          const { page } = session;
          session.expect(...SIGNED_OUT);
          await throughProvider(page, email);
          await page.waitForURL((url) => url.origin === server.base && url.pathname === '/login');
          await expect.poll(() => page.locator('body').innerText()).toContain('example.com addresses are not created on sign-in');
        },
        [provider.issuer],
      );
      expect(await usersWithEmail(email)).toEqual([]);
      // Someone of the allowed domain gets in.
      const insider = `insider-${run}@allowed.example`;
      await runFlow(browser, server.base, 'sso-domain-allowed', async (session) => void (await signInWithSso(session, insider)), [
        provider.issuer,
      ]);
      expect(await usersWithEmail(insider)).toHaveLength(1);
    } finally {
      await saveSettings();
    }
  });

  it('password sign-in switched off: the login page shows only the SSO button; passwords are refused except the break-glass admin’s', async () => {
    const password = 'Person-Passw0rd!x';
    await createPerson(server.base, { username: `pw-${run}`, password, rootRole: ROOT_ROLE.admin });
    await setPassword(server.base, 1, BREAK_GLASS_PASSWORD);
    expect(await apiJson(server.base, 'POST', '/api/admin/auth/simple/settings', { disabled: true })).toEqual({ disabled: true });
    try {
      await runFlow(
        browser,
        server.base,
        'sso-password-off',
        async (session) => {
          const { page } = session;
          session.expect(...SIGNED_OUT);
          await page.goto('/login');
          await expect.poll(() => page.getByTestId('SSO_LOGIN_BUTTON-oidc').isVisible()).toBe(true);
          expect(await page.locator('input[name="password"]').count()).toBe(0);
        },
        [provider.issuer],
      );
      const login = (username: string, secret: string) =>
        fetch(`${server.base}/auth/simple/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username, password: secret }),
        });
      expect((await login(`pw-${run}`, password)).status).toBe(401);
      expect((await login('admin', BREAK_GLASS_PASSWORD)).status).toBe(200);
    } finally {
      expect(await apiJson(server.base, 'POST', '/api/admin/auth/simple/settings', { disabled: false })).toEqual({ disabled: false });
    }
  });

  it('behind Cloudflare Access the UI opens signed in, without a password form, as the person Access vouches for', async () => {
    const email = `access-${run}@example.com`;
    const token = await accessToken(email);
    await runFlow(browser, server.base, 'sso-access', async (session) => {
      const { page } = session;
      // What Cloudflare's edge adds to every request that passed Access.
      await page.setExtraHTTPHeaders({ 'cf-access-jwt-assertion': token });
      await page.goto('/projects/default');
      await expect
        .poll(() =>
          page
            .getByRole('button', { name: /new feature flag/i })
            .first()
            .isVisible(),
        )
        .toBe(true);
      expect(await page.locator('input[name="password"]').count()).toBe(0);
      expect(new URL(page.url()).pathname).toBe('/projects/default');
      expect((await whoAmI(session)).email).toBe(email);
    });
    // No OIDC group mapping applies; the saved settings' default role (Editor) does.
    expect(await usersWithEmail(email)).toEqual([expect.objectContaining({ rootRole: 2 })]);
  });
});
