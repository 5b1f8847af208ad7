/**
 * A segment in use, through the served UI: the Segments page's delete asks who uses it and,
 * as it is used, shows "You can't delete a segment that's currently in use" with the flag; the
 * segment form refuses, with Unleash's message, a project that strategies of another project
 * took the segment up in while the form was open. Each flow fails on any unexpected 4xx/5xx of
 * the page's own calls, console and page errors.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiJson, launchBrowser, runFlow, signIn, startServer, writeCallSummary, type Server } from './support/harness';
import { responseTo } from './support/setup';

let server: Server;
let browser: Browser;

const run = Date.now().toString(36);
const FIRST = `segmove-a-${run}`;
const SECOND = `segmove-b-${run}`;

interface Segment {
  id: number;
  name: string;
  project?: string;
}

const segment = (id: number) => apiJson<Segment>(server.base, 'GET', `/api/admin/segments/${id}`);

async function newSegment(name: string): Promise<Segment> {
  return apiJson<Segment>(server.base, 'POST', '/api/admin/segments', { name, description: 'in use', constraints: [] });
}

/** A flag of `project` whose development strategy uses the segment. */
async function flagUsing(project: string, flag: string, used: Segment): Promise<void> {
  await apiJson(server.base, 'POST', `/api/admin/projects/${project}/features`, { name: flag });
  await apiJson(server.base, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/development/strategies`, {
    name: 'default',
    constraints: [],
    parameters: {},
    segments: [used.id],
  });
}

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  for (const id of [FIRST, SECOND])
    await apiJson(server.base, 'POST', '/api/admin/projects', { id, name: id, environments: ['development', 'production'] });
}, 600_000);

afterAll(async () => {
  writeCallSummary();
  await browser?.close();
  await server?.stop();
});

describe('a segment in use, in the UI', () => {
  it('the Segments page will not delete it, and names the flag using it', async () => {
    const used = await newSegment(`segmove-used-${run}`);
    const flag = `segmove-flag-${run}`;
    await flagUsing('default', flag, used);

    await runFlow(browser, server.base, 'segmove-delete', async (session) => {
      const { page } = session;
      await signIn(session, 'admin', 'unleash4all');
      await page.goto('/segments');
      const remove = page.getByTestId(`SEGMENT_DELETE_BTN_ID_${used.name}`);
      const users = responseTo(page, 'GET', new RegExp(`^/api/admin/segments/${used.id}/strategies$`));
      await remove.click();
      expect((await users).status()).toBe(200);
      const dialog = page.getByRole('dialog', { name: "You can't delete a segment that's currently in use" });
      await expect.poll(() => dialog.count(), { timeout: 15_000 }).toBe(1);
      const text = await dialog.innerText();
      expect(text).toContain(used.name);
      expect(text).toContain(flag);
      // The flag is a link to its strategy's page.
      expect(await dialog.getByRole('link', { name: new RegExp(flag) }).getAttribute('href')).toContain(`/features/${flag}`);
      await dialog.getByRole('button', { name: 'OK' }).click();
      await expect.poll(() => dialog.count()).toBe(0);
    });
    expect(await segment(used.id)).toMatchObject({ id: used.id, name: used.name });
  });

  it('the segment form shows Unleash’s refusal of a project another project’s strategy took it up in meanwhile', async () => {
    const used = await newSegment(`segmove-moved-${run}`);
    // The projects are named in the order of the flags using them.
    await flagUsing(FIRST, `segmove-1-${run}`, used);

    await runFlow(browser, server.base, 'segmove-move', async (session) => {
      const { page } = session;
      await signIn(session, 'admin', 'unleash4all');
      await page.goto(`/segments/edit/${used.id}`);
      const project = page.getByLabel('Project', { exact: true });
      await expect.poll(() => project.isVisible(), { timeout: 15_000 }).toBe(true);
      // The form offers only the project already using the segment.
      await project.click();
      await expect.poll(() => page.getByRole('option').allInnerTexts()).toEqual([FIRST]);
      // Someone else gives the segment to a strategy of another project while the form is open.
      await flagUsing(SECOND, `segmove-2-${run}`, used);
      await page.getByRole('option', { name: FIRST }).click();
      await page.getByRole('button', { name: 'Next' }).click();
      const message = `Invalid project. Segment is being used by strategies in other projects: ${FIRST}, ${SECOND}`;
      await session.expectDuring([{ method: 'PUT', path: new RegExp(`^/api/admin/segments/${used.id}$`), status: 400 }], async () => {
        const saved = responseTo(page, 'PUT', new RegExp(`^/api/admin/segments/${used.id}$`));
        await page.getByTestId('SEGMENT_SAVE_BTN_ID').click();
        const response = await saved;
        expect(response.status()).toBe(400);
        expect(await response.json()).toMatchObject({ name: 'BadDataError', details: [{ message }] });
        await expect.poll(() => page.getByText(message).count(), { timeout: 15_000 }).toBeGreaterThan(0);
      });
    });
    expect((await segment(used.id)).project).toBeUndefined();
  });
});
