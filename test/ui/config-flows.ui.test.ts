/**
 * Configuration and administration in Unleash 6.10.1's own UI, served by the Worker: context
 * fields, segments, tag types, a project's environments and maintenance mode. Each flow fails
 * on any error the UI's own calls meet that the flow did not cause on purpose.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, apiJson, launchBrowser, runFlow, signIn, startServer, type Server } from './support/harness';
import { createPerson, ROOT_ROLE } from './support/setup';

let server: Server;
let browser: Browser;
const PASSWORD = 'Ui-Config-Passw0rd!';
const ADMIN_USER = 'ui-config-admin';
const run = Date.now().toString(36);

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await createPerson(server.base, {
    username: ADMIN_USER,
    password: PASSWORD,
    email: 'ui-config-admin@example.com',
    name: 'Config Admin',
    rootRole: ROOT_ROLE.admin,
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** A flag in the default project, made through the API (the flows are about what is attached to it). */
async function createFlag(name: string): Promise<void> {
  await apiJson(server.base, 'POST', '/api/admin/projects/default/features', { name });
}

/** Opens the flag's "Add strategy" form for development (a gradual rollout, the default strategy). */
async function openNewStrategy(page: Page, flagName: string): Promise<void> {
  await page.goto(`/projects/default/features/${flagName}`);
  await page.getByRole('button', { name: 'Add strategy', exact: true }).first().click();
  await page.waitForURL(/strategies\/create\?environmentId=development/);
  await page.getByRole('tab', { name: /Targeting/ }).click();
}

/** Saves the strategy form and answers the strategy the API then holds in development. */
async function saveStrategy(page: Page, flagName: string) {
  const saved = page.waitForResponse((r) => r.request().method() === 'POST' && /\/environments\/development\/strategies$/.test(r.url()));
  await page.getByTestId('STRATEGY_FORM_SUBMIT_ID').click();
  expect((await saved).status()).toBe(200);
  await page.waitForURL(new RegExp(`/projects/default/features/${flagName}$`));
  const feature = await apiJson(server.base, 'GET', `/api/admin/projects/default/features/${flagName}`);
  return feature.environments.find((e: { name: string }) => e.name === 'development').strategies[0];
}

