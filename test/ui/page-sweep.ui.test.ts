/**
 * A sweep of every page Unleash 6.10.1's UI offers as we present it (the open-source edition
 * with the governance panels on: docs/ui.md), signed in as the admin, in one
 * browser context, one page after another. The list comes from the UI bundle's router
 * (ui-build/static: the app's routes, the admin, project and flag views' nested routes). Data is
 * seeded through the API first so the pages render with content: a project with a flag that has
 * a strategy with a constraint, a segment and variants, a tag, a context field, a segment, an
 * application reported by an SDK, an integration; and an empty project, whose pages are visited
 * too.
 *
 * Each page fails on a 4xx/5xx answer to its own calls, on uncaught page errors and console
 * errors, on the UI's error screen ("Something went wrong"), on any toast (a plain visit raises
 * none) and on the UI's own 404 page (so a wrong path in this list fails rather than passing
 * quietly). The calls the UI makes that 6.10.1 itself answers with 404, because they are Unleash
 * Enterprise's, are listed per page with the reason; each was checked against the real server,
 * driven through the same pages.
 *
 * The governance pages are visited with content: production of the swept project has change
 * requests on, and one request is in review (its page, the project's tab, the draft's calls on
 * the flag page). Not visited: /integrations/view/:provider and /admin/users/create-user (the
 * UI's 404 page in 6.10.1 whatever the edition).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually';
import {
  api,
  apiJson,
  launchBrowser,
  Session,
  signIn,
  startServer,
  writeCallSummary,
  type ExpectedFailure,
  type Server,
} from './support/harness';
import { changeRequestInReview, governEnvironment, PAGE_LOAD_TIMEOUT } from './support/setup';

let server: Server;
let browser: Browser;
let session: Session;

const run = Date.now().toString(36);
const PROJECT = `sweep-${run}`;
const EMPTY = `sweep-empty-${run}`;
const FLAG = `sweep-flag-${run}`;
const APP = `sweep-app-${run}`;
const CONTEXT = `sweepContext${run}`;
const SEGMENT = `sweep-segment-${run}`;
const TAG = `sweep-tag-${run}`;

/** Ids the seed learns from the API. */
const seeded = { strategyId: '', segmentId: 0, addonId: 0, adminId: 0, changeRequestId: 0 };

/** Enterprise endpoints some OSS pages call; Unleash 6.10.1 OSS answers each 404 (no such route). */
const enterprise = (path: RegExp): ExpectedFailure => ({ method: 'GET', path, status: 404 });
const INVOICES = enterprise(/^\/api\/admin\/invoices$/);
const INSTANCE_REFRESH = enterprise(/^\/api\/instance\/refresh$/);

interface SweepPage {
  /** The path to open (a function when it needs a seeded id, then with a `label` for the test's name). */
  path: string | (() => string);
  label?: string;
  /** Text the page shows once it has its data. */
  shows?: string;
  /** Failures 6.10.1 answers the same way to the same page, each with its reason. */
  expected?: ExpectedFailure[];
  /** More to check on this page once it has settled. */
  check?: (session: Session) => Promise<void>;
}

const project = (id: string): SweepPage[] => [
  { path: `/projects/${id}`, shows: id === PROJECT ? FLAG : 'No feature flags available' },
  { path: `/projects/${id}/health` },
  { path: `/projects/${id}/insights` },
  { path: `/projects/${id}/applications`, shows: id === PROJECT ? APP : undefined },
  { path: `/projects/${id}/archive` },
  { path: `/projects/${id}/logs` },
  { path: `/projects/${id}/change-requests` },
  // Settings: each tab of the settings view (actions is an Enterprise placeholder: its flag is off).
  { path: `/projects/${id}/settings` },
  { path: `/projects/${id}/settings/environments` },
  { path: `/projects/${id}/settings/access` },
  { path: `/projects/${id}/settings/segments` },
  { path: `/projects/${id}/settings/api-access` },
  { path: `/projects/${id}/settings/default-strategy` },
  { path: `/projects/${id}/settings/change-requests` },
  { path: `/projects/${id}/settings/actions` },
];

const flag = `/projects/${PROJECT}/features/${FLAG}`;

