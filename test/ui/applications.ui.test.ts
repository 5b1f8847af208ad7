/**
 * The pages that read what SDKs report: an application's page with its instances, and a
 * project's Applications, Health and Insights pages, and deleting the application. The official Node SDK (unleash-client)
 * runs in this process against the Worker the harness starts, registers and reports with a
 * client key; then the UI reads it back. Each flow fails on any error the page's own calls meet.
 */
import type { Browser } from 'playwright-core';
import { Unleash } from 'unleash-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually';
import { api, apiJson, launchBrowser, runFlow, signIn, startServer, writeCallSummary, type Server } from './support/harness';
import { createPerson, ROOT_ROLE } from './support/setup';

let server: Server;
let browser: Browser;
const PASSWORD = 'Ui-Test-Passw0rd!';
const ADMIN_USER = 'ui-apps-admin';
const run = Date.now().toString(36);
const APP = `ui-app-${run}`;
const INSTANCE = `ui-instance-${run}`;
const FLAG = `ui-reported-${run}`;

interface Emitter {
  once(event: string, listener: (value: never) => void): unknown;
  on(event: string, listener: (value: never) => void): unknown;
}

/** Resolves on the SDK's next `event` (the Node SDK is an EventEmitter; its typings need @types/node). */
function waitFor(sdk: Unleash, event: string, timeoutMs = 30_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${event}" within ${timeoutMs} ms`)), timeoutMs);
    (sdk as unknown as Emitter).once(event, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await createPerson(server.base, { username: ADMIN_USER, password: PASSWORD, name: 'UI Apps Admin', rootRole: ROOT_ROLE.admin });

  // A flag, turned on in development, and the official Node SDK using it with a client key.
  await apiJson(server.base, 'POST', '/api/admin/projects/default/features', { name: FLAG });
  await apiJson(server.base, 'POST', `/api/admin/projects/default/features/${FLAG}/environments/development/on`);
  const { secret } = await apiJson<{ secret: string }>(server.base, 'POST', '/api/admin/api-tokens', {
    tokenName: `ui-sdk-${run}`,
    type: 'client',
    environment: 'development',
  });
  const unleash = new Unleash({
    url: `${server.base}/api/`,
    appName: APP,
    instanceId: INSTANCE,
    customHeaders: { Authorization: secret },
    refreshInterval: 1000,
    metricsInterval: 1000,
    skipInstanceCountWarning: true,
  });
  const errors: unknown[] = [];
  (unleash as unknown as Emitter).on('error', (error: never) => errors.push(error));
  try {
    const registered = waitFor(unleash, 'registered');
    await waitFor(unleash, 'synchronized');
    expect(unleash.isEnabled(FLAG)).toBe(true);
    unleash.isEnabled(FLAG);
    const sent = waitFor(unleash, 'sent');
    await registered;
    await sent;
  } finally {
    unleash.destroy();
  }
  expect(errors).toEqual([]);
  // The application's report is readable before the pages are opened.
  await eventually(async () => {
    const overview = await apiJson(server.base, 'GET', `/api/admin/metrics/applications/${APP}/overview`);
    expect(overview.environments.map((environment: { name: string }) => environment.name)).toEqual(['development']);
  });
}, 600_000);

afterAll(async () => {
  writeCallSummary();
  await browser?.close();
  await server?.stop();
});

describe('pages that read SDK reports', () => {
  it("an application's page: the applications list, its overview and the instances of its environment", async () => {
    await runFlow(browser, server.base, 'application-page', async (session) => {
      const { page } = session;
      await signIn(session, ADMIN_USER, PASSWORD);

      await page.goto('/applications');
      await expect.poll(() => page.locator('main').innerText()).toContain(APP);

      const overview = page.waitForResponse((r) => new URL(r.url()).pathname === `/api/admin/metrics/applications/${APP}/overview`);
      await page.getByRole('link', { name: APP }).first().click();
      await page.waitForURL(new RegExp(`/applications/${APP}`));
      expect((await overview).status()).toBe(200);
      // The overview: the project, the environment and the SDK the instance reported.
      await expect.poll(() => page.locator('main').innerText()).toContain('development environment');
      await expect.poll(() => page.locator('main').innerText()).toMatch(/unleash-node-sdk:\d+\.\d+\.\d+/);

      const instances = page.waitForResponse(
        (r) => new URL(r.url()).pathname === `/api/admin/metrics/instances/${APP}/environment/development`,
      );
      await page.getByRole('tab', { name: /Last seen instances/ }).click();
      expect((await instances).status()).toBe(200);
      await expect.poll(() => page.locator('main').innerText()).toContain(INSTANCE);
    });
  });

  it("a project's Applications, Health and Insights pages load with what the SDK reported", async () => {
    await runFlow(browser, server.base, 'project-applications-health', async (session) => {
      const { page } = session;
      await signIn(session, ADMIN_USER, PASSWORD);

      const applications = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/projects/default/applications');
      await page.goto('/projects/default/applications');
      expect((await applications).status()).toBe(200);
      await expect.poll(() => page.locator('main').innerText()).toContain(APP);
      await expect.poll(() => page.locator('main').innerText()).toMatch(/1 environment\s+1 instance\s+1 sdk/);

      // The header's project status dialog reads the project's status.
      const status = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/projects/default/status');
      await page.getByRole('button', { name: 'Project status' }).click();
      expect((await status).status()).toBe(200);
      await expect.poll(() => page.locator('body').innerText()).toContain('Your current project health rating is 100%');
      await page.getByRole('button', { name: 'Close', exact: true }).last().click();

      const health = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/projects/default/health-report');
      await page.goto('/projects/default/health');
      expect((await health).status()).toBe(200);
      await expect.poll(() => page.locator('main').innerText()).toMatch(/health/i);
      await expect.poll(() => page.locator('main').innerText()).toContain(FLAG);

      const insights = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/projects/default/insights');
      await page.goto('/projects/default/insights');
      expect((await insights).status()).toBe(200);
      await page.waitForLoadState('networkidle').catch(() => undefined);
    });
  });

  it("delete the application from its page (after the project's pages have read it)", async () => {
    await runFlow(browser, server.base, 'application-delete', async (session) => {
      const { page } = session;
      await signIn(session, ADMIN_USER, PASSWORD);

      await page.goto(`/applications/${APP}`);
      await expect.poll(() => page.locator('main').innerText()).toContain('development environment');
      await page.getByRole('button', { name: 'Delete application' }).click();
      const dialog = page.getByRole('dialog').last();
      await expect.poll(() => dialog.innerText()).toContain('Are you sure you want to delete this application?');
      const deleted = page.waitForResponse(
        (r) => r.request().method() === 'DELETE' && new URL(r.url()).pathname === `/api/admin/metrics/applications/${APP}`,
      );
      await dialog
        .getByRole('button', { name: /yes|confirm|delete/i })
        .first()
        .click();
      expect((await deleted).status()).toBe(200);
      await page.waitForURL((url) => url.pathname === '/applications');
      expect((await api(server.base, 'GET', `/api/admin/metrics/applications/${APP}`)).status).toBe(404);
      await expect.poll(() => page.locator('main').innerText()).not.toContain(APP);
    });
  });
});
