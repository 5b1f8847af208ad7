/**
 * Change requests: settings per environment, drafts, the four-eyes rules (enforced by the API),
 * atomic apply through the direct writes, scheduled apply by the cron run, conflicts, the
 * refusal of direct writes in a governed environment, events, and SDKs that see nothing
 * until a request is applied. Callers are real people signed in through the real runtime.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../src/index';
import { adminOk, createProject } from './support/admin';
import { count, lastEvent, parsedEvent, rows } from './support/db';
import { bodyOf, call, createToken, expectError } from './support/http';
import { unique } from './support/names';
import { signInAs } from './support/users';

const PROD = 'production';
const who = {} as Record<'author' | 'approver1' | 'approver2' | 'outsider', string>;
let project: string;
let clientKey: string;
let frontendKey: string;

async function frontendNames(): Promise<string[]> {
  const answer = await bodyOf(await call('GET', '/api/frontend', { token: frontendKey }));
  return answer.toggles.map((toggle: { name: string }) => toggle.name);
}

const base = () => `/api/admin/projects/${project}/change-requests`;
const draftPath = () => `/api/admin/projects/${project}/environments/${PROD}/change-requests`;
const as = (token: string, body?: unknown) => (body === undefined ? { token } : { token, body });

async function flag(): Promise<string> {
  const name = unique('crf');
  await adminOk('POST', `/api/admin/projects/${project}/features`, { name });
  return name;
}

async function enabledIn(name: string): Promise<boolean> {
  const [row] = await rows<{ enabled: number }>(
    'SELECT enabled FROM feature_environments WHERE feature_name = ? AND environment = ?',
    name,
    PROD,
  );
  return row?.enabled === 1;
}

async function addChange(token: string, feature: string, action: string, payload: Record<string, unknown>) {
  const response = await call('POST', draftPath(), as(token, { feature, action, payload }));
  if (response.status !== 200) throw new Error(`add change: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

async function state(token: string, id: number, body: Record<string, unknown>) {
  return call('PUT', `${base()}/${id}/state`, as(token, body));
}

async function stateOk(token: string, id: number, body: Record<string, unknown>) {
  const response = await state(token, id, body);
  if (response.status !== 200) throw new Error(`state ${JSON.stringify(body)}: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

/** A request of the author's with the given change, sent to review and approved by both approvers. */
async function approvedRequest(feature: string, action: string, payload: Record<string, unknown>) {
  const draft = await addChange(who.author, feature, action, payload);
  await stateOk(who.author, draft.id, { state: 'In review' });
  await stateOk(who.approver1, draft.id, { state: 'Approved' });
  const approved = await stateOk(who.approver2, draft.id, { state: 'Approved' });
  expect(approved.state).toBe('Approved');
  return draft.id as number;
}

async function runCron(at: Date) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: at.getTime(), cron: '*/5 * * * *' }), env, ctx);
  await waitOnExecutionContext(ctx);
}

beforeAll(async () => {
  project = await createProject(unique('cr'), ['development', PROD]);
  const role = await bodyOf(
    await adminOk('POST', '/api/admin/roles', {
      name: unique('cr-role'),
      description: 'flags in production, through change requests',
      type: 'custom',
      permissions: [
        'UPDATE_FEATURE_ENVIRONMENT',
        'CREATE_FEATURE_STRATEGY',
        'UPDATE_FEATURE_STRATEGY',
        'DELETE_FEATURE_STRATEGY',
        'APPROVE_CHANGE_REQUEST',
        'APPLY_CHANGE_REQUEST',
      ].flatMap((name) => [
        { name, environment: PROD },
        { name, environment: 'development' },
      ]),
    }),
  );
  const member = async (userId: number) => {
    await adminOk('POST', `/api/admin/projects/${project}/access`, { roles: [role.id], users: [userId] });
  };
  who.author = await signInAs('Viewer', member);
  who.approver1 = await signInAs('Viewer', member);
  who.approver2 = await signInAs('Viewer', member);
  who.outsider = await signInAs('Viewer');
  await adminOk('PUT', `/api/admin/projects/${project}/environments/${PROD}/change-requests/config`, {
    changeRequestsEnabled: true,
    requiredApprovals: 2,
  });
  clientKey = await createToken({ tokenName: unique('cr-sdk'), type: 'client', environment: PROD, projects: [project] });
  frontendKey = await createToken({ tokenName: unique('cr-fe'), type: 'frontend', environment: PROD, projects: [project] });
});

