/**
 * Enterprise panels lit here (docs/ui.md, "Governance panels"), driven through the served UI:
 * the environments page (flag `EEA`) with every action of its table — create, edit, clone,
 * deprecate and undeprecate, delete, reorder; a group assigned from a project's access page
 * (flag `UG`: "Assign user / group"); and Admin → SCIM: enabling it shows its token once, and
 * a new token can be generated. Each flow fails on any 4xx/5xx of the page's own calls,
 * console and page errors.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiJson, launchBrowser, runFlow, signIn, startServer, writeCallSummary, type Server } from './support/harness';
import { PAGE_LOAD_TIMEOUT, responseTo } from './support/setup';

let server: Server;
let browser: Browser;

const run = Date.now().toString(36);
const PROJECT = `envui-${run}`;
const FLAG = `envui-flag-${run}`;
const STRATEGY_TITLE = `envui rollout ${run}`;

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await apiJson(server.base, 'POST', '/api/admin/projects', { id: PROJECT, name: PROJECT, environments: ['development', 'production'] });
  await apiJson(server.base, 'POST', `/api/admin/projects/${PROJECT}/features`, { name: FLAG });
  await apiJson(server.base, 'POST', `/api/admin/projects/${PROJECT}/features/${FLAG}/environments/development/strategies`, {
    name: 'flexibleRollout',
    title: STRATEGY_TITLE,
    parameters: { rollout: '30', stickiness: 'default', groupId: FLAG },
  });
  await apiJson(server.base, 'POST', `/api/admin/projects/${PROJECT}/features/${FLAG}/environments/development/on`);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  writeCallSummary();
});

/** Waits for the one call of `method` whose path matches, and returns its status. */
async function answered(page: Page, method: string, path: RegExp, action: () => Promise<unknown>): Promise<number> {
  const response = responseTo(page, method, path);
  await action();
  return (await response).status();
}

interface Environment {
  name: string;
  type: string;
  sortOrder: number;
  enabled: boolean;
}

async function environments(): Promise<Environment[]> {
  return (await apiJson<{ environments: Environment[] }>(server.base, 'GET', '/api/admin/environments')).environments;
}

/** Opens the actions menu of an environment's row and picks one. */
async function rowAction(page: Page, environment: string, action: string): Promise<void> {
  await page.locator(`#environment-${environment}-actions`).click();
  await page.getByRole('menuitem', { name: action }).click();
}

