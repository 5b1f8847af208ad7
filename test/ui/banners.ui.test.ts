/**
 * Admin → Banners, driven through the served UI (docs/ui.md, "Governance panels"): an admin
 * creates a banner, sees it at the top of every page, edits it, switches it off and deletes it.
 * The flow fails on any 4xx/5xx of the page's own calls, console and page errors.
 */
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiJson, launchBrowser, runFlow, signIn, startServer, writeCallSummary, type Server } from './support/harness';
import { responseTo } from './support/setup';

let server: Server;
let browser: Browser;

const run = Date.now().toString(36);
const MESSAGE = `Maintenance window tonight ${run}`;
const EDITED = `Maintenance moved to Sunday ${run}`;

/** The banner bar at the top of the page (the table and the form show it inline as previews). */
function topBanner(page: Page, text: string): Locator {
  return page.locator(
    `xpath=//aside[not(ancestor::table)][not(ancestor::*[@role="dialog" or @role="presentation"])][contains(., "${text}")]`,
  );
}

function row(page: Page, text: string): Locator {
  return page.getByRole('row').filter({ hasText: text });
}

interface Banner {
  id: number;
  message: string;
  enabled: boolean;
}

async function stored(): Promise<Banner[]> {
  return (await apiJson<{ banners: Banner[] }>(server.base, 'GET', '/api/admin/banners')).banners;
}

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
}, 600_000);

afterAll(async () => {
  writeCallSummary();
  await browser?.close();
  await server?.stop();
});

describe('Admin → Banners', () => {
  it('an admin creates a banner, sees it on every page, edits it, switches it off and deletes it', async () => {
    await runFlow(browser, server.base, 'banners', async (session) => {
      const { page } = session;
      await signIn(session, 'admin', 'unleash4all');
      await page.goto('/admin/banners');
      await page.getByText('No banners available. Get started by adding one.').waitFor();

      // Create: the form's message, saved with "Add banner".
      await page.getByRole('button', { name: 'New banner' }).click();
      await page.getByLabel('Banner message').fill(MESSAGE);
      const created = responseTo(page, 'POST', /^\/api\/admin\/banners$/);
      await page.getByRole('button', { name: 'Add banner' }).click();
      expect((await created).status()).toBe(201);
      await row(page, MESSAGE).waitFor();
      await topBanner(page, MESSAGE).waitFor();
      expect(await stored()).toMatchObject([{ message: MESSAGE, enabled: true }]);

      // Everyone's pages show it at the top, not only the admin page.
      await page.goto('/projects');
      await topBanner(page, MESSAGE).waitFor();

      // Edit: the row's edit button opens the same form, saved with "Save banner".
      await page.goto('/admin/banners');
      await row(page, MESSAGE).getByRole('button', { name: 'Edit banner' }).click();
      await page.getByLabel('Banner message').fill(EDITED);
      const updated = responseTo(page, 'PUT', /^\/api\/admin\/banners\/\d+$/);
      await page.getByRole('button', { name: 'Save banner' }).click();
      expect((await updated).status()).toBe(200);
      await topBanner(page, EDITED).waitFor();
      await topBanner(page, MESSAGE).waitFor({ state: 'hidden' });

      // Switch off: the row's toggle; the banner leaves the top of the page but stays listed.
      const off = responseTo(page, 'POST', /^\/api\/admin\/banners\/\d+\/off$/);
      await row(page, EDITED).getByRole('checkbox').click();
      expect((await off).status()).toBe(200);
      await topBanner(page, EDITED).waitFor({ state: 'hidden' });
      await row(page, EDITED).waitFor();
      expect(await stored()).toMatchObject([{ message: EDITED, enabled: false }]);

      // Delete: the row's remove button, confirmed in the dialog.
      await row(page, EDITED).getByRole('button', { name: 'Remove banner' }).click();
      const deleted = responseTo(page, 'DELETE', /^\/api\/admin\/banners\/\d+$/);
      await page.getByRole('dialog').getByRole('button', { name: 'Delete banner' }).click();
      expect((await deleted).status()).toBe(200);
      await page.getByText('No banners available. Get started by adding one.').waitFor();
      expect(await stored()).toEqual([]);
    });
  });
});