describe('PUT/GET change-requests/config', () => {
  it('lists every environment of the project with its setting', async () => {
    const config = await bodyOf(await call('GET', `${base()}/config`));
    expect(config).toEqual([
      { environment: 'development', type: 'development', changeRequestEnabled: false, requiredApprovals: 1 },
      { environment: PROD, type: 'production', changeRequestEnabled: true, requiredApprovals: 2 },
    ]);
    expect(parsedEvent(await lastEvent('change-request-configuration-updated'))?.data).toEqual({
      changeRequestsEnabled: true,
      requiredApprovals: 2,
    });
  });

  it('refuses a member without the project right, and writes nothing', async () => {
    const response = await call(
      'PUT',
      `/api/admin/projects/${project}/environments/development/change-requests/config`,
      as(who.author, { changeRequestsEnabled: true, requiredApprovals: 1 }),
    );
    await expectError(response, 403, 'NoAccessError');
    expect(
      await count('SELECT count(*) AS n FROM change_request_settings WHERE project = ? AND environment = ?', project, 'development'),
    ).toBe(0);
  });

  it('refuses an environment the project does not have, and a bad approval count', async () => {
    await expectError(
      await call('PUT', `/api/admin/projects/${project}/environments/default/change-requests/config`, {
        body: { changeRequestsEnabled: true },
      }),
      404,
      'NotFoundError',
    );
    await expectError(
      await call('PUT', `/api/admin/projects/${project}/environments/${PROD}/change-requests/config`, {
        body: { changeRequestsEnabled: true, requiredApprovals: 0 },
      }),
      400,
      'ValidationError',
    );
  });
});

describe('direct writes in a governed environment', () => {
  it('refuses them without SKIP_CHANGE_REQUEST, with Unleash’s error, and writes nothing', async () => {
    const name = await flag();
    const response = await call('POST', `/api/admin/projects/${project}/features/${name}/environments/${PROD}/on`, { token: who.author });
    const error = await expectError(response, 403, 'NoAccessError');
    expect(error.message).toContain('"SKIP_CHANGE_REQUEST"');
    expect(await enabledIn(name)).toBe(false);
    const strategy = await call(
      'POST',
      `/api/admin/projects/${project}/features/${name}/environments/${PROD}/strategies`,
      as(who.author, { name: 'default' }),
    );
    await expectError(strategy, 403, 'NoAccessError');
    expect(await count('SELECT count(*) AS n FROM feature_strategies WHERE feature_name = ? AND environment = ?', name, PROD)).toBe(0);
  });

  it('lets them through where change requests are off, and for an admin token (which holds the skip right)', async () => {
    const name = await flag();
    expect(
      (await call('POST', `/api/admin/projects/${project}/features/${name}/environments/development/on`, { token: who.author })).status,
    ).toBe(200);
    expect((await call('POST', `/api/admin/projects/${project}/features/${name}/environments/${PROD}/on`)).status).toBe(200);
    expect(await enabledIn(name)).toBe(true);
  });
});