describe('the environments page (EEA)', () => {
  it('creates, edits, clones (with the flag strategies), deprecates, reorders and deletes environments', async () => {
    const created = `envui-new-${run}`;
    const clone = `envui-clone-${run}`;
    await runFlow(browser, server.base, 'environments-page', async (session) => {
      const { page } = session;
      await signIn(session, 'admin', 'unleash4all');
      await page.goto('/environments');
      await page
        .getByRole('row', { name: /production/ })
        .first()
        .waitFor({ timeout: PAGE_LOAD_TIMEOUT });

      // Create.
      await page.getByRole('button', { name: 'New environment' }).click();
      await page.getByLabel('Environment name').fill(created);
      expect(
        await answered(page, 'POST', /^\/api\/admin\/environments$/, () =>
          page.getByRole('button', { name: 'Create environment' }).click(),
        ),
      ).toBe(201);
      // The UI's own behaviour, not ours: after the create it revalidates only SWR's
      // `api/admin/permissions` key, never `api/admin/environments`, and SWR (dedupingInterval
      // 2 s, counted from when a fetch resolves) hands the list page's remount the list it fetched
      // on first load, unchanged, if that was under 2 s before. A run at a person's pace refetches
      // and shows it; at this flow's pace the browser sends no GET of the list at all (request
      // log in docs/ui.md; our answers carry no ETag nor Cache-Control to reuse). A reload does.
      await page.goto('/environments');
      await page.getByRole('row', { name: new RegExp(created) }).waitFor({ timeout: PAGE_LOAD_TIMEOUT });

      // Edit: its type.
      await rowAction(page, created, 'Edit');
      // The form shows the stored environment once it has loaded it.
      await expect.poll(() => page.getByLabel('Environment name').inputValue(), { timeout: 15_000 }).toBe(created);
      await page.getByRole('radio', { name: 'Test', exact: true }).check();
      expect(await page.getByRole('radio', { name: 'Test', exact: true }).isChecked()).toBe(true);
      expect(
        await answered(page, 'PUT', new RegExp(`^/api/admin/environments/update/${created}$`), () =>
          page.getByRole('button', { name: 'Save' }).click(),
        ),
      ).toBe(200);
      await page.waitForURL((url) => url.pathname === '/environments');

      // Deprecate, then undeprecate.
      await rowAction(page, created, 'Deprecate');
      expect(
        await answered(page, 'POST', new RegExp(`/environments/${created}/off$`), () =>
          page.getByRole('dialog').getByRole('button', { name: 'Deprecate' }).click(),
        ),
      ).toBe(204);
      await rowAction(page, created, 'Undeprecate');
      expect(
        await answered(page, 'POST', new RegExp(`/environments/${created}/on$`), () =>
          page.getByRole('dialog').getByRole('button', { name: 'Undeprecate' }).click(),
        ),
      ).toBe(204);

      // Clone development into the project.
      await rowAction(page, 'development', 'Clone');
      const dialog = page.locator('form').filter({ hasText: 'Clone environment' }).last();
      await dialog.getByLabel('Environment name').fill(clone);
      await dialog.getByRole('combobox', { name: 'Projects' }).click();
      await page.getByRole('option', { name: new RegExp(PROJECT) }).click();
      await page.keyboard.press('Escape');
      expect(
        await answered(page, 'POST', /^\/api\/admin\/environments\/development\/clone$/, () =>
          dialog.getByRole('button', { name: 'Clone environment' }).click(),
        ),
      ).toBe(201);
      await page.getByRole('row', { name: new RegExp(clone) }).waitFor({ timeout: 15_000 });

      // The flag page shows the clone, on, with its strategy (its content: the next test).
      await page.goto(`/projects/${PROJECT}/features/${FLAG}`);
      await expect
        .poll(() => page.locator('main').innerText(), { timeout: PAGE_LOAD_TIMEOUT })
        .toMatch(new RegExp(`${clone}\\s*1 strategy added`));

      // Reorder: the new environment's row dropped on development's (second, after default). The
      // table listens to HTML drag events (dragstart, dragenter, drop), sent here as a drag would.
      await page.goto('/environments');
      const dragged = page.getByRole('row', { name: new RegExp(created) });
      await dragged.waitFor({ timeout: PAGE_LOAD_TIMEOUT });
      const target = page.getByRole('row').nth(2);
      expect(
        await answered(page, 'PUT', /^\/api\/admin\/environments\/sort-order$/, async () => {
          await dragged.dispatchEvent('dragstart');
          await target.dispatchEvent('dragenter');
          await target.dispatchEvent('drop');
        }),
      ).toBe(200);

      // Delete the clone (its name typed to confirm).
      await rowAction(page, clone, 'Delete');
      const confirm = page.getByRole('dialog');
      await confirm.getByLabel('Environment name').fill(clone);
      expect(
        await answered(page, 'DELETE', new RegExp(`^/api/admin/environments/${clone}$`), () =>
          confirm.getByRole('button', { name: 'Delete environment' }).click(),
        ),
      ).toBe(200);
      await expect.poll(() => page.getByRole('row', { name: new RegExp(clone) }).count()).toBe(0);
    });

    const after = await environments();
    const mine = after.find((e) => e.name === created)!;
    expect(mine).toMatchObject({ type: 'test', enabled: true });
    const development = after.find((e) => e.name === 'development')!;
    expect(mine.sortOrder).toBeLessThanOrEqual(development.sortOrder);
    expect(after.map((e) => e.name)).not.toContain(clone);
  }, 300_000);

  it('the clone is what the flag had in the source: state and strategy (checked through the API before deletion)', async () => {
    const clone = `envui-clone2-${run}`;
    await runFlow(browser, server.base, 'environments-clone', async (session) => {
      const { page } = session;
      await signIn(session, 'admin', 'unleash4all');
      await page.goto('/environments');
      await rowAction(page, 'development', 'Clone');
      const dialog = page.locator('form').filter({ hasText: 'Clone environment' }).last();
      await dialog.getByLabel('Environment name').fill(clone);
      expect(
        await answered(page, 'POST', /^\/api\/admin\/environments\/development\/clone$/, () =>
          dialog.getByRole('button', { name: 'Clone environment' }).click(),
        ),
      ).toBe(201);
      await page.getByRole('row', { name: new RegExp(clone) }).waitFor({ timeout: 15_000 });
    });
    const feature = await apiJson<{
      environments: { name: string; enabled: boolean; strategies: { name: string; title: string; parameters: Record<string, string> }[] }[];
    }>(server.base, 'GET', `/api/admin/projects/${PROJECT}/features/${FLAG}`);
    const copied = feature.environments.find((e) => e.name === clone)!;
    expect(copied.enabled).toBe(true);
    expect(copied.strategies.map((s) => [s.name, s.title, s.parameters.rollout])).toEqual([['flexibleRollout', STRATEGY_TITLE, '30']]);
  }, 300_000);
});

