/**
 * A project's segment under change requests, through the served UI: an Editor (without the
 * skip permission) edits the segment in its form, which drafts `updateSegment` instead of
 * saving; the segment changes only once an admin approved and applied the request on its page.
 * Every flow fails on any unexpected 4xx/5xx of the page's own calls, console and page errors.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiJson, launchBrowser, runFlow, signIn, startServer, writeCallSummary, type Server } from './support/harness';
import {
  applyChangeRequest,
  approveChangeRequest,
  createPerson,
  governEnvironment,
  PAGE_LOAD_TIMEOUT,
  responseTo,
  ROOT_ROLE,
} from './support/setup';

let server: Server;
let browser: Browser;

const run = Date.now().toString(36);
const PASSWORD = 'Segments-Passw0rd!';
const DRAFTER = `crseg-drafter-${run}`;
const SEGMENT = `crseg-segment-${run}`;
const PROJECT = 'default';
const ENV = 'production';
let segmentId: number;

interface Segment {
  name: string;
  description: string | null;
}

const segment = () => apiJson<Segment>(server.base, 'GET', `/api/admin/segments/${segmentId}`);

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await createPerson(server.base, { username: DRAFTER, password: PASSWORD, name: DRAFTER, rootRole: ROOT_ROLE.editor });
  const created = await apiJson<{ id: number }>(server.base, 'POST', '/api/admin/segments', {
    name: SEGMENT,
    description: 'before',
    project: PROJECT,
    constraints: [{ contextName: 'userId', operator: 'IN', values: ['a'], caseInsensitive: false, inverted: false }],
  });
  segmentId = created.id;
  await governEnvironment(server.base, PROJECT, ENV, 1);
}, 600_000);

afterAll(async () => {
  writeCallSummary();
  await browser?.close();
  await server?.stop();
});

describe('a project segment edited in the UI goes through a change request', () => {
  it('the form drafts the edit; the segment changes only once approved and applied', async () => {
    let requestId = 0;
    await runFlow(browser, server.base, 'crseg-draft', async (session) => {
      const { page } = session;
      await signIn(session, DRAFTER, PASSWORD);
      await page.goto(`/segments/edit/${segmentId}`);
      const description = page.getByLabel('Description (optional)');
      await expect.poll(() => description.inputValue(), { timeout: PAGE_LOAD_TIMEOUT }).toBe('before');
      await description.fill('after review');
      // The form's second step (constraints) holds the save button.
      await page.getByRole('button', { name: 'Next' }).click();
      const save = page.getByTestId('SEGMENT_SAVE_BTN_ID');
      await expect.poll(() => save.innerText()).toBe('Add to draft');
      const drafted = responseTo(page, 'POST', new RegExp(`/projects/${PROJECT}/environments/${ENV}/change-requests$`));
      await save.click();
      const response = await drafted;
      expect(response.status()).toBe(200);
      requestId = ((await response.json()) as { id: number }).id;
      await page.waitForURL(/\/segments\/?$/);
      // The drafter sends it to review: their own page's call (same origin, as the draft sidebar makes it).
      const sent = await page.evaluate(async (path) => {
        const response = await fetch(path, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: '{"state":"In review"}',
        });
        return response.status;
      }, `/api/admin/projects/${PROJECT}/change-requests/${requestId}/state`);
      expect(sent).toBe(200);
    });
    expect(await segment()).toMatchObject({ name: SEGMENT, description: 'before' });

    await runFlow(browser, server.base, 'crseg-approve-apply', async (session) => {
      const { page } = session;
      await signIn(session, 'admin', 'unleash4all');
      await approveChangeRequest(page, PROJECT, requestId);
      // The request's page shows the segment's change.
      await expect.poll(() => page.locator('main').innerText(), { timeout: 15_000 }).toContain(SEGMENT);
      expect((await segment()).description).toBe('before');
      await applyChangeRequest(page, requestId);
    });
    expect(await segment()).toMatchObject({ name: SEGMENT, description: 'after review' });
  });
});
