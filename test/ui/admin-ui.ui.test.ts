/**
 * Unleash 6.10.1's own admin UI, served by the Worker, driven in chromium against the real
 * Worker (wrangler dev, fresh local state). One test per flow a person does in the UI; each
 * fails on any error the UI's own calls meet that the flow did not cause on purpose.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, apiJson, launchBrowser, runFlow, signIn, startServer, type Server } from './support/harness';

let server: Server;
let browser: Browser;
const PASSWORD = 'Ui-Test-Passw0rd!';
const ADMIN_USER = 'ui-admin';
const run = Date.now().toString(36);

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  // The person who uses the UI: an Admin with a password (set through the admin API).
  const created = await apiJson<{ id: number }>(server.base, 'POST', '/api/admin/user-admin', {
    username: ADMIN_USER,
    email: 'ui-admin@example.com',
    name: 'UI Admin',
    rootRole: 1,
    sendEmail: false,
  });
  const password = await api(server.base, 'POST', `/api/admin/user-admin/${created.id}/change-password`, { password: PASSWORD });
  expect(password.status).toBe(200);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('Unleash admin UI', () => {
  it('signed in with a password: create an API token, copy it, delete it', async () => {
    const tokenName = `ui-token-${run}`;
    await runFlow(browser, server.base, 'api-token', async (session) => {
      const { page } = session;
      await signIn(session, ADMIN_USER, PASSWORD);

      await page.goto('/admin/api/create-token');
      await page.locator('input[name="username"]').fill(tokenName);
      const created = page.waitForResponse((response) => response.url().endsWith('/api/admin/api-tokens') && response.request().method() === 'POST');
      await page.getByRole('button', { name: 'Create token' }).click();
      const response = await created;
      expect(response.status()).toBe(201);
      // The UI's form posts the legacy `username` and an upper-case type.
      expect(JSON.parse(response.request().postData()!)).toMatchObject({ username: tokenName, type: 'CLIENT' });
      const { secret } = (await response.json()) as { secret: string };

      const dialog = page.getByRole('dialog').last();
      await expect.poll(() => dialog.innerText()).toContain(secret);
      await dialog.getByRole('button', { name: 'Copy token' }).click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
      await dialog.getByRole('button', { name: 'Close' }).click();

      // The copied key works against the client API.
      const features = await fetch(`${server.base}/api/client/features`, { headers: { authorization: secret } });
      expect(features.status).toBe(200);

      await page.goto('/admin/api');
      const row = page.getByRole('row').filter({ hasText: tokenName });
      await expect.poll(() => row.count()).toBe(1);
      await row.getByRole('button', { name: 'Delete token' }).click();
      const deleted = page.waitForResponse((r) => r.request().method() === 'DELETE' && r.url().includes('/api/admin/api-tokens/'));
      await page.getByRole('dialog').last().getByRole('button', { name: "Yes, I'm sure" }).click();
      expect((await deleted).status()).toBe(200);
      await expect.poll(() => row.count()).toBe(0);

      // Exactly that token is gone: it no longer authenticates, and no other was touched.
      const after = await fetch(`${server.base}/api/client/features`, { headers: { authorization: secret } });
      expect(after.status).toBe(401);
      const tokens = await apiJson<{ tokens: { tokenName: string }[] }>(server.base, 'GET', '/api/admin/api-tokens');
      expect(tokens.tokens.map((token) => token.tokenName)).not.toContain(tokenName);
    });
  });
});
