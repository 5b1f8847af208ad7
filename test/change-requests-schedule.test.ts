/**
 * Scheduled change requests apply at their time: scheduling sets the request's Durable Object
 * alarm to the minute asked for, rescheduling moves it, cancelling removes it, and the alarm
 * applies the request (or records why it cannot) exactly as the cron sweep would. The alarm is
 * run with the plugin's `runDurableObjectAlarm`, as the runtime would run it at its time.
 */
import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { schedulerOf } from '../src/admin/change-requests/alarm';
import { adminOk, createProject } from './support/admin';
import { lastEvent, parsedEvent, rows } from './support/db';
import { bodyOf, call } from './support/http';
import { moveRequestOk, projectMembers } from './support/change-requests';
import { unique } from './support/names';

const PROD = 'production';
const who = {} as Record<'author' | 'approver', string>;
let project: string;

const base = () => `/api/admin/projects/${project}/change-requests`;

const stateOk = (token: string, id: number, body: Record<string, unknown>) => moveRequestOk(project, token, id, body);

async function enabledIn(name: string): Promise<boolean> {
  const [row] = await rows<{ enabled: number }>(
    'SELECT enabled FROM feature_environments WHERE feature_name = ? AND environment = ?',
    name,
    PROD,
  );
  return row?.enabled === 1;
}

/** An approved request of the author's turning a new flag on in production. */
async function approvedToggle(): Promise<{ id: number; name: string }> {
  const name = unique('crsched-f');
  await adminOk('POST', `/api/admin/projects/${project}/features`, { name });
  const path = `/api/admin/projects/${project}/environments/${PROD}/change-requests`;
  const draft = await bodyOf(
    await call('POST', path, { token: who.author, body: { feature: name, action: 'updateEnabled', payload: { enabled: true } } }),
  );
  await stateOk(who.author, draft.id, { state: 'In review' });
  await stateOk(who.approver, draft.id, { state: 'Approved' });
  return { id: draft.id, name };
}

const alarmOf = (id: number) => runInDurableObject(schedulerOf(env, id), (_, state) => state.storage.getAlarm());

beforeAll(async () => {
  project = await createProject(unique('crsched'), ['development', PROD]);
  // The run applies with the scheduler's rights: turning on a flag without strategies adds the default one.
  const permissions = ['UPDATE_FEATURE_ENVIRONMENT', 'CREATE_FEATURE_STRATEGY', 'APPROVE_CHANGE_REQUEST', 'APPLY_CHANGE_REQUEST'].map(
    (name) => ({
      name,
      environment: PROD,
    }),
  );
  [who.author, who.approver] = (await projectMembers(project, permissions, 2)) as [string, string];
  await adminOk('PUT', `/api/admin/projects/${project}/environments/${PROD}/change-requests/config`, {
    changeRequestsEnabled: true,
    requiredApprovals: 1,
  });
});

describe('the alarm of a scheduled change request', () => {
  it('is set to the time asked for, and applies the request when it fires', async () => {
    const { id, name } = await approvedToggle();
    const at = new Date(Date.now() + 60_000);
    await stateOk(who.approver, id, { state: 'Scheduled', scheduledAt: at.toISOString() });
    expect(await alarmOf(id)).toBe(at.getTime());
    expect(await enabledIn(name)).toBe(false);

    expect(await runDurableObjectAlarm(schedulerOf(env, id))).toBe(true);
    expect(await enabledIn(name)).toBe(true);
    const read = await bodyOf(await call('GET', `${base()}/${id}`));
    expect(read.state).toBe('Applied');
    expect(read.schedule).toBeUndefined();
    expect(parsedEvent(await lastEvent('change-request-scheduled-application-success'))?.data).toMatchObject({ changeRequestId: id });
    expect(await alarmOf(id)).toBeNull();
  });

  it('moves with a new time, and is removed when the request is cancelled: nothing applies', async () => {
    const { id, name } = await approvedToggle();
    const first = new Date(Date.now() + 60_000);
    const later = new Date(Date.now() + 3 * 60_000);
    await stateOk(who.approver, id, { state: 'Scheduled', scheduledAt: first.toISOString() });
    await stateOk(who.approver, id, { state: 'Scheduled', scheduledAt: later.toISOString() });
    expect(await alarmOf(id)).toBe(later.getTime());

    await stateOk(who.author, id, { state: 'Cancelled' });
    expect(await alarmOf(id)).toBeNull();
    expect(await runDurableObjectAlarm(schedulerOf(env, id))).toBe(false);
    expect(await enabledIn(name)).toBe(false);
    expect((await bodyOf(await call('GET', `${base()}/${id}`))).state).toBe('Cancelled');
  });

  it('does nothing for a request that left Scheduled without its alarm being removed', async () => {
    const { id, name } = await approvedToggle();
    const at = new Date(Date.now() + 60_000);
    await stateOk(who.approver, id, { state: 'Scheduled', scheduledAt: at.toISOString() });
    // As if the alarm could not be removed: the request is rejected in D1 only.
    await env.DB.prepare("UPDATE change_requests SET state = 'Rejected', schedule_status = NULL WHERE id = ?").bind(id).run();
    expect(await runDurableObjectAlarm(schedulerOf(env, id))).toBe(true);
    expect(await enabledIn(name)).toBe(false);
    expect((await bodyOf(await call('GET', `${base()}/${id}`))).state).toBe('Rejected');
  });

  it('records a request that cannot apply at its time as failed, with the reason and its event', async () => {
    const { id, name } = await approvedToggle();
    const at = new Date(Date.now() + 60_000);
    await stateOk(who.approver, id, { state: 'Scheduled', scheduledAt: at.toISOString() });
    await adminOk('DELETE', `/api/admin/projects/${project}/features/${name}`);
    expect(await runDurableObjectAlarm(schedulerOf(env, id))).toBe(true);
    const read = await bodyOf(await call('GET', `${base()}/${id}`));
    expect(read.state).toBe('Scheduled');
    expect(read.schedule).toMatchObject({ status: 'failed', reason: expect.stringMatching(/no longer exists or was archived/) });
    expect(parsedEvent(await lastEvent('change-request-scheduled-application-failure'))?.data).toMatchObject({ changeRequestId: id });
  });
});
