/**
 * Unleash 6.10.1's own admin UI, served by the Worker, driven in chromium against the real
 * Worker (wrangler dev, fresh local state). One test per flow a person does in the UI; each
 * fails on any error the UI's own calls meet that the flow did not cause on purpose.
 */
import type { Browser } from 'playwright-core';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { apiJson, launchBrowser, runFlow, signIn, startServer, writeCallSummary, type Server } from './support/harness';
import { createPerson, PAGE_LOAD_TIMEOUT, ROOT_ROLE } from './support/setup';

let server: Server;
let browser: Browser;
const PASSWORD = 'Ui-Test-Passw0rd!';
const ADMIN_USER = 'ui-admin';
const run = Date.now().toString(36);

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  // The person who uses the UI: an Admin with a password (set through the admin API).
  await createPerson(server.base, { username: ADMIN_USER, password: PASSWORD, name: 'UI Admin', rootRole: ROOT_ROLE.admin });
}, 600_000);

afterAll(async () => {
  writeCallSummary();
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
      const created = page.waitForResponse(
        (response) => response.url().endsWith('/api/admin/api-tokens') && response.request().method() === 'POST',
      );
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

  it('create a flag of a type chosen from the list, add a gradual rollout with a constraint, turn it on in development and production, see its event log', async () => {
    const flagName = `ui-flag-${run}`;
    await runFlow(browser, server.base, 'flag', async (session) => {
      const { page } = session;
      await signIn(session, ADMIN_USER, PASSWORD);

      await page.goto('/projects/default');
      await page
        .getByRole('button', { name: /new feature flag/i })
        .first()
        .click({ timeout: PAGE_LOAD_TIMEOUT });
      const dialog = page.getByRole('dialog').last();
      await dialog.getByTestId('FORM_NAME_INPUT').locator('input').fill(flagName);
      await dialog.getByRole('button', { name: 'Release' }).click();
      await page
        .locator('li')
        .filter({ hasText: /^Experiment$/ })
        .click();
      const created = page.waitForResponse(
        (r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/projects/default/features'),
      );
      await dialog.getByTestId('FORM_CREATE_BUTTON').click();
      expect((await created).status()).toBe(201);
      await page.waitForURL(new RegExp(`/projects/default/features/${flagName}$`));

      // Gradual rollout (the default strategy) with a userId constraint, in development.
      await page.getByRole('button', { name: 'Add strategy', exact: true }).first().click();
      await page.waitForURL(/strategies\/create\?environmentId=development/);
      await page.getByRole('tab', { name: /Targeting/ }).click();
      await page.getByTestId('ADD_CONSTRAINT_BUTTON').click();
      await page.locator('#context-field-select').click();
      await page.getByRole('option', { name: 'userId' }).click();
      await page.getByTestId('CONSTRAINT_VALUES_INPUT').locator('input').fill('alice, bob');
      await page.getByTestId('CONSTRAINT_VALUES_ADD_BUTTON').click();
      await page.getByTestId('CONSTRAINT_SAVE_BUTTON').click();
      const saved = page.waitForResponse(
        (r) => r.request().method() === 'POST' && /\/environments\/development\/strategies$/.test(r.url()),
      );
      await page.getByTestId('STRATEGY_FORM_SUBMIT_ID').click();
      expect((await saved).status()).toBe(200);
      await page.waitForURL(new RegExp(`/projects/default/features/${flagName}$`));

      for (const environment of ['development', 'production']) {
        const toggled = page.waitForResponse(
          (r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith(`/environments/${environment}/on`),
        );
        await page.getByRole('checkbox', { name: environment }).click();
        // Production has no strategy yet: the UI offers to add the default one first.
        const confirm = page.getByRole('dialog').getByRole('button', { name: /add default strategy|enable|yes/i });
        await Promise.race([
          toggled,
          confirm
            .first()
            .waitFor({ timeout: 5_000 })
            .then(() => confirm.first().click())
            .catch(() => undefined),
        ]);
        expect((await toggled).status()).toBe(200);
        await expect.poll(() => page.getByRole('checkbox', { name: environment }).isChecked()).toBe(true);
      }

      const feature = await apiJson(server.base, 'GET', `/api/admin/projects/default/features/${flagName}`);
      expect(feature.type).toBe('experiment');
      const development = feature.environments.find((e: { name: string }) => e.name === 'development');
      expect(development.enabled).toBe(true);
      expect(development.strategies[0]).toMatchObject({
        name: 'flexibleRollout',
        constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice', 'bob'] }],
      });
      expect(feature.environments.find((e: { name: string }) => e.name === 'production').enabled).toBe(true);

      // The flag's event log lists what was just done.
      await page.getByRole('tab', { name: 'Event log' }).click();
      await page.waitForURL(/\/logs$/);
      await expect.poll(() => page.locator('main').innerText(), { timeout: 15_000 }).toMatch(/feature-environment-enabled|enabled/i);
      const text = await page.locator('main').innerText();
      expect(text).toContain(flagName);
    });
  });

  it('open a user, edit them and see their access', async () => {
    const personId = await createPerson(server.base, {
      email: `ui-person-${run}@example.com`,
      name: 'Pat Person',
      rootRole: ROOT_ROLE.viewer,
    });
    await runFlow(browser, server.base, 'user', async (session) => {
      const { page } = session;
      await signIn(session, ADMIN_USER, PASSWORD);
      await page.goto('/admin/users');
      const row = page.getByRole('row').filter({ hasText: 'Pat Person' });
      await row.getByRole('button', { name: 'User actions' }).click();
      await page.getByRole('menuitem', { name: /edit/i }).click();
      await page.waitForURL(new RegExp(`/admin/users/${personId}/edit`));
      const name = page.getByLabel(/full name/i);
      await expect.poll(() => name.inputValue()).toBe('Pat Person');
      await name.fill('Pat Renamed');
      const saved = page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().endsWith(`/api/admin/user-admin/${personId}`));
      await page.getByRole('button', { name: /save/i }).click();
      expect((await saved).status()).toBe(200);
      expect((await apiJson(server.base, 'GET', `/api/admin/user-admin/${personId}`)).name).toBe('Pat Renamed');

      await page.goto('/admin/users');
      await page.getByRole('row').filter({ hasText: 'Pat Renamed' }).getByRole('button', { name: 'User actions' }).click();
      await page.getByRole('menuitem', { name: /access/i }).click();
      await page.waitForURL(new RegExp(`/admin/users/${personId}/access`));
      await expect.poll(() => page.locator('main').innerText(), { timeout: 15_000 }).toMatch(/Viewer/);
    });
  });

  it('create, edit and disable an invite link; sign up through it in a second browser and sign in as that person', async () => {
    const email = `ui-invitee-${run}@example.com`;
    const password = 'Invitee-Passw0rd!';
    let link = '';
    await runFlow(browser, server.base, 'invite-link', async (session) => {
      const { page } = session;
      await signIn(session, ADMIN_USER, PASSWORD);
      await page.goto('/admin/users');
      await page.getByRole('button', { name: 'Create invite link' }).click();
      await page.waitForURL(/\/admin\/invite-link/);
      const created = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/invite-link/tokens'));
      await page.getByRole('button', { name: 'Create invite link' }).click();
      expect((await created).status()).toBe(201);

      // The users page shows the link: absolute, on this server, to the UI's signup page.
      await page.goto('/admin/users');
      const shown = async () => /\S*\/new-user\?invite=[0-9a-f]{32}/.exec(await page.locator('main').innerText())?.[0] ?? '';
      await expect.poll(shown).not.toBe('');
      link = await shown();
      expect(link).toMatch(new RegExp(`^${server.base}/new-user\\?invite=[0-9a-f]{32}$`));

      // Edit: a longer expiry.
      await page.getByRole('button', { name: 'Update invite link' }).click();
      await page.locator('#mui-component-select-type').click();
      await page.getByRole('option', { name: '1 week' }).click();
      const updated = page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().includes('/api/admin/invite-link/tokens/'));
      await page.getByRole('button', { name: 'Update invite link' }).click();
      expect((await updated).status()).toBe(200);
      const secret = new URL(link).searchParams.get('invite')!;
      const token = await apiJson(server.base, 'GET', `/api/admin/invite-link/tokens/${secret}`);
      expect(Date.parse(token.expiresAt) - Date.now()).toBeGreaterThan(6 * 24 * 3600 * 1000);

      // A second browser: sign up through the link, then sign in as that person.
      const invitee = await (await import('./support/harness')).Session.open(browser, server.base);
      try {
        invitee.expect(...(await import('./support/harness')).SIGNED_OUT);
        const other = invitee.page;
        await other.goto(link);
        await other.getByLabel(/email/i).fill(email);
        await other.getByLabel(/full name/i).fill('Ivy Invitee');
        await other.getByPlaceholder('Password', { exact: true }).fill(password);
        await other.getByPlaceholder('Confirm password').fill(password);
        const signedUp = other.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(`/invite/${secret}/signup`));
        await other.getByRole('button', { name: 'Submit' }).click();
        expect((await signedUp).status()).toBe(201);
        await other.context().clearCookies();
        await signIn(invitee, email, password);
        await expect.poll(() => other.locator('body').innerText(), { timeout: PAGE_LOAD_TIMEOUT }).toContain('Ivy Invitee');
        if (invitee.problems.length > 0) throw new Error(`the invitee's browser met problems:\n${invitee.problems.join('\n')}`);
      } catch (error) {
        await invitee.screenshot('invite-link-invitee');
        throw error;
      } finally {
        await invitee.close();
      }

      // Disable ("Delete link" in the UI): the link stops working.
      await page.goto('/admin/invite-link');
      await page.getByRole('button', { name: 'Delete link' }).click();
      const disabled = page.waitForResponse(
        (r) => r.request().method() === 'PUT' && r.url().includes(`/api/admin/invite-link/tokens/${secret}`),
      );
      await page.getByRole('dialog').last().getByRole('button', { name: "Yes, I'm sure" }).click();
      expect((await disabled).status()).toBe(200);
      expect((await apiJson(server.base, 'GET', `/api/admin/invite-link/tokens/${secret}`)).enabled).toBe(false);
      expect((await fetch(`${server.base}/invite/${secret}/validate`)).status).toBe(400);
    });
  });

  it('search: find a flag by name and by tag, page through and sort', async () => {
    const prefix = `ui-search-${run}`;
    const names = Array.from({ length: 30 }, (_, index) => `${prefix}-${String(index + 1).padStart(2, '0')}`);
    for (const name of names) await apiJson(server.base, 'POST', '/api/admin/projects/default/features', { name });
    const tag = `found-${run}`;
    await apiJson(server.base, 'POST', `/api/admin/features/${names[6]}/tags`, { type: 'simple', value: tag });

    await runFlow(browser, server.base, 'search', async (session) => {
      const { page } = session;
      await signIn(session, ADMIN_USER, PASSWORD);
      const searched = (predicate: (params: URLSearchParams) => boolean) =>
        page.waitForResponse((r) => {
          const url = new URL(r.url());
          return url.pathname === '/api/admin/search/features' && predicate(url.searchParams);
        });

      // By name, typed into the search box.
      await page.goto('/search');
      const byName = searched((params) => params.get('query') === names[6]);
      await page
        .getByPlaceholder(/search/i)
        .first()
        .fill(names[6]!);
      expect((await byName).status()).toBe(200);
      const rows = page.locator('tbody tr');
      await expect.poll(() => rows.allInnerTexts()).toEqual([expect.stringContaining(names[6]!)]);

      // By tag, the filter the UI keeps in its URL.
      const byTag = searched((params) => params.get('tag') === `INCLUDE:simple:${tag}`);
      await page.goto(`/search?tag=${encodeURIComponent(`INCLUDE:simple:${tag}`)}`);
      expect((await byTag).status()).toBe(200);
      await expect.poll(() => rows.allInnerTexts()).toEqual([expect.stringContaining(names[6]!)]);

      // Page through the 30 flags of the prefix, 25 a page.
      await page.goto(`/search?query=${prefix}`);
      await expect.poll(() => page.locator('main').innerText()).toContain('Showing 1-25 items out of 30');
      const nextPage = searched((params) => params.get('offset') === '25');
      await page.getByText('Page 1 of 2').locator('..').getByRole('button').last().click();
      expect((await nextPage).status()).toBe(200);
      await expect.poll(() => page.locator('main').innerText()).toContain('Showing 26-30 items out of 30');

      // Sort by name, ascending then descending.
      await page.goto(`/search?query=${prefix}`);
      const byNameAsc = searched((params) => params.get('sortBy') === 'name');
      await page.getByRole('button', { name: 'Name' }).click();
      const ascending = await byNameAsc;
      expect(ascending.status()).toBe(200);
      const order = new URL(ascending.url()).searchParams.get('sortOrder');
      await expect.poll(async () => (await rows.first().innerText()).includes(order === 'asc' ? names[0]! : names[29]!)).toBe(true);
    });
  });

  it("import an export file through the project's import dialog and see the flags", async () => {
    const names = [`ui-import-${run}-a`, `ui-import-${run}-b`];
    const file = {
      features: names.map((name) => ({
        name,
        type: 'release',
        project: 'default',
        description: 'imported',
        stale: false,
        impressionData: false,
      })),
      featureStrategies: [{ name: 'default', featureName: names[0], parameters: {}, constraints: [], sortOrder: 0 }],
      featureEnvironments: [{ enabled: true, featureName: names[0], environment: 'development', variants: [], name: names[0] }],
      contextFields: [],
      featureTags: [{ featureName: names[1], tagType: 'simple', tagValue: `imported-${run}` }],
      segments: [],
      tagTypes: [{ name: 'simple', description: 'Used to simplify filtering of features', icon: '#' }],
      dependencies: [],
    };
    await runFlow(browser, server.base, 'import', async (session) => {
      const { page } = session;
      await signIn(session, ADMIN_USER, PASSWORD);
      await page.goto('/projects/default');
      // Drawn as a skeleton until the page's data has loaded (see the export flow).
      const importButton = page.getByTestId('IMPORT_BUTTON');
      await expect
        .poll(async () => (await importButton.getAttribute('class')) ?? 'skeleton', { timeout: PAGE_LOAD_TIMEOUT })
        .not.toContain('skeleton');
      await importButton.click();
      await page
        .getByTestId('import-file')
        .setInputFiles({ name: 'export.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(file)) });
      const validated = page.waitForResponse(
        (r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/features-batch/validate'),
      );
      await page.getByTestId('VALIDATE_BUTTON').click();
      const validation = await validated;
      expect(validation.status()).toBe(200);
      expect(await validation.json()).toEqual({ errors: [], warnings: [], permissions: [] });
      const imported = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/features-batch/import'));
      await page.getByRole('button', { name: /^import configuration$/i }).click();
      expect((await imported).status()).toBe(200);
      await expect.poll(() => page.locator('body').innerText()).toMatch(/import completed|imported/i);

      await page.goto(`/projects/default?query=ui-import-${run}`);
      const listed = async () =>
        (await page.locator('tbody tr').allInnerTexts()).map((row) => names.find((name) => row.includes(name))).sort();
      await expect.poll(listed).toEqual([...names].sort());
      const feature = await apiJson(server.base, 'GET', `/api/admin/projects/default/features/${names[0]}`);
      expect(feature.environments.find((e: { name: string }) => e.name === 'development').enabled).toBe(true);
    });
  });

  it('export the project: every flag of it, for the chosen environment', async () => {
    const exportedName = `ui-export-${run}`;
    await apiJson(server.base, 'POST', '/api/admin/projects/default/features', { name: exportedName });
    await runFlow(browser, server.base, 'export', async (session) => {
      const { page } = session;
      await signIn(session, ADMIN_USER, PASSWORD);
      await page.goto('/projects/default');
      // The button is drawn as a skeleton until the page's data has loaded; one clicked then
      // can stay waiting on the stale element.
      const exportButton = page.getByRole('button', { name: 'Export all project flags' });
      await expect
        .poll(async () => (await exportButton.getAttribute('class')) ?? 'skeleton', { timeout: PAGE_LOAD_TIMEOUT })
        .not.toContain('skeleton');
      await exportButton.click();
      const dialog = page.getByRole('dialog').last();
      // The dialog takes its first environment once, when the flag list has loaded; the project
      // (whose environments it lists) can still be loading then, when our search answers first,
      // and the choice stays empty (Unleash's search is slow enough never to win that race). So
      // choose the environment, as a person facing the empty choice would.
      await dialog.locator('[role="combobox"], [aria-haspopup="listbox"]').first().click();
      await page.getByRole('option', { name: 'development', exact: true }).click({ timeout: PAGE_LOAD_TIMEOUT });
      const exported = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/admin/features-batch/export'));
      const download = page.waitForEvent('download');
      await dialog.getByRole('button', { name: /^export/i }).click();
      const response = await exported;
      expect(response.status()).toBe(200);
      expect(JSON.parse(response.request().postData()!)).toMatchObject({ features: [], project: 'default', environment: 'development' });
      const body = (await response.json()) as { features: { name: string }[] };
      const all = await apiJson<{ total: number }>(server.base, 'GET', '/api/admin/search/features?project=IS:default&limit=1');
      expect(body.features.map((feature) => feature.name)).toContain(exportedName);
      expect(body.features).toHaveLength(all.total);
      const file = await download;
      expect(file.suggestedFilename()).toMatch(/\.json$/);
    });
  });

  it('a page on another origin of the same site cannot write with the session cookie; the UI itself can', async () => {
    const flagName = `ui-forged-${run}`;
    await apiJson(server.base, 'POST', '/api/admin/projects/default/features', { name: flagName });
    const target = `${server.base}/api/admin/projects/default/features/${flagName}/environments/development/on`;
    const enabled = async () => {
      const feature = await apiJson(server.base, 'GET', `/api/admin/projects/default/features/${flagName}`);
      return feature.environments.find((e: { name: string }) => e.name === 'development').enabled as boolean;
    };
    // Same host, another port: another origin but the same site, so SameSite=Lax lets the
    // session cookie go along, as it would from a sibling subdomain. A real server, so that the
    // browser sees a page of the same (loopback) address space.
    const other = createServer((_, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>another page</title>');
    });
    await new Promise<void>((resolve) => other.listen(0, new URL(server.base).hostname, resolve));
    const sibling = `http://${new URL(server.base).hostname}:${(other.address() as AddressInfo).port}`;
    onTestFinished(() => new Promise<void>((resolve) => other.close(() => resolve())));
    await runFlow(browser, server.base, 'forged-writes', async (session) => {
      const { page } = session;
      await signIn(session, ADMIN_USER, PASSWORD);
      session.expect(
        { method: 'POST', path: /\/environments\/development\/on$/, status: 403 },
        { method: 'POST', path: /^\/logout$/, status: 403 },
      );
      // The session answers other origins itself (no internet here); this one is really loaded.
      await session.context.route(`${sibling}/**`, (route) => route.continue());
      await page.goto(`${sibling}/page.html`);

      // The classic forgery: a body-less, text/plain POST needs no CORS preflight.
      const forged = page.waitForResponse((r) => r.url() === target);
      await page.evaluate(
        // The page cannot read the answer (the browser blocks an opaque JSON response): it only sends.
        (url) =>
          fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' } }).then(
            () => undefined,
            () => undefined,
          ),
        target,
      );
      const answer = await forged;
      expect(answer.status()).toBe(403);
      expect(await answer.request().headerValue('cookie')).toMatch(/unleash-session=/);
      expect(await enabled()).toBe(false);

      // A form posting /logout signs nobody out.
      const logout = page.waitForResponse((r) => r.url() === `${server.base}/logout`);
      await page.evaluate((action) => {
        const form = document.createElement('form');
        form.method = 'POST';
        form.action = action;
        document.body.append(form);
        form.submit();
      }, `${server.base}/logout`);
      expect((await logout).status()).toBe(403);
      // The form navigated the page to the refusal: let that navigation finish before the next.
      await page.waitForURL(`${server.base}/logout`);

      // Back on the service's own pages, the same request passes.
      await page.goto('/projects/default');
      const own = await page.evaluate((url) => fetch(url, { method: 'POST', credentials: 'include' }).then((r) => r.status), target);
      expect(own).toBe(200);
      expect(await enabled()).toBe(true);
    });
  });
});
