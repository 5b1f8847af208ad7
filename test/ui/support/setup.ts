/**
 * What the browser flows set up before (and check while) they drive the UI: people with a root
 * role and a password, an environment of a project under change requests, the answer to one of
 * the page's calls, and a change request approved and applied through its page.
 */
import type { Page, Response } from 'playwright-core';
import { expect } from 'vitest';
import { api, apiJson } from './harness';

/** Unleash's predefined root roles, by id. */
export const ROOT_ROLE = { admin: 1, editor: 2, viewer: 3 } as const;

interface NewPerson {
  username: string;
  password: string;
  rootRole: number;
  /** Default `<username>@example.com`. */
  email?: string;
  name?: string;
}

/** A person made through the admin API (as an admin would), with a password to sign in with; their id. */
export async function createPerson(
  base: string,
  { username, password, rootRole, email = `${username}@example.com`, name }: NewPerson,
): Promise<number> {
  const created = await apiJson<{ id: number }>(base, 'POST', '/api/admin/user-admin', {
    username,
    email,
    ...(name === undefined ? {} : { name }),
    rootRole,
    sendEmail: false,
  });
  const changed = await api(base, 'POST', `/api/admin/user-admin/${created.id}/change-password`, { password });
  expect(changed.status, `setting ${username}'s password`).toBe(200);
  return created.id;
}

/** Turns change requests on for `environment` of `project`, with `requiredApprovals` from people other than the author. */
export async function governEnvironment(base: string, project: string, environment: string, requiredApprovals = 1): Promise<void> {
  const config = await api(base, 'PUT', `/api/admin/projects/${project}/environments/${environment}/change-requests/config`, {
    changeRequestsEnabled: true,
    requiredApprovals,
  });
  expect(config.status, `governing ${project}/${environment}`).toBeLessThan(300);
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
