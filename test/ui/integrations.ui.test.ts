/**
 * The Integrations page of Unleash's UI against the Worker: a webhook integration made in the
 * UI receives a flag's change (through the Queue) and its event log shows the delivery.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiJson, launchBrowser, runFlow, signIn, startServer, type Server } from './support/harness';
import { createPerson, ROOT_ROLE } from './support/setup';

let server: Server;
let browser: Browser;
let receiver: HttpServer;
const received: { path: string; body: string }[] = [];
const PASSWORD = 'Ui-Test-Passw0rd!';
const USER = 'ui-integrations-admin';
const run = Date.now().toString(36);

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      received.push({ path: request.url ?? '', body });
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  server = await startServer();
  browser = await launchBrowser();
  await createPerson(server.base, { username: USER, password: PASSWORD, email: 'ui-integrations@example.com', rootRole: ROOT_ROLE.admin });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('Integrations in the UI', () => {
  it('create a webhook integration, turn a flag on in production, see the delivery in its event log', async () => {
    const { port } = receiver.address() as AddressInfo;
    const hookUrl = `http://127.0.0.1:${port}/hook-${run}`;
    const flagName = `ui-hooked-${run}`;
    await runFlow(browser, server.base, 'integration', async (session) => {
      const { page } = session;
      // A step that cannot happen fails within seconds, with a screenshot, not at the test's timeout.
      page.setDefaultTimeout(30_000);
      await signIn(session, USER, PASSWORD);

      await page.goto('/integrations/create/webhook');
      await page.locator('input[name="url"]').fill(hookUrl);
      await page.getByTestId('select-event-input').locator('input').click();
      await page.getByTestId('select-event-input').locator('input').fill('feature-environment-enabled');
      await page.getByRole('option', { name: 'feature-environment-enabled' }).click();
      await page.keyboard.press('Escape');
      const created = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/addons'));
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      expect((await created).status()).toBe(201);
      const { addons } = await apiJson<{ addons: { id: number; provider: string }[] }>(server.base, 'GET', '/api/admin/addons');
      expect(addons.map((addon) => addon.provider)).toEqual(['webhook']);
      const id = addons[0]!.id;

      await apiJson(server.base, 'POST', '/api/admin/projects/default/features', { name: flagName });
      await apiJson(server.base, 'POST', `/api/admin/projects/default/features/${flagName}/environments/production/on`);
      await expect.poll(() => received.filter((request) => request.path === `/hook-${run}`).length).toBe(1);
      expect(JSON.parse(received.find((request) => request.path === `/hook-${run}`)!.body)).toMatchObject({
        type: 'feature-environment-enabled',
        featureName: flagName,
        environment: 'production',
      });

      await page.goto(`/integrations/edit/${id}`);
      await page.getByText('View events', { exact: true }).click();
      // The log opens in a side panel: the delivery, its outcome and the body that was sent.
      const outcome = page.getByText('Webhook request was successful with status code: 200.');
      await expect.poll(() => outcome.count()).toBe(1);
      await expect.poll(() => page.getByText(flagName).count()).toBeGreaterThan(0);
    });
  });
});
