/**
 * A scheduled change request applies in the name of whoever scheduled it, with their rights at
 * its time (not full rights), as Unleash does: if they are gone or may no longer apply change
 * requests there, or a change needs a right they lack (a segment moved into a project they
 * cannot edit), the schedule fails with the reason shown and its failure event, and nothing is
 * written.
 */
import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { schedulerOf } from '../src/admin/change-requests/alarm';
import { adminOk, createProject } from './support/admin';
import { count, lastEvent, parsedEvent, rows } from './support/db';
import { bodyOf, call } from './support/http';
import { moveRequestOk } from './support/change-requests';
import { unique } from './support/names';
import { signInAs } from './support/users';

const PROD = 'production';
let project: string;
let elsewhere: string;

interface Person {
  token: string;
  userId: number;
}

const base = () => `/api/admin/projects/${project}/change-requests`;
const at = () => new Date(Date.now() + 60_000).toISOString();

async function role(permissions: { name: string; environment?: string }[]): Promise<number> {
  return (
    await bodyOf(await adminOk('POST', '/api/admin/roles', { name: unique('crgaps-role'), description: 'x', type: 'custom', permissions }))
  ).id;
}

/** A Viewer holding `roleId` in each of `projects`. */
async function person(roleId: number, projects: string[]): Promise<Person> {
  let userId = 0;
  const token = await signInAs('Viewer', async (id) => {
    userId = id;
    for (const where of projects) await adminOk('POST', `/api/admin/projects/${where}/access`, { roles: [roleId], users: [id] });
  });
  return { token, userId };
}

/** A Viewer who may approve and apply change requests in production of the project, and nothing else. */
async function scheduler(): Promise<Person> {
  const approveAndApply = await role([
    { name: 'APPROVE_CHANGE_REQUEST', environment: PROD },
    { name: 'APPLY_CHANGE_REQUEST', environment: PROD },
  ]);
  return person(approveAndApply, [project]);
}

const who = {} as Record<'author' | 'scheduler' | 'mover', Person>;

async function segmentRow(id: number) {
  const [row] = await rows<{ name: string; segment_project_id: string | null }>(
    'SELECT name, segment_project_id FROM segments WHERE id = ?',
    id,
  );
  return row;
}

/** Drafts `body` as the author, has `approver` approve it and schedule it; answers its id. */
async function scheduled(body: unknown, approver: Person): Promise<number> {
  const path = `/api/admin/projects/${project}/environments/${PROD}/change-requests`;
  const response = await call('POST', path, { token: who.author.token, body });
  if (response.status !== 200) throw new Error(`draft: ${response.status} ${await response.text()}`);
  const { id } = await bodyOf(response);
  await moveRequestOk(project, who.author.token, id, { state: 'In review' });
  await moveRequestOk(project, approver.token, id, { state: 'Approved' });
  await moveRequestOk(project, approver.token, id, { state: 'Scheduled', scheduledAt: at() });
  return id;
}

async function toggle(): Promise<{ feature: string; body: unknown }> {
  const feature = unique('crgaps-sf');
  await adminOk('POST', `/api/admin/projects/${project}/features`, { name: feature });
  return { feature, body: { feature, action: 'updateEnabled', payload: { enabled: true } } };
}

const enabled = (feature: string) =>
  count('SELECT count(*) AS n FROM feature_environments WHERE feature_name = ? AND environment = ? AND enabled = 1', feature, PROD);

async function expectFailed(id: number, reason: RegExp) {
  expect(await runDurableObjectAlarm(schedulerOf(env, id))).toBe(true);
  const read = await bodyOf(await call('GET', `${base()}/${id}`));
  expect(read.state).toBe('Scheduled');
  expect(read.schedule).toMatchObject({ status: 'failed', reason: expect.stringMatching(reason) });
  const event = parsedEvent(await lastEvent('change-request-scheduled-application-failure'));
  expect(event?.data).toMatchObject({ changeRequestId: id, failureReason: expect.stringMatching(reason) });
  expect(
    await count(
      "SELECT count(*) AS n FROM events WHERE type = 'change-request-scheduled-application-success' AND data LIKE ?",
      `%"changeRequestId":${id},%`,
    ),
  ).toBe(0);
}

beforeAll(async () => {
  project = await createProject(unique('crgaps-sr'), ['development', PROD]);
  elsewhere = await createProject(unique('crgaps-se'), ['development', PROD]);
  const drafting = await role([{ name: 'UPDATE_PROJECT_SEGMENT' }, { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: PROD }]);
  const reviewing = await role([
    { name: 'UPDATE_PROJECT_SEGMENT' },
    { name: 'APPROVE_CHANGE_REQUEST', environment: PROD },
    { name: 'APPLY_CHANGE_REQUEST', environment: PROD },
  ]);
  who.author = await person(drafting, [project, elsewhere]);
  who.scheduler = await person(reviewing, [project]);
  who.mover = await person(reviewing, [project, elsewhere]);
  await adminOk('PUT', `/api/admin/projects/${project}/environments/${PROD}/change-requests/config`, {
    changeRequestsEnabled: true,
    requiredApprovals: 1,
  });
});

describe('a scheduled request runs with the rights of whoever scheduled it', () => {
  it('fails a segment move into a project the scheduler may not edit, and applies it for one who may', async () => {
    const make = async () =>
      bodyOf(await adminOk('POST', '/api/admin/segments', { name: unique('crgaps-seg'), project, constraints: [] })) as Promise<{
        id: number;
        name: string;
      }>;
    const move = (segment: { id: number; name: string }) => ({
      feature: null,
      action: 'updateSegment',
      payload: { id: segment.id, name: segment.name, project: elsewhere, constraints: [] },
    });

    const refused = await make();
    const id = await scheduled(move(refused), who.scheduler);
    await expectFailed(id, /UPDATE_PROJECT_SEGMENT/);
    expect(await segmentRow(refused.id)).toMatchObject({ segment_project_id: project });
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'segment-updated' AND data LIKE ?", `%${refused.name}%`)).toBe(0);

    const allowed = await make();
    const applied = await scheduled(move(allowed), who.mover);
    expect(await runDurableObjectAlarm(schedulerOf(env, applied))).toBe(true);
    expect((await bodyOf(await call('GET', `${base()}/${applied}`))).state).toBe('Applied');
    expect(await segmentRow(allowed.id)).toMatchObject({ segment_project_id: elsewhere });
    expect(parsedEvent(await lastEvent('segment-updated'))).toMatchObject({ createdBy: expect.any(String), data: { id: allowed.id } });
  });

  it('fails when the scheduler lost APPLY_CHANGE_REQUEST meanwhile, writing nothing', async () => {
    const lost = await scheduler();
    const { feature, body } = await toggle();
    const id = await scheduled(body, lost);
    const removed = await call('PUT', `/api/admin/projects/${project}/users/${lost.userId}/roles`, { body: { roles: [] } });
    expect(removed.status).toBeLessThan(300);
    await expectFailed(id, /no longer has the "APPLY_CHANGE_REQUEST" permission/);
    expect(await enabled(feature)).toBe(0);
  });

  it('fails when the scheduler was deleted meanwhile', async () => {
    const gone = await scheduler();
    const { feature, body } = await toggle();
    const id = await scheduled(body, gone);
    await adminOk('DELETE', `/api/admin/user-admin/${gone.userId}`);
    await expectFailed(id, /no longer exists/);
    expect(await enabled(feature)).toBe(0);
  });
});
