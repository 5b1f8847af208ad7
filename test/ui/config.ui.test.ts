/**
 * Configure → CORS origins in Unleash's UI against the Worker: an origin saved there is
 * served by the frontend API at once, as a browser SDK on a page of that origin sees it (a
 * real cross-origin fetch with its preflight, judged by the browser itself).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiJson, launchBrowser, runFlow, signIn, startServer, type Server } from './support/harness';
import { createPerson, ROOT_ROLE } from './support/setup';

let server: Server;
let browser: Browser;
let frontendKey: string;
const PASSWORD = 'Ui-Test-Passw0rd!';
const USER = 'ui-config-admin';
const run = Date.now().toString(36);
const FLAG = `ui-cors-${run}`;

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await createPerson(server.base, { username: USER, password: PASSWORD, email: 'ui-config@example.com', rootRole: ROOT_ROLE.admin });
  await apiJson(server.base, 'POST', '/api/admin/projects/default/features', { name: FLAG });
  await apiJson(server.base, 'POST', `/api/admin/projects/default/features/${FLAG}/environments/development/on`);
  const token = await apiJson<{ secret: string }>(server.base, 'POST', '/api/admin/api-tokens', {
    tokenName: `ui-cors-${run}`,
    type: 'frontend',
    environment: 'development',
    projects: ['*'],
  });
  frontendKey = token.secret;
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** What a browser SDK's poll gets from a page at another origin: the toggles, or "blocked" when the browser refuses. */
async function sdkPoll(page: Page, base: string, key: string): Promise<string[] | 'blocked'> {
  return page.evaluate(
    async ({ base, key }) => {
      try {
        const response = await fetch(`${base}/api/frontend?sessionId=1`, {
          headers: { authorization: key, 'unleash-appname': 'ui-cors-test', 'unleash-sdk': 'unleash-client-js:3.7.0' },
        });
        const body = (await response.json()) as { toggles: { name: string }[] };
        return body.toggles.map((toggle) => toggle.name);
      } catch {
        return 'blocked' as const;
      }
    },
    { base, key },
  );
}

/** Replaces the origins in Configure → CORS origins and saves them through the UI. */
async function saveOriginsInUi(page: Page, origins: string[]): Promise<void> {
  await page.goto('/admin/cors');
  const field = page.locator('textarea[placeholder^="https://example.com"]');
  await field.fill(origins.join('\n'));
  const saved = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/ui-config/cors'));
  await page.getByRole('button', { name: 'Save' }).click();
  expect((await saved).status()).toBe(204);
  await page.getByText('Settings saved').waitFor();
}

describe('CORS origins in the UI', () => {
  it('save an origin in Configure → CORS origins; a browser SDK on that origin is served, one elsewhere is refused', async () => {
    await runFlow(browser, server.base, 'cors-origins', async (session) => {
      const { page } = session;
      page.setDefaultTimeout(30_000);
      await signIn(session, USER, PASSWORD);
      // The SDK's page: another origin (same machine, another host name), outside the UI's own calls.
      const sdkOrigin = server.base.replace('127.0.0.1', 'localhost');
      expect(sdkOrigin).not.toBe(server.base);
      // A page may reach the loopback address only once allowed (Chromium's local network access).
      await session.context.grantPermissions(['local-network-access'], { origin: sdkOrigin });
      const sdkPage = await session.context.newPage();
      const sdkConsole: string[] = [];
      sdkPage.on('console', (message) => sdkConsole.push(message.text()));
      await sdkPage.goto(`${sdkOrigin}/sdk-page`);

      await saveOriginsInUi(page, ['https://app.example']);
      expect((await apiJson(server.base, 'GET', '/api/admin/ui-config')).frontendApiOrigins).toEqual(['https://app.example']);
      expect(await sdkPoll(sdkPage, server.base, frontendKey)).toBe('blocked');
      // Refused by the browser for want of CORS headers, not for any other reason.
      expect(sdkConsole.join('\n')).toContain("No 'Access-Control-Allow-Origin' header");

      await saveOriginsInUi(page, ['https://app.example', sdkOrigin]);
      // The form shows what was saved when the page is opened again.
      await page.goto('/admin/cors');
      await expect
        .poll(() => page.locator('textarea[placeholder^="https://example.com"]').inputValue())
        .toBe(`https://app.example\n${sdkOrigin}`);
      const toggles = await sdkPoll(sdkPage, server.base, frontendKey);
      expect(toggles).not.toBe('blocked');
      expect(toggles).toContain(FLAG);
      const direct = await fetch(`${server.base}/api/frontend`, { headers: { authorization: frontendKey, origin: sdkOrigin } });
      expect(direct.headers.get('access-control-allow-origin')).toBe(sdkOrigin);
      await sdkPage.close();
    });
  });
});
