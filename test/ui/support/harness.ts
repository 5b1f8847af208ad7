/**
 * Drives Unleash's own admin UI in a real browser (Debian's chromium through playwright-core)
 * against the real Worker under `wrangler dev` with fresh local state. A flow fails on any
 * 4xx/5xx the UI's own calls receive that it did not cause on purpose, on console errors and
 * on uncaught page errors; a failing flow leaves a screenshot in test/ui/artifacts/.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startWorker } from '../../../bench/sdk/worker.mjs';

export const ARTIFACTS = path.resolve(import.meta.dirname, '..', 'artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ADMIN_KEY = '*:*.ui-test-admin-token';

export interface Server {
  base: string;
  stop(): Promise<void>;
}

/** `vars`: more variables (and secrets) for the Worker; `testScheduled`: `GET /__scheduled` runs the cron trigger. */
export async function startServer(vars: Record<string, string> = {}, { testScheduled = false } = {}): Promise<Server> {
  const port = Number(process.env.TEST_UI_PORT ?? 8810);
  // Integrations deliver to a receiver the flow runs on loopback, as in local development.
  const worker = await startWorker({
    port,
    token: ADMIN_KEY,
    vars: { INTEGRATIONS_ALLOW_PRIVATE_TARGETS: 'true', ...vars },
    testScheduled,
  });
  return { base: worker.base, stop: () => worker.stop() };
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    // `npm test` runs scripts/ensure-chromium.mjs first; a direct `vitest --project ui` gets the same advice.
    throw new Error(
      `Browser tests need ${CHROMIUM}, which is missing: install Chromium (Debian/Ubuntu: apt-get install chromium) or set CHROMIUM_PATH to a Chromium or Chrome binary.`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** An admin-API call with the test's admin key (to set up what a flow starts from). */
export async function api(base: string, method: string, pathname: string, body?: unknown): Promise<Response> {
  return fetch(`${base}${pathname}`, {
    method,
    headers: { authorization: ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

export async function apiJson<T = any>(base: string, method: string, pathname: string, body?: unknown): Promise<T> {
  const response = await api(base, method, pathname, body);
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${pathname}: ${response.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A call the flow expects to fail (e.g. the login page's first "who am I?" is a 401). */
export interface ExpectedFailure {
  method: string;
  path: RegExp;
  status: number;
}

/** Failures every signed-out page load makes on purpose: the UI asks who is signed in. */
export const SIGNED_OUT: ExpectedFailure[] = [{ method: 'GET', path: /^\/api\/admin\/(user|ui-config)$/, status: 401 }];

/**
 * Failures caused by the UI's own code: the archive page asks for the overview of project
 * "undefined" (404 on the real server too), and the flag page for change requests of no project.
 */
export const UI_QUIRKS: ExpectedFailure[] = [
  { method: 'GET', path: /^\/api\/admin\/projects\/undefined\/overview$/, status: 404 },
  // With the governance panels on, the flag page's dependency row and archive dialog ask for the
  // change requests of project '' before the flag (and so its project) has loaded: a path with
  // no project, which no route answers.
  { method: 'GET', path: /^\/api\/admin\/projects\/change-requests\/(pending|scheduled)$/, status: 404 },
];

export interface CallRecord {
  method: string;
  path: string;
  status: number;
}

/** Every call the UI made in this run, across sessions (written to artifacts/calls.json). */
export const ALL_CALLS: CallRecord[] = [];

/** The distinct calls (method, path without ids of our making, status) seen in this run. */
export function writeCallSummary(): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  const distinct = new Map<string, CallRecord>();
  for (const call of ALL_CALLS) {
    const key = `${call.method} ${call.path.split('?')[0]} ${call.status}`;
    if (!distinct.has(key)) distinct.set(key, call);
  }
  const file = path.join(ARTIFACTS, 'calls.json');
  writeFileSync(file, JSON.stringify([...distinct.keys()].sort(), null, 1));
  return file;
}

export class Session {
  readonly problems: string[] = [];
  readonly calls: CallRecord[] = [];
  private readonly expected: ExpectedFailure[] = [...UI_QUIRKS];

  private constructor(
    readonly base: string,
    readonly context: BrowserContext,
    readonly page: Page,
  ) {}

  /** `reachable`: other origins the flow really visits (a local identity provider). */
  static async open(browser: Browser, base: string, reachable: readonly string[] = []): Promise<Session> {
    const context = await browser.newContext({ baseURL: base, viewport: { width: 1400, height: 1000 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    // No internet here: answer the UI's web fonts and avatar images with empty bodies rather
    // than letting them fail (which would log console errors that are not the UI's fault).
    await context.route(
      (url) => url.origin !== base && !reachable.includes(url.origin),
      (route) => {
        const type = route.request().resourceType();
        if (type === 'image')
          return route.fulfill({ status: 200, contentType: 'image/svg+xml', body: '<svg xmlns="http://www.w3.org/2000/svg"/>' });
        return route.fulfill({ status: 200, contentType: type === 'stylesheet' ? 'text/css' : 'text/plain', body: '' });
      },
    );
    const page = await context.newPage();
    const session = new Session(base, context, page);
    session.watch(page);
    return session;
  }

  /** Also watch a page opened in another way (a second tab, say). */
  watch(page: Page): void {
    page.on('response', (response) => {
      const url = new URL(response.url());
      if (url.origin !== this.base) return;
      const method = response.request().method();
      const status = response.status();
      this.calls.push({ method, path: url.pathname + url.search, status });
      ALL_CALLS.push({ method, path: url.pathname + url.search, status });
      if (status < 400) return;
      const index = this.expected.findIndex((e) => e.method === method && e.status === status && e.path.test(url.pathname));
      if (index >= 0) return;
      this.problems.push(`${status} ${method} ${url.pathname}${url.search}`);
    });
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      // The browser logs every 4xx/5xx as "Failed to load resource"; those are judged above.
      if (message.text().startsWith('Failed to load resource: the server responded with a status of')) return;
      this.problems.push(`console error: ${message.text().slice(0, 500)}`);
    });
    page.on('pageerror', (error) => this.problems.push(`page error: ${error.message.slice(0, 500)}`));
  }

  /** Allow failures the flow causes on purpose (or the UI's unauthenticated probes). */
  expect(...failures: ExpectedFailure[]): void {
    this.expected.push(...failures);
  }

  /** Allow `failures` only while `step` runs (calls one page makes, say). */
  async expectDuring<T>(failures: readonly ExpectedFailure[], step: () => Promise<T>): Promise<T> {
    this.expected.push(...failures);
    try {
      return await step();
    } finally {
      for (const failure of failures) this.expected.splice(this.expected.indexOf(failure), 1);
    }
  }

  async screenshot(name: string): Promise<string> {
    mkdirSync(ARTIFACTS, { recursive: true });
    const file = path.join(ARTIFACTS, `${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.png`);
    await this.page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    return file;
  }

  async close(): Promise<void> {
    await this.context.close();
  }
}

/** Signs in through the UI's login page with a username and password. */
export async function signIn(session: Session, username: string, password: string): Promise<void> {
  const { page } = session;
  session.expect(...SIGNED_OUT);
  await page.goto('/login');
  await page.locator('input[name="username"]').fill(username);
  await page.locator('input[name="password"]').fill(password);
  await page.locator('button[type="submit"]').click();
  await page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 30_000 });
}

/**
 * Runs one flow in a fresh browser context: the flow's own assertions, then "nothing went
 * wrong on the way" (unexpected failed calls, console and page errors). A screenshot is kept
 * when anything fails.
 */
export async function runFlow(
  browser: Browser,
  base: string,
  name: string,
  flow: (session: Session) => Promise<void>,
  reachable: readonly string[] = [],
): Promise<Session> {
  const session = await Session.open(browser, base, reachable);
  try {
    await flow(session);
    // Let calls still in flight land before judging them.
    await session.page.waitForLoadState('networkidle').catch(() => undefined);
    if (session.problems.length > 0) throw new Error(`the UI met problems:\n${session.problems.join('\n')}`);
    return session;
  } catch (error) {
    const shot = await session.screenshot(name);
    if (error instanceof Error) error.message += `\n(screenshot: ${shot}; problems so far: ${JSON.stringify(session.problems)})`;
    throw error;
  } finally {
    await session.close();
  }
}