describe('POST environments/:env/change-requests (drafts)', () => {
  it('collects one person’s changes in one draft, shown only to them', async () => {
    const name = await flag();
    const first = await addChange(who.author, name, 'updateEnabled', { enabled: true });
    const second = await addChange(who.author, name, 'addStrategy', {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: name },
    });
    expect(second.id).toBe(first.id);
    expect(second).toMatchObject({ state: 'Draft', project, environment: PROD, minApprovals: 2, title: `Change request #${first.id}` });
    expect(second.features).toEqual([
      {
        name,
        changes: [
          expect.objectContaining({ action: 'updateEnabled', payload: { enabled: true } }),
          expect.objectContaining({ action: 'addStrategy' }),
        ],
      },
    ]);
    const others = await bodyOf(await call('GET', `${base()}/pending`, { token: who.approver1 }));
    expect(others.some((request: { id: number }) => request.id === first.id)).toBe(false);
    expect(parsedEvent(await lastEvent('change-added'))?.data).toMatchObject({
      changeRequestId: first.id,
      feature: name,
      action: 'addStrategy',
    });
    await call('DELETE', `${base()}/${first.id}`, { token: who.author });
  });

  it('refuses a change the person could not make directly, an unknown action and an ungoverned environment, writing nothing', async () => {
    const name = await flag();
    const before = await count('SELECT count(*) AS n FROM change_request_changes');
    await expectError(
      await call('POST', draftPath(), as(who.outsider, { feature: name, action: 'updateEnabled', payload: { enabled: true } })),
      403,
      'NoAccessError',
    );
    await expectError(
      await call('POST', draftPath(), as(who.author, { feature: name, action: 'launchRocket', payload: {} })),
      400,
      'ValidationError',
    );
    await expectError(
      await call(
        'POST',
        `/api/admin/projects/${project}/environments/development/change-requests`,
        as(who.author, { feature: name, action: 'updateEnabled', payload: { enabled: true } }),
      ),
      400,
      'ValidationError',
    );
    await expectError(
      await call('POST', draftPath(), as(who.author, { feature: 'no-such-flag', action: 'updateEnabled', payload: { enabled: true } })),
      404,
      'NotFoundError',
    );
    expect(await count('SELECT count(*) AS n FROM change_request_changes')).toBe(before);
  });

  it('edits and discards changes; the last one discarded takes the draft with it', async () => {
    const name = await flag();
    const draft = await addChange(who.author, name, 'updateEnabled', { enabled: true });
    const changeId = draft.features[0].changes[0].id;
    expect(
      (
        await call(
          'PUT',
          `${base()}/${draft.id}/changes/${changeId}`,
          as(who.author, { action: 'updateEnabled', payload: { enabled: false } }),
        )
      ).status,
    ).toBe(200);
    expect((await bodyOf(await call('GET', `${base()}/${draft.id}`))).features[0].changes[0].payload).toEqual({ enabled: false });
    await expectError(
      await call('PUT', `${base()}/${draft.id}/changes/${changeId}`, as(who.approver1, { payload: { enabled: true } })),
      400,
      'ValidationError',
    );
    expect((await call('DELETE', `${base()}/${draft.id}/changes/${changeId}`, { token: who.author })).status).toBe(200);
    await expectError(await call('GET', `${base()}/${draft.id}`), 404, 'NotFoundError');
    expect(await lastEvent('change-request-discarded')).not.toBeNull();
  });

  it('sets the title and takes comments', async () => {
    const name = await flag();
    const draft = await addChange(who.author, name, 'updateEnabled', { enabled: true });
    expect((await call('PUT', `${base()}/${draft.id}/title`, as(who.author, { title: 'Launch' }))).status).toBe(200);
    expect((await call('POST', `${base()}/${draft.id}/comments`, as(who.approver1, { text: 'Looks good' }))).status).toBe(200);
    const read = await bodyOf(await call('GET', `${base()}/${draft.id}`));
    expect(read.title).toBe('Launch');
    expect(read.comments).toEqual([
      expect.objectContaining({ text: 'Looks good', createdBy: expect.objectContaining({ username: expect.any(String) }) }),
    ]);
    await call('DELETE', `${base()}/${draft.id}`, { token: who.author });
  });
});