describe('groups in project access (UG)', () => {
  it('assigns a group a project role from the access page, and the pages groups light load clean', async () => {
    const group = `envui-group-${run}`;
    const created = await apiJson<{ id: number }>(server.base, 'POST', '/api/admin/groups', { name: group, users: [] });
    await runFlow(browser, server.base, 'project-access-group', async (session) => {
      const { page } = session;
      await signIn(session, 'admin', 'unleash4all');
      await page.goto(`/projects/${PROJECT}/settings/access`);
      await page.getByRole('button', { name: 'Assign user / group' }).first().click();
      await page.getByRole('combobox', { name: 'User / group' }).fill(group);
      await page.getByRole('option', { name: new RegExp(group) }).click();
      await page.keyboard.press('Escape');
      await page.getByRole('combobox', { name: 'Role' }).fill('Member');
      await page.getByRole('option', { name: /^Member/ }).click();
      expect(
        await answered(page, 'POST', new RegExp(`^/api/admin/projects/${PROJECT}/access$`), () =>
          page.getByRole('button', { name: 'Assign user / group', exact: true }).last().click(),
        ),
      ).toBeLessThan(300);
      await page.getByRole('row', { name: new RegExp(group) }).waitFor({ timeout: 15_000 });
      for (const path of ['/admin/groups', `/admin/groups/${created.id}`, '/admin/users']) {
        await page.goto(path);
        await page.waitForLoadState('networkidle');
      }
    });
    const access = await apiJson<{ roles: { id: number; name: string }[]; groups: { id: number; roles?: number[] }[] }>(
      server.base,
      'GET',
      `/api/admin/projects/${PROJECT}/access`,
    );
    const member = access.roles.find((role) => role.name === 'Member')!;
    expect(access.groups.find((g) => g.id === created.id)?.roles).toEqual([member.id]);
  }, 300_000);
});

describe('Admin → SCIM', () => {
  it('enabling SCIM shows its token once; a new token replaces it', async () => {
    const tokens: string[] = [];
    await runFlow(browser, server.base, 'scim-settings', async (session) => {
      const { page } = session;
      await signIn(session, 'admin', 'unleash4all');
      await page.goto('/admin/auth/scim');
      const toggle = page.getByRole('checkbox', { name: /Disabled|Enabled/ });
      await toggle.waitFor({ timeout: PAGE_LOAD_TIMEOUT });
      expect(await toggle.isChecked()).toBe(false);
      const generated = page.waitForResponse(
        (r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/scim-settings/generate-new-token'),
      );
      expect(await answered(page, 'POST', /^\/api\/admin\/scim-settings$/, () => toggle.check())).toBe(200);
      tokens.push(((await (await generated).json()) as { token: string }).token);
      const shown = page.getByRole('dialog', { name: 'SCIM API token created' });
      await expect.poll(() => shown.innerText()).toContain(tokens[0]);
      await shown.getByRole('button', { name: 'Close' }).click();

      // A new token: confirmed, then shown once.
      await page.getByRole('button', { name: 'Generate new token' }).click();
      const again = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/generate-new-token'));
      await page.getByRole('dialog', { name: 'Generate new SCIM API token?' }).getByRole('button', { name: 'Generate new token' }).click();
      tokens.push(((await (await again).json()) as { token: string }).token);
      await expect.poll(() => shown.innerText()).toContain(tokens[1]);
      await page.reload();
      await page.getByRole('checkbox', { name: 'Enabled' }).waitFor({ timeout: PAGE_LOAD_TIMEOUT });
      // Shown once: the page, reloaded, no longer has it.
      expect(await page.locator('body').innerText()).not.toContain(tokens[1]);
    });
    expect(tokens[0]).not.toBe(tokens[1]);
    // The old token no longer works against the SCIM API; the new one does.
    const scim = (token: string) => fetch(`${server.base}/scim/v2/Users`, { headers: { authorization: `Bearer ${token}` } });
    expect((await scim(tokens[0]!)).status).toBe(401);
    expect((await scim(tokens[1]!)).status).toBe(200);
    expect(await apiJson(server.base, 'GET', '/api/admin/scim-settings')).toMatchObject({ enabled: true, hasToken: true });
  }, 300_000);
});
