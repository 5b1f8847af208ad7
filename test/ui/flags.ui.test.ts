/**
 * Flag flows of Unleash 6.10.1's UI against the Worker: clone a flag from its page's clone
 * button, archive two flags at once from the project's flag list and revive one from the
 * archive page. Each fails on any error the UI's own calls meet.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiJson, launchBrowser, runFlow, signIn, startServer, type Server } from './support/harness';
import { createPerson, ROOT_ROLE } from './support/setup';

let server: Server;
let browser: Browser;
const PASSWORD = 'Ui-Test-Passw0rd!';
const USER = 'ui-flags-admin';
const run = Date.now().toString(36);

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await createPerson(server.base, { username: USER, password: PASSWORD, email: 'ui-flags@example.com', rootRole: ROOT_ROLE.admin });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const flagApi = (name: string) => `/api/admin/projects/default/features/${name}`;

describe('Flags in the UI', () => {
  it("clone a flag from its page: the copy has the original's strategy, its groupId renamed", async () => {
    const source = `ui-clone-src-${run}`;
    const copy = `ui-clone-copy-${run}`;
    await apiJson(server.base, 'POST', '/api/admin/projects/default/features', { name: source, description: 'to be cloned' });
    await apiJson(server.base, 'POST', `${flagApi(source)}/environments/development/strategies`, {
      name: 'flexibleRollout',
      parameters: { rollout: '25', stickiness: 'default', groupId: source },
      constraints: [],
    });
    await runFlow(browser, server.base, 'clone-flag', async (session) => {
      const { page } = session;
      page.setDefaultTimeout(30_000);
      await signIn(session, USER, PASSWORD);
      await page.goto(`/projects/default/features/${source}`);
      await page.getByRole('link', { name: 'Clone', exact: true }).click();
      await page.waitForURL((url) => url.pathname === `/projects/default/features/${source}/copy`);
      await page.locator('input[name="name"]').fill(copy);
      const cloned = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(`/features/${source}/clone`));
      await page.getByRole('button', { name: /create from copy/i }).click();
      const response = await cloned;
      expect(response.status()).toBe(201);
      expect(JSON.parse(response.request().postData()!)).toEqual({ name: copy, replaceGroupId: true });
      await page.waitForURL((url) => url.pathname.startsWith(`/projects/default/features/${copy}`));
      await expect.poll(() => page.locator('body').innerText()).toContain(copy);

      const feature = await apiJson(server.base, 'GET', flagApi(copy));
      expect(feature.description).toBe('to be cloned');
      const development = feature.environments.find((e: { name: string }) => e.name === 'development');
      expect(development.strategies.map((s: { parameters: Record<string, string> }) => s.parameters)).toEqual([
        { rollout: '25', stickiness: 'default', groupId: copy },
      ]);
    });
  });

  it("archive two flags at once from the project's flag list, then revive one from the archive page", async () => {
    const names = [`ui-bulk-arch-a-${run}`, `ui-bulk-arch-b-${run}`];
    for (const name of names) await apiJson(server.base, 'POST', '/api/admin/projects/default/features', { name });
    await runFlow(browser, server.base, 'archive-two-revive-one', async (session) => {
      const { page } = session;
      page.setDefaultTimeout(30_000);
      await signIn(session, USER, PASSWORD);
      await page.goto(`/projects/default?query=ui-bulk-arch-`);
      const listed = async () => (await page.locator('tbody tr').allInnerTexts()).filter((row) => names.some((name) => row.includes(name)));
      await expect.poll(listed, { timeout: 60_000 }).toHaveLength(2);
      for (const name of names) {
        // The row's first checkbox selects it (the others are its environments' switches).
        await page.locator('tbody tr', { hasText: name }).getByRole('checkbox').first().check();
      }
      await page.getByRole('button', { name: 'Archive', exact: true }).click();
      const dialog = page.getByRole('dialog').last();
      await expect.poll(() => dialog.innerText()).toContain('Archive feature flags');
      const archived = page.waitForResponse(
        (r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/projects/default/archive'),
      );
      await dialog.getByRole('button', { name: 'Archive flags' }).click();
      const response = await archived;
      expect(response.status()).toBe(202);
      expect((JSON.parse(response.request().postData()!) as { features: string[] }).features.sort()).toEqual([...names].sort());
      const archivedNames = async () =>
        (await apiJson<{ features: { name: string }[] }>(server.base, 'GET', '/api/admin/archive/features/default')).features
          .map((f) => f.name)
          .filter((name) => names.includes(name))
          .sort();
      expect(await archivedNames()).toEqual([...names].sort());

      await page.goto('/archive');
      const row = page.locator('tbody tr', { hasText: names[0] });
      await row.getByTestId('revive-feature-flag-button').click();
      const reviveDialog = page.getByRole('dialog').last();
      const revived = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/revive'));
      await reviveDialog.getByRole('button', { name: 'Revive feature flag' }).click();
      expect((await revived).status()).toBe(200);
      expect(await archivedNames()).toEqual([names[1]]);
      const back = await apiJson(server.base, 'GET', flagApi(names[0]!));
      expect(back.archived).toBe(false);
    });
  });
});