describe('Configuration in the Unleash UI', () => {
  it('create a context field with legal values, then use it in a constraint on a flag strategy', async () => {
    const field = `tier${run}`;
    const flagName = `ui-ctx-flag-${run}`;
    await createFlag(flagName);
    await runFlow(browser, server.base, 'context-field', async (session) => {
      const { page } = session;
      page.setDefaultTimeout(30_000);
      await signIn(session, ADMIN_USER, PASSWORD);

      await page.goto('/context/create');
      const validated = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/context/validate'));
      await page.getByLabel('Context name').fill(field);
      await page.getByLabel('Context description (optional)').click();
      expect((await validated).status()).toBe(200);
      await page.getByLabel('Context description (optional)').fill('Customer tier');
      for (const value of ['gold', 'silver']) {
        await page.getByLabel('Legal value (optional)').fill(value);
        await page.getByRole('button', { name: 'Add', exact: true }).click();
      }
      const created = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/context'));
      await page.getByRole('button', { name: 'Create context' }).click();
      expect((await created).status()).toBe(201);
      await page.waitForURL(/\/context$/);
      await expect.poll(() => page.getByRole('row').filter({ hasText: field }).count()).toBe(1);
      const stored = await apiJson(server.base, 'GET', `/api/admin/context/${field}`);
      expect(stored).toMatchObject({ name: field, description: 'Customer tier', legalValues: [{ value: 'gold' }, { value: 'silver' }] });

      // The field in a constraint: its legal values are offered to pick from.
      await openNewStrategy(page, flagName);
      await page.getByTestId('ADD_CONSTRAINT_BUTTON').click();
      await page.locator('#context-field-select').click();
      await page.getByRole('option', { name: field }).click();
      await page.getByRole('checkbox', { name: 'gold' }).click();
      await page.getByTestId('CONSTRAINT_SAVE_BUTTON').click();
      const strategy = await saveStrategy(page, flagName);
      expect(strategy.constraints).toEqual([expect.objectContaining({ contextName: field, operator: 'IN', values: ['gold'] })]);

      // The field now lists the flag's strategy among those that use it.
      const uses = await apiJson(server.base, 'GET', `/api/admin/context/${field}/strategies`);
      expect(uses.strategies).toEqual([expect.objectContaining({ featureName: flagName, environment: 'development' })]);
    });
  });

  it('create a segment and attach it to a flag strategy', async () => {
    const segmentName = `ui-segment-${run}`;
    const flagName = `ui-seg-flag-${run}`;
    await createFlag(flagName);
    await runFlow(browser, server.base, 'segment', async (session) => {
      const { page } = session;
      page.setDefaultTimeout(30_000);
      await signIn(session, ADMIN_USER, PASSWORD);

      await page.goto('/segments/create');
      const validated = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/segments/validate'));
      await page.getByTestId('SEGMENT_NAME_ID').locator('input').fill(segmentName);
      expect((await validated).status()).toBe(204);
      await page.getByTestId('SEGMENT_DESC_ID').locator('input').fill('Made in the UI');
      await page.getByTestId('SEGMENT_NEXT_BTN_ID').click();
      const created = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/segments'));
      await page.getByTestId('SEGMENT_CREATE_BTN_ID').click();
      expect((await created).status()).toBe(201);
      const { id } = (await (await created).json()) as { id: number };
      await expect.poll(() => page.getByRole('row').filter({ hasText: segmentName }).count()).toBe(1);

      await openNewStrategy(page, flagName);
      await page.getByPlaceholder('Select segments').click();
      await page.getByRole('option', { name: segmentName }).click();
      const strategy = await saveStrategy(page, flagName);
      expect(strategy.segments).toEqual([id]);

      // The segment knows where it is used.
      const uses = await apiJson(server.base, 'GET', `/api/admin/segments/${id}/strategies`);
      expect(uses.strategies).toEqual([expect.objectContaining({ featureName: flagName, environment: 'development' })]);
    });
  });

  it('create a tag type', async () => {
    const tagType = `ui-tag-type-${run}`;
    await runFlow(browser, server.base, 'tag-type', async (session) => {
      const { page } = session;
      page.setDefaultTimeout(30_000);
      await signIn(session, ADMIN_USER, PASSWORD);

      await page.goto('/tag-types/create');
      const validated = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/tag-types/validate'));
      await page.getByLabel('Tag name').fill(tagType);
      await page.getByLabel('Tag description').click();
      expect((await validated).status()).toBe(200);
      await page.getByLabel('Tag description').fill('Made in the UI');
      const created = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/tag-types'));
      await page.getByRole('button', { name: 'Create type' }).click();
      expect((await created).status()).toBe(201);
      await page.waitForURL(/\/tag-types$/);
      await expect.poll(() => page.getByRole('row').filter({ hasText: tagType }).count()).toBe(1);
      const { tagType: stored } = await apiJson(server.base, 'GET', `/api/admin/tag-types/${tagType}`);
      expect(stored).toMatchObject({ name: tagType, description: 'Made in the UI' });
    });
  });

  it('Project settings → Environments loads, and an environment is removed from the project', async () => {
    const project = `ui-envs-${run}`;
    await apiJson(server.base, 'POST', '/api/admin/projects', { id: project, name: 'Environments project' });
    const visible = async () => {
      const { environments } = await apiJson(server.base, 'GET', `/api/admin/environments/project/${project}`);
      return environments.filter((e: { visible: boolean }) => e.visible).map((e: { name: string }) => e.name);
    };
    expect(await visible()).toContain('production');
    await runFlow(browser, server.base, 'project-environments', async (session) => {
      const { page } = session;
      page.setDefaultTimeout(30_000);
      await signIn(session, ADMIN_USER, PASSWORD);

      const loaded = page.waitForResponse((r) => new URL(r.url()).pathname === `/api/admin/environments/project/${project}`);
      await page.goto(`/projects/${project}/settings/environments`);
      expect((await loaded).status()).toBe(200);
      // The row named production (the `default` environment is of type production too).
      const row = page.getByRole('row').filter({ hasText: /^\s*production/ });
      await expect.poll(() => row.count()).toBe(1);
      await expect.poll(() => page.locator('main').innerText()).not.toContain('Error fetching environments');

      // "Visible in project" is a switch; turning it off asks to confirm with the environment's name.
      const visibleSwitch = row.getByRole('checkbox');
      expect(await visibleSwitch.isChecked()).toBe(true);
      await visibleSwitch.click();
      const dialog = page.getByRole('dialog').last();
      await dialog.locator('input').fill('production');
      const removed = page.waitForResponse(
        (r) => r.request().method() === 'DELETE' && new URL(r.url()).pathname === `/api/admin/projects/${project}/environments/production`,
      );
      await dialog.getByRole('button', { name: 'Hide environment and disable feature flags' }).click();
      expect((await removed).status()).toBe(200);
      await expect.poll(visible).not.toContain('production');
      await expect.poll(() => visibleSwitch.isChecked()).toBe(false);
      expect(await visible()).toContain('development');
    });
  });

  it('maintenance mode on: a write is refused in the UI with its message; off again: the write passes', async () => {
    const tagType = `ui-maint-${run}`;
    const maintenance = async () => (await apiJson<{ enabled: boolean }>(server.base, 'GET', '/api/admin/maintenance')).enabled;
    try {
      await runFlow(browser, server.base, 'maintenance', async (session) => {
        const { page } = session;
        page.setDefaultTimeout(30_000);
        await signIn(session, ADMIN_USER, PASSWORD);
        // Unleash refuses every admin-API POST while on, the form's name check included.
        session.expect({ method: 'POST', path: /^\/api\/admin\/tag-types(\/validate)?$/, status: 503 });

        const setMaintenance = async (enabled: boolean) => {
          await page.goto('/admin/maintenance');
          // The switch shows the current state once the page has read it: a click before that would send the wrong one.
          const toggle = page.locator('input[name="enabled"]');
          await expect.poll(() => toggle.isChecked()).toBe(!enabled);
          const toggled = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/maintenance'));
          await toggle.click();
          expect((await toggled).status()).toBe(204);
          expect(JSON.parse((await toggled).request().postData()!)).toEqual({ enabled });
          await expect.poll(maintenance).toBe(enabled);
        };

        await setMaintenance(true);
        await expect.poll(() => page.locator('body').innerText()).toContain('Maintenance Mode!');

        // A write while on: refused, the form shows Unleash's message, nothing is stored.
        await page.goto('/tag-types/create');
        const refused = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/tag-types/validate'));
        await page.getByLabel('Tag name').fill(tagType);
        await page.getByLabel('Tag description').click();
        const answer = await refused;
        expect(answer.status()).toBe(503);
        expect(await answer.json()).toEqual({ message: 'Unleash is currently in maintenance mode.' });
        await expect.poll(() => page.locator('main').innerText()).toContain('Unleash is currently in maintenance mode.');
        await page.getByRole('button', { name: 'Create type' }).click();
        await page.waitForLoadState('networkidle');
        expect((await api(server.base, 'GET', `/api/admin/tag-types/${tagType}`)).status).toBe(404);
        expect(session.calls.filter((call) => call.method === 'POST' && call.path === '/api/admin/tag-types')).toEqual([]);

        await setMaintenance(false);
        await page.reload();
        await expect.poll(() => page.locator('body').innerText()).not.toContain('Maintenance Mode!');

        // Off again: the same write goes through.
        await page.goto('/tag-types/create');
        await page.getByLabel('Tag name').fill(tagType);
        const created = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/tag-types'));
        await page.getByRole('button', { name: 'Create type' }).click();
        expect((await created).status()).toBe(201);
      });
    } finally {
      // Never leave the instance in maintenance for the flows after this one.
      await api(server.base, 'POST', '/api/admin/maintenance', { enabled: false });
    }
  });
});