describe('PUT change-requests/:id/state', () => {
  it('goes Draft → In review → Approved (two distinct approvers) → Applied; SDKs see the flag only then', async () => {
    const name = await flag();
    const draft = await addChange(who.author, name, 'updateEnabled', { enabled: true });
    await expectError(await state(who.approver1, draft.id, { state: 'Approved' }), 400, 'ValidationError');
    await stateOk(who.author, draft.id, { state: 'In review' });

    await expectError(await state(who.author, draft.id, { state: 'Approved' }), 400, 'ValidationError');
    await expectError(await state(who.outsider, draft.id, { state: 'Approved' }), 403, 'NoAccessError');
    expect(await count('SELECT count(*) AS n FROM change_request_reviews WHERE change_request_id = ?', draft.id)).toBe(0);

    const once = await stateOk(who.approver1, draft.id, { state: 'Approved' });
    expect(once.state).toBe('In review');
    expect(once.approvals).toHaveLength(1);
    // The same person approving again does not count twice.
    await expectError(await state(who.approver1, draft.id, { state: 'Approved' }), 400, 'ValidationError');
    expect(await count('SELECT count(*) AS n FROM change_request_reviews WHERE change_request_id = ?', draft.id)).toBe(1);
    await expectError(await state(who.approver1, draft.id, { state: 'Applied' }), 400, 'ValidationError');

    const approved = await stateOk(who.approver2, draft.id, { state: 'Approved' });
    expect(approved.state).toBe('Approved');
    const sdkBefore = await bodyOf(await call('GET', '/api/client/features', { token: clientKey }));
    expect(sdkBefore.features.find((feature: { name: string }) => feature.name === name)?.enabled).toBe(false);
    expect(await frontendNames()).not.toContain(name);
    expect(await enabledIn(name)).toBe(false);

    await expectError(await state(who.outsider, draft.id, { state: 'Applied' }), 403, 'NoAccessError');
    const applied = await stateOk(who.author, draft.id, { state: 'Applied' });
    expect(applied.state).toBe('Applied');
    expect(Object.keys(applied.stateTimestamps)).toEqual(['Draft', 'In review', 'Approved', 'Applied']);
    expect(await enabledIn(name)).toBe(true);
    // The same event as a direct write, in the applier's name: SDK revision and integrations follow.
    const enabledEvent = await lastEvent('feature-environment-enabled');
    expect(enabledEvent).toMatchObject({ feature_name: name, environment: PROD });
    const sdkAfter = await bodyOf(await call('GET', '/api/client/features', { token: clientKey }));
    expect(sdkAfter.features.find((feature: { name: string }) => feature.name === name)?.enabled).toBe(true);
    expect(await frontendNames()).toContain(name);

    const types = await rows<{ type: string }>(
      `SELECT type FROM events WHERE json_extract(data, '$.changeRequestId') = ? ORDER BY id`,
      draft.id,
    );
    expect(types.map((row) => row.type)).toEqual([
      'change-request-created',
      'change-added',
      'change-request-sent-to-review',
      'change-request-approval-added',
      'change-request-approval-added',
      'change-request-approved',
      'change-request-applied',
    ]);
    await expectError(await state(who.author, draft.id, { state: 'Cancelled' }), 400, 'ValidationError');
  });

  it('applies once when two people apply at the same moment', async () => {
    const name = await flag();
    const id = await approvedRequest(name, 'updateEnabled', { enabled: true });
    const answers = await Promise.all([state(who.author, id, { state: 'Applied' }), state(who.approver1, id, { state: 'Applied' })]);
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses[0]).toBe(200);
    expect([400, 409]).toContain(statuses[1]);
    expect(
      await count(
        `SELECT count(*) AS n FROM events WHERE type = 'change-request-applied' AND json_extract(data, '$.changeRequestId') = ?`,
        id,
      ),
    ).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM events WHERE type = 'feature-environment-enabled' AND feature_name = ?`, name)).toBe(1);
  });

  it('rejects (not by the author) and cancels (by the author), with their events', async () => {
    const rejected = await addChange(who.author, await flag(), 'updateEnabled', { enabled: true });
    await stateOk(who.author, rejected.id, { state: 'In review' });
    await expectError(await state(who.author, rejected.id, { state: 'Rejected' }), 400, 'ValidationError');
    const answer = await stateOk(who.approver1, rejected.id, { state: 'Rejected', comment: 'Not now' });
    expect(answer.state).toBe('Rejected');
    expect(answer.rejections).toHaveLength(1);
    expect(answer.comments[0].text).toBe('Not now');
    expect(parsedEvent(await lastEvent('change-request-rejected'))?.data).toMatchObject({ changeRequestId: rejected.id });

    const cancelled = await addChange(who.author, await flag(), 'updateEnabled', { enabled: true });
    await stateOk(who.author, cancelled.id, { state: 'In review' });
    expect((await stateOk(who.author, cancelled.id, { state: 'Cancelled' })).state).toBe('Cancelled');
    expect(parsedEvent(await lastEvent('change-request-cancelled'))?.data).toMatchObject({ changeRequestId: cancelled.id });
  });

  it('applies all changes or none: a conflicting change leaves the others unapplied and shows the conflict', async () => {
    const name = await flag();
    const strategy = await bodyOf(
      await adminOk('POST', `/api/admin/projects/${project}/features/${name}/environments/${PROD}/strategies`, { name: 'default' }),
    );
    const draft = await addChange(who.author, name, 'updateEnabled', { enabled: true });
    await addChange(who.author, name, 'updateStrategy', {
      id: strategy.id,
      name: 'default',
      title: 'renamed',
      parameters: {},
      constraints: [],
    });
    await stateOk(who.author, draft.id, { state: 'In review' });
    await stateOk(who.approver1, draft.id, { state: 'Approved' });
    await stateOk(who.approver2, draft.id, { state: 'Approved' });
    // Someone with the skip right (an admin token) changes the strategy meanwhile.
    await adminOk('PUT', `/api/admin/projects/${project}/features/${name}/environments/${PROD}/strategies/${strategy.id}`, {
      name: 'default',
      title: 'moved',
      parameters: {},
    });
    const read = await bodyOf(await call('GET', `${base()}/${draft.id}`));
    expect(read.features[0].changes[1].conflict).toMatch(/changed since/);
    await expectError(await state(who.author, draft.id, { state: 'Applied' }), 409, 'ConflictError');
    expect(await enabledIn(name)).toBe(false);
    expect((await bodyOf(await call('GET', `${base()}/${draft.id}`))).state).toBe('Approved');
  });

  it('refuses a schedule in the past, and applies a scheduled request at its time in the cron run', async () => {
    const name = await flag();
    const id = await approvedRequest(name, 'updateEnabled', { enabled: true });
    await expectError(await state(who.author, id, { state: 'Scheduled', scheduledAt: '2020-01-01T00:00:00.000Z' }), 400, 'ValidationError');
    const at = new Date(Date.now() + 60 * 60 * 1000);
    const scheduled = await stateOk(who.author, id, { state: 'Scheduled', scheduledAt: at.toISOString() });
    expect(scheduled.schedule).toEqual({ status: 'pending', scheduledAt: at.toISOString() });
    expect(parsedEvent(await lastEvent('change-request-scheduled'))?.data).toMatchObject({
      changeRequestId: id,
      scheduledDate: at.toISOString(),
    });
    const touching = await bodyOf(await call('GET', `${base()}/scheduled?strategyId=none`));
    expect(touching).toEqual([]);

    await runCron(new Date(at.getTime() - 60_000));
    expect(await enabledIn(name)).toBe(false);
    await runCron(new Date(at.getTime() + 1000));
    expect(await enabledIn(name)).toBe(true);
    expect((await bodyOf(await call('GET', `${base()}/${id}`))).state).toBe('Applied');
    expect(parsedEvent(await lastEvent('change-request-scheduled-application-success'))?.data).toMatchObject({ changeRequestId: id });
  });

  it('records a scheduled request that cannot apply as failed, with the reason, and applies nothing', async () => {
    const name = await flag();
    const strategy = await bodyOf(
      await adminOk('POST', `/api/admin/projects/${project}/features/${name}/environments/${PROD}/strategies`, { name: 'default' }),
    );
    const id = await approvedRequest(name, 'deleteStrategy', { id: strategy.id });
    const at = new Date(Date.now() + 2 * 60 * 60 * 1000);
    await stateOk(who.author, id, { state: 'Scheduled', scheduledAt: at.toISOString() });
    expect(await bodyOf(await call('GET', `${base()}/scheduled?strategyId=${strategy.id}`))).toEqual([{ id, environment: PROD }]);
    await adminOk('PUT', `/api/admin/projects/${project}/features/${name}/environments/${PROD}/strategies/${strategy.id}`, {
      name: 'default',
      title: 'moved',
      parameters: {},
    });
    await runCron(new Date(at.getTime() + 1000));
    const read = await bodyOf(await call('GET', `${base()}/${id}`));
    expect(read.state).toBe('Scheduled');
    expect(read.schedule).toMatchObject({ status: 'failed', reason: expect.stringMatching(/changed since/) });
    expect(await count('SELECT count(*) AS n FROM feature_strategies WHERE id = ?', strategy.id)).toBe(1);
    expect(parsedEvent(await lastEvent('change-request-scheduled-application-failure'))?.data).toMatchObject({ changeRequestId: id });
  });
});

describe('GET count, actionable, pending', () => {
  it('counts the project’s requests by state, and what waits for the caller', async () => {
    const counted = await bodyOf(await call('GET', `${base()}/count`));
    expect(counted).toEqual({
      applied: expect.any(Number),
      approved: expect.any(Number),
      rejected: expect.any(Number),
      scheduled: expect.any(Number),
      reviewRequired: expect.any(Number),
      total: counted.applied + counted.approved + counted.rejected + counted.scheduled + counted.reviewRequired,
    });
    const name = await flag();
    const draft = await addChange(who.author, name, 'updateEnabled', { enabled: true });
    await stateOk(who.author, draft.id, { state: 'In review' });
    const forApprover = await bodyOf(await call('GET', `${base()}/actionable`, { token: who.approver1 }));
    const forAuthor = await bodyOf(await call('GET', `${base()}/actionable`, { token: who.author }));
    expect(forApprover.total).toBe(forAuthor.total + 1);
    const pending = await bodyOf(await call('GET', `${base()}/pending/${name}`, { token: who.approver1 }));
    expect(pending.map((request: { id: number }) => request.id)).toEqual([draft.id]);
  });
});