const PAGES: SweepPage[] = [
  { path: '/projects', shows: PROJECT },
  ...project(PROJECT),
  { path: flag, shows: TAG },
  { path: `${flag}/metrics`, shows: APP },
  { path: `${flag}/variants` },
  { path: `${flag}/settings`, shows: FLAG },
  { path: `${flag}/logs`, shows: FLAG },
  {
    path: () => `${flag}/strategies/edit?environmentId=development&strategyId=${seeded.strategyId}`,
    label: `${flag}/strategies/edit?environmentId=development&strategyId=:id`,
    shows: 'Gradual rollout',
  },
  { path: `${flag}/strategies/create?environmentId=development&strategyName=flexibleRollout`, shows: 'Gradual rollout' },
  { path: `${flag}/copy`, shows: FLAG },
  {
    path: () => `/projects/${PROJECT}/change-requests/${seeded.changeRequestId}`,
    label: `/projects/${PROJECT}/change-requests/:id`,
    shows: 'In review',
  },
  { path: `${flag}/edit`, shows: FLAG },
  ...project(EMPTY).map((page, index) =>
    index === 0
      ? {
          ...page,
          // An empty project's "New feature flag" button leaves its loading state, and opens the form.
          check: async ({ page: tab }: Session) => {
            const button = tab.locator('button', { hasText: 'New feature flag' }).last();
            await expect.poll(() => button.isEnabled(), { timeout: PAGE_LOAD_TIMEOUT }).toBe(true);
            await button.click();
            const dialog = tab.getByRole('dialog').last();
            await expect.poll(() => dialog.getByTestId('FORM_CREATE_BUTTON').isEnabled(), { timeout: 15_000 }).toBe(true);
            await tab.keyboard.press('Escape');
          },
        }
      : page,
  ),
  { path: '/projects-archive' },
  { path: '/search', shows: FLAG },
  { path: '/playground' },
  // The archive page also asks for the overview of project "undefined" (UI_QUIRKS, 404 on 6.10.1 too).
  { path: '/archive' },
  { path: '/applications', shows: APP },
  { path: `/applications/${APP}`, shows: PROJECT },
  { path: `/applications/${APP}/instances`, shows: 'sweep-instance' },
  { path: '/integrations', shows: 'Webhook' },
  { path: '/integrations/create/webhook', shows: 'Webhook' },
  { path: () => `/integrations/edit/${seeded.addonId}`, label: '/integrations/edit/:addonId', shows: 'Webhook' },
  { path: '/integrations/signals' },
  { path: '/strategies', shows: 'Gradual rollout' },
  { path: '/strategies/flexibleRollout', shows: APP },
  { path: '/strategies/create' },
  { path: '/context', shows: CONTEXT },
  { path: '/context/create' },
  { path: `/context/edit/${CONTEXT}` },
  { path: '/segments', shows: SEGMENT },
  { path: '/segments/create' },
  { path: () => `/segments/edit/${seeded.segmentId}`, label: '/segments/edit/:segmentId', shows: CONTEXT },
  { path: '/tag-types', shows: 'simple' },
  { path: '/tag-types/create' },
  { path: '/tag-types/edit/simple' },
  // The table (flag EEA) with its actions; an environment's edit page.
  { path: '/environments', shows: 'Visible in' },
  { path: '/environments/create' },
  { path: '/environments/development', shows: 'Edit environment' },
  { path: '/insights' },
  { path: '/feature-toggle-type', shows: 'Release' },
  { path: '/feature-toggle-type/edit/release', shows: 'Release' },
  { path: '/history', shows: FLAG },
  { path: '/personal' },
  { path: '/release-templates' },
  { path: '/profile', shows: 'admin' },
  { path: '/profile/personal-api-tokens' },
  { path: '/profile/change-password' },
  { path: '/admin' },
  { path: '/admin/users', shows: 'admin' },
  { path: () => `/admin/users/${seeded.adminId}/edit`, label: '/admin/users/:id/edit' },
  { path: () => `/admin/users/${seeded.adminId}/access`, label: '/admin/users/:id/access' },
  { path: '/admin/users/inactive' },
  { path: '/admin/service-accounts' },
  { path: '/admin/groups' },
  { path: '/admin/groups/create-group' },
  { path: '/admin/roles' },
  { path: '/admin/roles/project-roles' },
  { path: '/admin/api', shows: `sweep-client-${run}` },
  { path: '/admin/api/create-token' },
  { path: '/admin/invite-link' },
  { path: '/admin/maintenance' },
  { path: '/admin/cors' },
  { path: '/admin/instance' },
  { path: '/admin/instance-privacy' },
  { path: '/admin/network' },
  { path: '/admin/network/traffic' },
  { path: '/admin/network/connected-edges' },
  { path: '/admin/network/data-usage' },
  // Network pages backed by Enterprise's usage metrics: 6.10.1 OSS has no such routes (404).
  { path: '/admin/network/backend-connections', expected: [enterprise(/^\/api\/admin\/metrics\/connection$/)] },
  { path: '/admin/network/frontend-data-usage', expected: [enterprise(/^\/api\/admin\/metrics\/request$/)] },
  { path: '/admin/auth' },
  { path: '/admin/auth/oidc' },
  { path: '/admin/auth/saml' },
  { path: '/admin/auth/password' },
  { path: '/admin/auth/google' },
  { path: '/admin/auth/scim' },
  // Billing (Unleash's hosted plans): invoices and the instance refresh are not in 6.10.1 OSS (404).
  { path: '/admin/billing', expected: [INVOICES, INSTANCE_REFRESH] },
  { path: '/admin/admin-invoices', expected: [INVOICES] },
  // /admin/license is in no menu (its flag, enableLicense, is off): not visited.
  { path: '/admin/banners' },
  { path: '/admin/logins' },
];

