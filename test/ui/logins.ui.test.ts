/**
 * Admin → Single sign-on / auth pages the Enterprise panels light (docs/ui.md, "Governance
 * panels"), in the served UI: a refused and then a successful password sign-in appear in Login
 * history (one is then deleted), the SAML 2.0 page loads and shows why SAML cannot be switched
 * on, and the Password login page loads. Each flow fails on any unexpected 4xx/5xx of the page's
 * own calls, console and page errors.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, apiJson, launchBrowser, runFlow, signIn, SIGNED_OUT, startServer, writeCallSummary, type Server } from './support/harness';
import { createPerson, PAGE_LOAD_TIMEOUT, ROOT_ROLE } from './support/setup';

let server: Server;
let browser: Browser;

const run = Date.now().toString(36);
const PASSWORD = 'Logins-Passw0rd!';
const PERSON = `logins-admin-${run}`;

interface LoginEvent {
  id: number;
  username: string;
  successful: boolean;
}

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await createPerson(server.base, { username: PERSON, password: PASSWORD, name: PERSON, rootRole: ROOT_ROLE.admin });
}, 600_000);

afterAll(async () => {
  writeCallSummary();
  await browser?.close();
  await server?.stop();
});

/** The Login history table's rows of PERSON. */
function personRows(page: Page) {
  return page.getByRole('row').filter({ hasText: PERSON });
}

describe('Admin → Login history', () => {
  it('a refused and then a successful password sign-in appear; one deleted is gone after a reload', async () => {
    await runFlow(browser, server.base, 'login-history', async (session) => {
      const { page } = session;
      session.expect(...SIGNED_OUT);
      // The wrong password: the login page's own POST is answered 401 on purpose.
      await session.expectDuring([{ method: 'POST', path: /^\/auth\/simple\/login$/, status: 401 }], async () => {
        await page.goto('/login');
        await page.locator('input[name="username"]').fill(PERSON);
        await page.locator('input[name="password"]').fill('Not-The-Passw0rd!');
        const refused = page.waitForResponse((r) => new URL(r.url()).pathname === '/auth/simple/login');
        await page.locator('button[type="submit"]').click();
        expect((await refused).status()).toBe(401);
        await expect.poll(() => page.locator('body').innerText()).toContain('Invalid password and username combination');
      });
      await signIn(session, PERSON, PASSWORD);

      const listed = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/logins');
      await page.goto('/admin/logins');
      expect((await listed).status()).toBe(200);
      await expect.poll(() => personRows(page).count(), { timeout: PAGE_LOAD_TIMEOUT }).toBe(2);
      const rows = await personRows(page).allInnerTexts();
      expect(rows.every((row) => row.includes('Password'))).toBe(true);
      expect(rows.some((row) => row.includes('True'))).toBe(true);
      expect(rows.some((row) => row.includes('False'))).toBe(true);

      // 6.10.1's page has no delete button: the API deletes, the page shows it at its next load.
      const events = (await apiJson<{ events: LoginEvent[] }>(server.base, 'GET', '/api/admin/logins')).events;
      const failed = events.find((event) => event.username === PERSON && !event.successful)!;
      expect((await api(server.base, 'DELETE', `/api/admin/logins/${failed.id}`)).status).toBe(204);
      await page.reload();
      await expect.poll(() => personRows(page).count(), { timeout: PAGE_LOAD_TIMEOUT }).toBe(1);
      expect(await personRows(page).innerText()).toContain('True');
    });
  }, 180_000);
});

describe('Admin → Single sign-on', () => {
  it('the SAML 2.0 page loads clean, and switching SAML on is refused with the reason shown', async () => {
    await runFlow(browser, server.base, 'saml-refused', async (session) => {
      const { page } = session;
      await signIn(session, PERSON, PASSWORD);
      const loaded = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/auth/saml/settings');
      await page.goto('/admin/auth/saml');
      expect((await loaded).status()).toBe(200);
      // The first switch named `enabled` is SAML's own (the role section below has another).
      await page.locator('input[name="enabled"]').first().check();
      await page.getByLabel('Entity ID').fill('https://idp.example.com/saml');
      await page.getByLabel('Single Sign-On URL').fill('https://idp.example.com/sso');
      await page.locator('textarea[name="certificate"]').fill('MIIC-not-a-real-certificate');
      await session.expectDuring([{ method: 'POST', path: /^\/api\/admin\/auth\/saml\/settings$/, status: 400 }], async () => {
        const saved = page.waitForResponse(
          (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/admin/auth/saml/settings',
        );
        await page.getByRole('button', { name: 'Save' }).click();
        expect((await saved).status()).toBe(400);
        await expect.poll(() => page.locator('body').innerText()).toContain('SAML 2.0 sign-in is not offered by this service');
      });
      expect(await apiJson(server.base, 'GET', '/api/admin/auth/saml/settings')).toEqual({ enabled: false });
    });
  }, 120_000);

  it('the Password login page loads clean and shows password sign-in on', async () => {
    await runFlow(browser, server.base, 'password-login-page', async (session) => {
      const { page } = session;
      await signIn(session, PERSON, PASSWORD);
      const loaded = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/auth/simple/settings');
      const counted = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/user-admin/admin-count');
      await page.goto('/admin/auth/password');
      expect((await loaded).status()).toBe(200);
      expect((await counted).status()).toBe(200);
      await expect.poll(() => page.locator('main').innerText()).toContain('Password based administrators');
      expect(await page.locator('input[name="disabled"]').isChecked()).toBe(true);
    });
  }, 120_000);
});
