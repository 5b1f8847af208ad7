/**
 * Flag pages of Unleash 6.10.1's own UI, served by the Worker, in chromium against the real
 * Worker (wrangler dev, fresh local state): the playground, tags, variants, strategy order and
 * custom strategies. Each flow fails on any error the UI's own calls meet that it did not
 * cause on purpose.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiJson, launchBrowser, runFlow, signIn, startServer, writeCallSummary, type Server } from './support/harness';
import { createPerson, ROOT_ROLE } from './support/setup';

let server: Server;
let browser: Browser;
const PASSWORD = 'Ui-Test-Passw0rd!';
const USER = 'ui-flags-admin';
const run = Date.now().toString(36);

const feature = (name: string) => `/api/admin/projects/default/features/${name}`;

/** A flag in the default project with the given development strategies, on in development. */
async function flagWith(name: string, strategies: Record<string, unknown>[]): Promise<string[]> {
  await apiJson(server.base, 'POST', '/api/admin/projects/default/features', { name });
  const ids: string[] = [];
  for (const strategy of strategies)
    ids.push((await apiJson<{ id: string }>(server.base, 'POST', `${feature(name)}/environments/development/strategies`, strategy)).id);
  await apiJson(server.base, 'POST', `${feature(name)}/environments/development/on`);
  return ids;
}

/** Opens an environment's panel on a flag's page (a panel with strategies starts closed). */
async function openEnvironment(page: Page, environment: string): Promise<void> {
  const header = page.getByRole('button', { name: new RegExp(`^Environment ${environment}`) }).first();
  await header.waitFor();
  if ((await header.getAttribute('aria-expanded')) !== 'true') await header.getByText(environment, { exact: true }).first().click();
  await expect.poll(() => header.getAttribute('aria-expanded')).toBe('true');
}

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await createPerson(server.base, {
    username: USER,
    password: PASSWORD,
    email: 'ui-flags@example.com',
    name: 'UI Flags',
    rootRole: ROOT_ROLE.admin,
  });
}, 180_000);

afterAll(async () => {
  writeCallSummary();
  await browser?.close();
  await server?.stop();
});

