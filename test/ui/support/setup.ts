/**
 * What the browser flows set up before (and check while) they drive the UI: people with a root
 * role and a password, an environment of a project under change requests and a request in review,
 * the answer to one of the page's calls, a change request approved and applied through its page,
 * and how long to wait for a page that loads the UI bundle.
 */
import type { Page, Response } from 'playwright-core';
import { expect } from 'vitest';
import { api, apiJson } from './harness';

/** Unleash's predefined root roles, by id. */
export const ROOT_ROLE = { admin: 1, editor: 2, viewer: 3 } as const;

/** For waits on a page that parses the UI bundle (sign-in, goto, reload): at load ~10 that alone takes ~7 s; data showed at 35 s. */
export const PAGE_LOAD_TIMEOUT = 45_000;

type NewPerson = {
  rootRole: number;
  /** To sign in with; without one the person exists but cannot sign in with a password. */
  password?: string;
  name?: string;
} & (
  | {
      username: string;
      /** Default `<username>@example.com`. */
      email?: string;
    }
  | { username?: undefined; email: string }
);

/** A person made through the admin API (as an admin would), with a password to sign in with if given; their id. */
export async function createPerson(
  base: string,
  { username, password, rootRole, email = `${username}@example.com`, name }: NewPerson,
): Promise<number> {
  const created = await apiJson<{ id: number }>(base, 'POST', '/api/admin/user-admin', {
    ...(username === undefined ? {} : { username }),
    email,
    ...(name === undefined ? {} : { name }),
    rootRole,
    sendEmail: false,
  });
  if (password !== undefined) await setPassword(base, created.id, password);
  return created.id;
}

/** Sets the password of user `id` through the admin API (as an admin would). */
export async function setPassword(base: string, id: number, password: string): Promise<void> {
  const changed = await api(base, 'POST', `/api/admin/user-admin/${id}/change-password`, { password });
  expect(changed.status, `setting user ${id}'s password`).toBe(200);
}

/** Turns change requests on for `environment` of `project`, with `requiredApprovals` from people other than the author. */
export async function governEnvironment(base: string, project: string, environment: string, requiredApprovals = 1): Promise<void> {
  const config = await api(base, 'PUT', `/api/admin/projects/${project}/environments/${environment}/change-requests/config`, {
    changeRequestsEnabled: true,
    requiredApprovals,
  });
  expect(config.status, `governing ${project}/${environment}`).toBeLessThan(300);
}

/** A change to `environment` of `project`, drafted through the admin API and sent to review; its id. */
export async function changeRequestInReview(base: string, project: string, environment: string, change: unknown): Promise<number> {
  const draft = await apiJson<{ id: number }>(
    base,
    'POST',
    `/api/admin/projects/${project}/environments/${environment}/change-requests`,
    change,
  );
  await apiJson(base, 'PUT', `/api/admin/projects/${project}/change-requests/${draft.id}/state`, { state: 'In review' });
  return draft.id;
}

/** The answer to the page's next call of `method` whose path matches `path` (start waiting before the action that makes it). */
export function responseTo(page: Page, method: string, path: RegExp): Promise<Response> {
  return page.waitForResponse((r) => r.request().method() === method && path.test(new URL(r.url()).pathname));
}

/** The reviewer's request page: approve through the review menu. */
export async function approveChangeRequest(page: Page, project: string, id: number): Promise<void> {
  await page.goto(`/projects/${project}/change-requests/${id}`);
  await page.getByRole('button', { name: 'review or reject changes' }).click();
  const approved = responseTo(page, 'PUT', new RegExp(`/change-requests/${id}/state$`));
  await page.getByRole('menuitem', { name: 'Approve' }).click();
  expect((await approved).status()).toBe(200);
}

/** On an approved request's page: "Apply changes", then the page shows it applied. */
export async function applyChangeRequest(page: Page, id: number): Promise<void> {
  await page.getByRole('button', { name: 'apply or schedule changes' }).click();
  const applied = responseTo(page, 'PUT', new RegExp(`/change-requests/${id}/state$`));
  await page.getByRole('menuitem', { name: 'Apply changes' }).click();
  expect((await applied).status()).toBe(200);
  await expect.poll(() => page.locator('main').innerText(), { timeout: 15_000 }).toContain('Applied');
}
