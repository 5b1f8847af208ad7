/**
 * Admin → Network → Data usage reads the requests the service answered. The official Node SDK
 * (unleash-client) polls the client API with a client key and a browser SDK's calls reach the
 * frontend API; once the Worker's isolate has written its counts (every second here,
 * TRAFFIC_FLUSH_INTERVAL_MS), the page shows them, and its own calls all succeed.
 */
import type { Browser } from 'playwright-core';
import { Unleash } from 'unleash-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually';
import { apiJson, launchBrowser, runFlow, signIn, startServer, writeCallSummary, type Server } from './support/harness';
import { createPerson, ROOT_ROLE } from './support/setup';

let server: Server;
let browser: Browser;
const PASSWORD = 'Ui-Test-Passw0rd!';
const ADMIN_USER = 'ui-traffic-admin';
const run = Date.now().toString(36);
const POLLS = 4;
const FRONTEND_CALLS = 3;

interface TrafficUsage {
  apiData: { apiPath: string; dataPoints: { period: string; trafficTypes: { group: string; count: number }[] }[] }[];
}

const month = () => new Date().toISOString().slice(0, 7);
const lastDayOfMonth = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).toISOString().slice(0, 10);
};

/** This month's successful requests per path group, as the API answers them now. */
async function thisMonth(): Promise<Record<string, number>> {
  const usage = await apiJson<TrafficUsage>(
    server.base,
    'GET',
    `/api/admin/metrics/traffic-search?grouping=daily&from=${month()}-01&to=${lastDayOfMonth()}`,
  );
  return Object.fromEntries(
    usage.apiData.map(({ apiPath, dataPoints }) => [apiPath, dataPoints.reduce((sum, point) => sum + point.trafficTypes[0]!.count, 0)]),
  );
}

interface Emitter {
  once(event: string, listener: (value: never) => void): unknown;
  on(event: string, listener: (value: never) => void): unknown;
}

async function sdkPolls(secret: string): Promise<void> {
  const unleash = new Unleash({
    url: `${server.base}/api/`,
    appName: `ui-traffic-${run}`,
    customHeaders: { Authorization: secret },
    refreshInterval: 500,
    disableMetrics: true,
    skipInstanceCountWarning: true,
  });
  const errors: unknown[] = [];
  (unleash as unknown as Emitter).on('error', (error: never) => errors.push(error));
  let fetched = 0;
  try {
    // `changed` on the first answer, `unchanged` on the 304s after it: one per poll.
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${fetched} polls in 30 s`)), 30_000);
      const polled = () => {
        if (++fetched < POLLS) return;
        clearTimeout(timer);
        resolve();
      };
      (unleash as unknown as Emitter).on('changed', polled);
      (unleash as unknown as Emitter).on('unchanged', polled);
    });
  } finally {
    unleash.destroy();
  }
  expect(errors).toEqual([]);
}

beforeAll(async () => {
  server = await startServer({ TRAFFIC_FLUSH_INTERVAL_MS: '1000' });
  browser = await launchBrowser();
  await createPerson(server.base, { username: ADMIN_USER, password: PASSWORD, name: 'UI Traffic Admin', rootRole: ROOT_ROLE.admin });
}, 480_000);

afterAll(async () => {
  writeCallSummary();
  await browser?.close();
  await server?.stop();
});

describe('Admin → Network → Data usage', () => {
  it('shows the requests SDKs made this month, and every call of the page succeeds', async () => {
    const client = await apiJson<{ secret: string }>(server.base, 'POST', '/api/admin/api-tokens', {
      tokenName: `ui-traffic-client-${run}`,
      type: 'client',
      environment: 'development',
    });
    const frontend = await apiJson<{ secret: string }>(server.base, 'POST', '/api/admin/api-tokens', {
      tokenName: `ui-traffic-frontend-${run}`,
      type: 'frontend',
      environment: 'development',
    });
    await sdkPolls(client.secret);
    for (let call = 0; call < FRONTEND_CALLS; call++) {
      const response = await fetch(`${server.base}/api/frontend?appName=ui-traffic&userId=${call}`, {
        headers: { authorization: frontend.secret },
      });
      expect(response.status).toBe(200);
    }
    // Each read is a request too: it finds the window due and writes what the isolate counted.
    const counted = await eventually(
      async () => {
        const counts = await thisMonth();
        expect(counts['/api/client']).toBeGreaterThanOrEqual(POLLS);
        expect(counts['/api/frontend']).toBeGreaterThanOrEqual(FRONTEND_CALLS);
        return counts;
      },
      { timeoutMs: 20_000, intervalMs: 500 },
    );
    const total = Object.values(counted).reduce((sum, count) => sum + count, 0);

    await runFlow(browser, server.base, 'data-usage', async (session) => {
      const { page } = session;
      await signIn(session, ADMIN_USER, PASSWORD);
      const search = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/metrics/traffic-search');
      const bundles = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/instance/trafficBundles');
      await page.goto('/admin/network/data-usage');
      const searched = await search;
      expect(searched.status()).toBe(200);
      expect(new URL(searched.url()).searchParams.get('grouping')).toBe('daily');
      expect((await bundles).status()).toBe(200);
      // The summary: this month's requests, at least those counted before the page opened; no plan line.
      await expect.poll(() => page.locator('main').innerText()).toContain('Number of requests to Unleash');
      const text = await page.locator('main').innerText();
      const shown = Number(/([\d,]+)\s+requests/.exec(text)![1]!.replaceAll(',', ''));
      expect(shown).toBeGreaterThanOrEqual(total);
      expect(text).not.toContain('Included in your plan');
      expect(text).not.toContain('Heads up!');
      // The chart of the month, with the three groups the page draws.
      await expect.poll(() => page.locator('canvas[aria-label^="A bar chart showing daily traffic usage"]').count()).toBe(1);
    });
  });
});