describe('Unleash admin UI: flags', () => {
  it('the playground shows the result for a flag with a constraint, down to the constraint', async () => {
    const name = `ui-pg-${run}`;
    await flagWith(name, [{ name: 'default', constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice'] }] }]);
    await runFlow(browser, server.base, 'playground', async (session) => {
      const { page } = session;
      await signIn(session, USER, PASSWORD);
      // The playground's own shareable link: it fills the form and evaluates at once.
      const evaluated = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/playground/advanced'));
      await page.goto(`/playground?environments=development&projects=default&context=${encodeURI(JSON.stringify({ userId: 'alice' }))}`);
      expect((await evaluated).status()).toBe(200);
      const row = page.getByRole('row').filter({ hasText: name });
      await expect.poll(() => row.count()).toBe(1);
      // The environment cell opens the evaluations per context; its details show the strategy and constraint.
      await row.getByRole('button').last().click();
      const popover = page.getByRole('presentation').last();
      await expect.poll(() => popover.innerText()).toMatch(/alice[\s\S]*True/);
      await popover.getByRole('button').last().click();
      await expect.poll(() => page.locator('body').innerText()).toMatch(/userId/);
      const text = await page.locator('body').innerText();
      expect(text).toMatch(/is one of|IN/);

      // Another context from the form: the same flag is now off for bob.
      const again = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/playground/advanced'));
      await page.goto(`/playground?environments=development&projects=default&context=${encodeURI(JSON.stringify({ userId: 'bob' }))}`);
      const answer = await (await again).json();
      const result = answer.features.find((f: { name: string }) => f.name === name);
      expect(result.environments.development[0]).toMatchObject({ isEnabled: false, strategies: { result: false } });
    });
  });

  it('tag a flag from its page', async () => {
    const name = `ui-tag-${run}`;
    await flagWith(name, [{ name: 'default' }]);
    const value = `ui-value-${run}`;
    await runFlow(browser, server.base, 'tag', async (session) => {
      const { page } = session;
      await signIn(session, USER, PASSWORD);
      await page.goto(`/projects/default/features/${name}`);
      await page.getByRole('button', { name: 'Add tag' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Update feature flag tags' });
      await dialog.getByRole('combobox', { name: 'Select values' }).fill(value);
      await page.getByRole('option').filter({ hasText: value }).first().click();
      const saved = page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().endsWith(`/api/admin/features/${name}/tags`));
      await dialog.getByRole('button', { name: 'Save tags' }).click();
      expect((await saved).status()).toBe(200);
      await expect.poll(() => page.getByRole('button', { name: `simple:${value}` }).count()).toBe(1);
      const tags = await apiJson<{ tags: { type: string; value: string }[] }>(server.base, 'GET', `/api/admin/features/${name}/tags`);
      expect(tags.tags.map((tag) => ({ type: tag.type, value: tag.value }))).toEqual([{ type: 'simple', value }]);
    });
  });

  it("the Variants tab's save is refused with 6.10.1's deprecation message, shown in the UI", async () => {
    const name = `ui-variants-${run}`;
    await flagWith(name, [{ name: 'default' }]);
    await runFlow(browser, server.base, 'variants', async (session) => {
      const { page } = session;
      await signIn(session, USER, PASSWORD);
      // The refusal is the point of this flow.
      session.expect({ method: 'PATCH', path: new RegExp(`/features/${name}/environments/development/variants$`), status: 403 });
      await page.goto(`/projects/default/features/${name}/variants`);
      await page.getByRole('button', { name: 'Add variant' }).first().click();
      await page.getByTestId('VARIANT_NAME_INPUT').locator('input').first().fill('blue');
      const refused = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().includes(`/features/${name}/environments/`));
      await page.getByRole('button', { name: /save/i }).last().click();
      const response = await refused;
      expect(response.status()).toBe(403);
      const message = `Environment variants deprecated for feature: ${name}. Use strategy variants instead.`;
      expect((await response.json()).message).toBe(message);
      await expect.poll(() => page.getByText(message).first().isVisible()).toBe(true);
      // Nothing was written.
      const development = (await apiJson(server.base, 'GET', `${feature(name)}?variantEnvironments=true`)).environments.find(
        (e: { name: string }) => e.name === 'development',
      );
      expect(development.variants).toEqual([]);
    });
  });

  it('reorder two strategies by dragging one above the other', async () => {
    const name = `ui-order-${run}`;
    const [first = '', second = ''] = await flagWith(name, [{ name: 'default' }, { name: 'userWithId', parameters: { userIds: 'alice' } }]);
    await runFlow(browser, server.base, 'reorder', async (session) => {
      const { page } = session;
      await signIn(session, USER, PASSWORD);
      await page.goto(`/projects/default/features/${name}`);
      await openEnvironment(page, 'development');
      const handles = page.getByRole('button', { name: 'Drag to reorder' });
      await expect.poll(() => handles.count()).toBe(2);
      // The UI's first-visit hint about ordering sits over the handles until dismissed.
      const hint = page.getByRole('button', { name: 'Ok, got it!' });
      if (await hint.isVisible().catch(() => false)) await hint.click();
      const ordered = page.waitForResponse(
        (r) => r.request().method() === 'POST' && r.url().endsWith('/environments/development/strategies/set-sort-order'),
      );
      await handles.nth(1).dragTo(handles.nth(0));
      const response = await ordered;
      expect(response.status()).toBe(200);
      const order = JSON.parse(response.request().postData()!) as { id: string; sortOrder: number }[];
      const position = (id: string) => order.find((entry) => entry.id === id)!.sortOrder;
      expect(position(second)).toBeLessThan(position(first));
      const development = (await apiJson(server.base, 'GET', feature(name))).environments.find(
        (e: { name: string }) => e.name === 'development',
      );
      expect(development.strategies.map((s: { id: string }) => s.id)).toEqual([second, first]);
    });
  });

  it('define a custom strategy and add it to a flag', async () => {
    const name = `ui-custom-${run}`;
    const strategy = `uiCustom${run}`;
    await flagWith(name, [{ name: 'default' }]);
    await runFlow(browser, server.base, 'custom-strategy', async (session) => {
      const { page } = session;
      await signIn(session, USER, PASSWORD);
      await page.goto('/strategies/create');
      await page.getByRole('textbox', { name: 'Strategy name*' }).fill(strategy);
      await page.getByRole('textbox', { name: 'Strategy description' }).fill('Teams that may see it');
      await page.getByRole('button', { name: 'Add parameter' }).click();
      await page.getByRole('textbox', { name: 'Parameter name 1*' }).fill('team');
      const created = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/strategies'));
      await page.getByRole('button', { name: 'Create strategy' }).click();
      expect((await created).status()).toBe(201);
      await page.waitForURL(new RegExp(`/strategies/${strategy}$`));

      await page.goto(`/projects/default/features/${name}`);
      await openEnvironment(page, 'development');
      // The development panel comes first; its menu lists the custom strategies.
      await page.getByRole('button', { name: 'More strategies' }).first().click();
      await page.getByRole('link', { name: new RegExp(`^${strategy}`) }).click();
      await page.waitForURL(/strategies\/create/);
      await page.getByRole('textbox', { name: /team/ }).fill('core');
      const added = page.waitForResponse(
        (r) => r.request().method() === 'POST' && /\/environments\/development\/strategies$/.test(r.url()),
      );
      await page.getByTestId('STRATEGY_FORM_SUBMIT_ID').click();
      expect((await added).status()).toBe(200);
      await page.waitForURL(new RegExp(`/projects/default/features/${name}$`));

      const development = (await apiJson(server.base, 'GET', feature(name))).environments.find(
        (e: { name: string }) => e.name === 'development',
      );
      expect(development.strategies.map((s: { name: string; parameters: Record<string, string> }) => [s.name, s.parameters])).toEqual([
        ['default', {}],
        [strategy, { team: 'core' }],
      ]);
      // SDKs are served it as stored.
      const key = await apiJson<{ secret: string }>(server.base, 'POST', '/api/admin/api-tokens', {
        tokenName: `ui-custom-${run}`,
        type: 'client',
        environment: 'development',
      });
      const served = await (await fetch(`${server.base}/api/client/features/${name}`, { headers: { authorization: key.secret } })).json();
      expect(served.strategies.map((s: { name: string }) => s.name)).toEqual(['default', strategy]);
    });
  });
});