const pathOf = (page: SweepPage) => (typeof page.path === 'string' ? page.path : page.path());

async function seed(base: string): Promise<void> {
  const constraint = { contextName: CONTEXT, operator: 'IN', values: ['a'], inverted: false, caseInsensitive: false };
  await apiJson(base, 'POST', '/api/admin/projects', {
    id: PROJECT,
    name: PROJECT,
    description: 'swept',
    environments: ['development', 'production'],
  });
  await apiJson(base, 'POST', '/api/admin/projects', { id: EMPTY, name: EMPTY, environments: ['development', 'production'] });
  await apiJson(base, 'POST', '/api/admin/context', {
    name: CONTEXT,
    description: 'a context field of the sweep',
    legalValues: [{ value: 'a' }, { value: 'b' }],
    stickiness: false,
  });
  const segment = await apiJson<{ id: number }>(base, 'POST', '/api/admin/segments', {
    name: SEGMENT,
    description: 'a segment of the sweep',
    constraints: [constraint],
  });
  seeded.segmentId = segment.id;
  await apiJson(base, 'POST', `/api/admin/projects/${PROJECT}/features`, { name: FLAG, description: 'the swept flag' });
  const strategy = await apiJson<{ id: string }>(
    base,
    'POST',
    `/api/admin/projects/${PROJECT}/features/${FLAG}/environments/development/strategies`,
    {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: FLAG },
      constraints: [constraint],
      segments: [segment.id],
      variants: [
        { name: 'blue', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'b' } },
        { name: 'red', weight: 500, weightType: 'variable', stickiness: 'default' },
      ],
    },
  );
  seeded.strategyId = strategy.id;
  // Production of the project has change requests on, with one request in review.
  await governEnvironment(base, PROJECT, 'production', 1);
  seeded.changeRequestId = await changeRequestInReview(base, PROJECT, 'production', {
    feature: FLAG,
    action: 'updateEnabled',
    payload: { enabled: true },
  });
  await apiJson(base, 'POST', `/api/admin/projects/${PROJECT}/features/${FLAG}/environments/development/on`);
  await apiJson(base, 'POST', `/api/admin/features/${FLAG}/tags`, { type: 'simple', value: TAG });
  const addon = await apiJson<{ id: number }>(base, 'POST', '/api/admin/addons', {
    provider: 'webhook',
    enabled: false,
    description: 'an integration of the sweep',
    parameters: { url: 'http://127.0.0.1:9/sweep' },
    events: ['feature-created'],
    projects: [],
    environments: [],
  });
  seeded.addonId = addon.id;
  const { users } = await apiJson<{ users: { id: number; username?: string }[] }>(base, 'GET', '/api/admin/user-admin');
  seeded.adminId = users.find((user) => user.username === 'admin')!.id;

  // An SDK registers and reports metrics with a client key, as the SDKs do.
  const { secret } = await apiJson<{ secret: string }>(base, 'POST', '/api/admin/api-tokens', {
    tokenName: `sweep-client-${run}`,
    type: 'client',
    environment: 'development',
    projects: [PROJECT],
  });
  const sdk = (pathname: string, body: unknown) =>
    fetch(`${base}${pathname}`, {
      method: 'POST',
      headers: { authorization: secret, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const now = new Date();
  const registered = await sdk('/api/client/register', {
    appName: APP,
    instanceId: 'sweep-instance',
    sdkVersion: 'unleash-client-node:6.1.0',
    strategies: ['default', 'flexibleRollout'],
    started: now.toISOString(),
    interval: 10_000,
  });
  expect(registered.status).toBe(202);
  const reported = await sdk('/api/client/metrics', {
    appName: APP,
    instanceId: 'sweep-instance',
    bucket: {
      start: new Date(now.getTime() - 60_000).toISOString(),
      stop: now.toISOString(),
      toggles: { [FLAG]: { yes: 3, no: 1, variants: { blue: 2, red: 1 } } },
    },
  });
  expect(reported.status).toBe(202);
  // Reports reach the tables off the request path: wait until the pages can read them.
  await eventually(
    async () => {
      const overview = await apiJson(base, 'GET', `/api/admin/metrics/applications/${APP}/overview`);
      expect(overview.environments.map((environment: { name: string }) => environment.name)).toEqual(['development']);
      const metrics = await apiJson(base, 'GET', `/api/admin/client-metrics/features/${FLAG}/raw`);
      expect(metrics.data.length).toBeGreaterThan(0);
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
}

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await seed(server.base);
  session = await Session.open(browser, server.base);
  session.page.setDefaultTimeout(30_000);
  // The bootstrap admin, with Unleash's default password (as `npm start` sets it).
  await signIn(session, 'admin', 'unleash4all');
  expect((await api(server.base, 'GET', '/api/admin/user')).status).toBe(200);
}, 600_000);

afterAll(async () => {
  writeCallSummary();
  await session?.close();
  await browser?.close();
  await server?.stop();
});

describe('every page of the open-source UI, signed in as the admin', () => {
  for (const entry of PAGES) {
    const label = entry.label ?? (typeof entry.path === 'string' ? entry.path : 'a seeded page');
    it(label.replaceAll(run, '<run>'), async () => {
      const { page } = session;
      const before = session.problems.length;
      const path = pathOf(entry);
      try {
        await session.expectDuring(entry.expected ?? [], async () => {
          // Under load "networkidle" can come while the browser still parses the bundle, before the
          // page's first call: wait for the expected calls themselves, so that none lands after this step.
          const landed = Promise.all(
            (entry.expected ?? []).map((failure) =>
              page.waitForResponse((r) => r.request().method() === failure.method && failure.path.test(new URL(r.url()).pathname), {
                timeout: PAGE_LOAD_TIMEOUT,
              }),
            ),
          );
          landed.catch(() => undefined);
          await page.goto(path);
          await page.waitForLoadState('networkidle');
          if (entry.shows) await expect.poll(() => page.locator('body').innerText(), { timeout: PAGE_LOAD_TIMEOUT }).toContain(entry.shows);
          await entry.check?.(session);
          await landed;
          // Calls a check caused, and late refreshes, land before the page is judged.
          await page.waitForLoadState('networkidle');
        });
        const text = await page.locator('body').innerText();
        const screens: string[] = [];
        if (text.includes('Something went wrong')) screens.push("the UI's error screen");
        if (text.includes("Ooops. That's a page we haven't toggled on yet.")) screens.push("the UI's 404 page");
        const toasts = await page.locator('.dropdown-outline h3').allInnerTexts();
        if (toasts.length > 0) screens.push(`toasts: ${JSON.stringify(toasts)}`);
        expect([...session.problems.slice(before), ...screens]).toEqual([]);
      } catch (error) {
        const shot = await session.screenshot(`sweep-${path}`);
        if (error instanceof Error) error.message += `\n(page ${path}; screenshot: ${shot})`;
        throw error;
      }
    });
  }
});
