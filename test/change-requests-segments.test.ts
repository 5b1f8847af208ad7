/**
 * Segments under change requests, as Unleash Enterprise governs them: in a project with change
 * requests on in any environment, editing or deleting the project's segment goes through a
 * change request (the segment form drafts `updateSegment`/`deleteSegment` with `feature: null`),
 * direct writes are refused without SKIP_CHANGE_REQUEST, and applying writes the segment as the
 * direct write would, in the request's batch, with a conflict when the segment moved meanwhile.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createProject } from './support/admin';
import { count, lastEvent, parsedEvent, rows } from './support/db';
import { bodyOf, call, expectError } from './support/http';
import { moveRequestOk, projectMembers } from './support/change-requests';
import { unique } from './support/names';
import { signInAs } from './support/users';

const PROD = 'production';
const who = {} as Record<'author' | 'approver' | 'outsider', string>;
let project: string;

const base = () => `/api/admin/projects/${project}/change-requests`;
const draftPath = () => `/api/admin/projects/${project}/environments/${PROD}/change-requests`;
const constraint = (values: string[]) => ({ contextName: 'userId', operator: 'IN', values, caseInsensitive: false, inverted: false });

async function segment(projectId: string | null = project): Promise<{ id: number; name: string }> {
  const body = { name: unique('crseg-s'), description: 'before', project: projectId, constraints: [constraint(['a'])] };
  return bodyOf(await adminOk('POST', '/api/admin/segments', body));
}

async function stored(id: number) {
  const [row] = await rows<{ name: string; description: string | null; constraints: string }>(
    'SELECT name, description, constraints FROM segments WHERE id = ?',
    id,
  );
  return row;
}

/** The UI's body: the segment form's payload with the segment's id, and no flag. */
function updateBody(id: number, name: string, values = ['a', 'b']) {
  return {
    feature: null,
    action: 'updateSegment',
    payload: { id, name, description: 'after', project: project as string | null, constraints: [constraint(values)] },
  };
}

async function draftOk(token: string, body: unknown) {
  const response = await call('POST', draftPath(), { token, body });
  if (response.status !== 200) throw new Error(`draft: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

const stateOk = (token: string, id: number, body: Record<string, unknown>) => moveRequestOk(project, token, id, body);

async function approved(body: unknown): Promise<number> {
  const draft = await draftOk(who.author, body);
  await stateOk(who.author, draft.id, { state: 'In review' });
  expect((await stateOk(who.approver, draft.id, { state: 'Approved' })).state).toBe('Approved');
  return draft.id;
}

const draftRows = () => count('SELECT count(*) AS n FROM change_requests WHERE project = ?', project);

beforeAll(async () => {
  project = await createProject(unique('crseg'), ['development', PROD]);
  [who.author, who.approver] = (await projectMembers(
    project,
    [
      { name: 'UPDATE_PROJECT_SEGMENT' },
      { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: PROD },
      { name: 'APPROVE_CHANGE_REQUEST', environment: PROD },
      { name: 'APPLY_CHANGE_REQUEST', environment: PROD },
    ],
    2,
  )) as [string, string];
  who.outsider = await signInAs('Viewer');
  await adminOk('PUT', `/api/admin/projects/${project}/environments/${PROD}/change-requests/config`, {
    changeRequestsEnabled: true,
    requiredApprovals: 1,
  });
});

describe('direct segment writes in a governed project', () => {
  it('refuses editing and deleting the project’s segment without SKIP_CHANGE_REQUEST, writing nothing', async () => {
    const { id, name } = await segment();
    const edit = await call('PUT', `/api/admin/segments/${id}`, {
      token: who.author,
      body: { name, description: 'direct', project, constraints: [] },
    });
    expect((await expectError(edit, 403, 'NoAccessError')).message).toContain('"SKIP_CHANGE_REQUEST"');
    const remove = await call('DELETE', `/api/admin/segments/${id}`, { token: who.author });
    expect((await expectError(remove, 403, 'NoAccessError')).message).toContain('"SKIP_CHANGE_REQUEST"');
    expect(await stored(id)).toMatchObject({ name, description: 'before' });
    expect(
      await count("SELECT count(*) AS n FROM events WHERE type IN ('segment-updated', 'segment-deleted') AND data LIKE ?", `%${name}%`),
    ).toBe(0);
  });

  it('lets an admin token through, and leaves segments of other projects and global ones alone', async () => {
    const { id, name } = await segment();
    await adminOk('PUT', `/api/admin/segments/${id}`, { name, description: 'by admin', project, constraints: [] });
    expect((await stored(id))?.description).toBe('by admin');
    const global = await segment(null);
    await adminOk('PUT', `/api/admin/segments/${global.id}`, { name: global.name, description: 'global', project: null, constraints: [] });
    expect((await stored(global.id))?.description).toBe('global');
  });
});

describe('updateSegment', () => {
  it('drafts the form’s body without touching the segment, shows it under segments, and applies it with the segment’s event', async () => {
    const { id, name } = await segment();
    const renamed = unique('crseg-renamed');
    const draft = await draftOk(who.author, updateBody(id, renamed));
    expect(draft.features).toEqual([]);
    expect(draft.segments).toEqual([
      expect.objectContaining({
        action: 'updateSegment',
        name: renamed,
        payload: expect.objectContaining({ id, name: renamed, description: 'after', snapshot: expect.objectContaining({ id, name }) }),
      }),
    ]);
    expect(draft.segments[0].conflict).toBeUndefined();
    expect(parsedEvent(await lastEvent('change-added'))?.data).toMatchObject({ segmentId: id, action: 'updateSegment' });
    expect(await stored(id)).toMatchObject({ name, description: 'before' });

    await stateOk(who.author, draft.id, { state: 'In review' });
    await stateOk(who.approver, draft.id, { state: 'Approved' });
    expect(await stored(id)).toMatchObject({ name, description: 'before' });
    const applied = await stateOk(who.approver, draft.id, { state: 'Applied' });
    expect(applied.state).toBe('Applied');
    const now = await stored(id);
    expect(now).toMatchObject({ name: renamed, description: 'after' });
    expect(JSON.parse(now!.constraints)[0].values).toEqual(['a', 'b']);
    const event = await lastEvent('segment-updated');
    expect(event?.project).toBe(project);
    expect(parsedEvent(event)).toMatchObject({
      data: expect.objectContaining({ id, name: renamed }),
      preData: expect.objectContaining({ name }),
    });
    expect(parsedEvent(await lastEvent('change-request-applied'))?.data).toMatchObject({ changeRequestId: draft.id });
  });

  it('shows a conflict when the segment changed since drafting, and applies nothing with 409', async () => {
    const { id, name } = await segment();
    const requestId = await approved(updateBody(id, name));
    await adminOk('PUT', `/api/admin/segments/${id}`, { name, description: 'meanwhile', project, constraints: [] });
    const read = await bodyOf(await call('GET', `${base()}/${requestId}`));
    expect(read.segments[0].conflict).toMatch(/changed since/);
    await expectError(
      await call('PUT', `${base()}/${requestId}/state`, { token: who.approver, body: { state: 'Applied' } }),
      409,
      'ConflictError',
    );
    expect((await stored(id))?.description).toBe('meanwhile');
    expect((await bodyOf(await call('GET', `${base()}/${requestId}`))).state).toBe('Approved');
  });

  it('applies a segment change and a flag change of one request in one batch: all or none', async () => {
    const { id, name } = await segment();
    const flag = unique('crseg-f');
    await adminOk('POST', `/api/admin/projects/${project}/features`, { name: flag });
    const draft = await draftOk(who.author, [
      updateBody(id, name, ['z']),
      { feature: flag, action: 'updateEnabled', payload: { enabled: true } },
    ]);
    expect(draft.segments).toHaveLength(1);
    expect(draft.features.map((feature: { name: string }) => feature.name)).toEqual([flag]);
    await stateOk(who.author, draft.id, { state: 'In review' });
    await stateOk(who.approver, draft.id, { state: 'Approved' });
    // The segment moves meanwhile: neither change applies.
    await adminOk('PUT', `/api/admin/segments/${id}`, { name, description: 'meanwhile', project, constraints: [] });
    await expectError(
      await call('PUT', `${base()}/${draft.id}/state`, { token: who.approver, body: { state: 'Applied' } }),
      409,
      'ConflictError',
    );
    const enabled = () =>
      count('SELECT count(*) AS n FROM feature_environments WHERE feature_name = ? AND environment = ? AND enabled = 1', flag, PROD);
    expect(await enabled()).toBe(0);
    expect((await stored(id))?.description).toBe('meanwhile');
  });

  it('refuses a global segment, an unknown one, a bad body and a caller without the right, drafting nothing', async () => {
    const before = await draftRows();
    const global = await segment(null);
    // A global segment that stays global is not the project's to govern (moving one into the project is).
    const staysGlobal = updateBody(global.id, global.name);
    staysGlobal.payload.project = null;
    await expectError(await call('POST', draftPath(), { token: who.author, body: staysGlobal }), 400, 'ValidationError');
    await expectError(await call('POST', draftPath(), { token: who.author, body: updateBody(99_999_999, 'x') }), 404, 'NotFoundError');
    const { id, name } = await segment();
    const noConstraints = { feature: null, action: 'updateSegment', payload: { id, name, project } };
    await expectError(await call('POST', draftPath(), { token: who.author, body: noConstraints }), 400, 'ValidationError');
    const taken = await segment();
    await expectError(await call('POST', draftPath(), { token: who.author, body: updateBody(id, taken.name) }), 409, 'NameExistsError');
    await expectError(await call('POST', draftPath(), { token: who.outsider, body: updateBody(id, name) }), 403, 'NoAccessError');
    // A flag's change still needs its flag.
    const noFeature = { feature: null, action: 'updateEnabled', payload: { enabled: true } };
    await expectError(await call('POST', draftPath(), { token: who.author, body: noFeature }), 400, 'ValidationError');
    expect(await draftRows()).toBe(before);
  });
});

describe('deleteSegment', () => {
  it('deletes the segment only when applied, with the segment’s event', async () => {
    const { id, name } = await segment();
    const requestId = await approved({ feature: null, action: 'deleteSegment', payload: { id } });
    const read = await bodyOf(await call('GET', `${base()}/${requestId}`));
    expect(read.segments[0]).toMatchObject({ action: 'deleteSegment', name, payload: { id, name } });
    expect(await stored(id)).toBeDefined();
    await stateOk(who.approver, requestId, { state: 'Applied' });
    expect(await stored(id)).toBeUndefined();
    const event = await lastEvent('segment-deleted');
    expect(event?.project).toBe(project);
    expect(parsedEvent(event)?.preData).toMatchObject({ id, name });
  });

  it('refuses to draft the delete of a segment in use, and answers 409 when a strategy took it up after approval', async () => {
    const used = await segment();
    const flag = unique('crseg-u');
    await adminOk('POST', `/api/admin/projects/${project}/features`, { name: flag });
    await adminOk('POST', `/api/admin/projects/${project}/features/${flag}/environments/development/strategies`, {
      name: 'default',
      segments: [used.id],
    });
    const before = await draftRows();
    await expectError(
      await call('POST', draftPath(), { token: who.author, body: { feature: null, action: 'deleteSegment', payload: { id: used.id } } }),
      409,
      'SegmentInUseError',
    );
    expect(await draftRows()).toBe(before);

    const later = await segment();
    const requestId = await approved({ feature: null, action: 'deleteSegment', payload: { id: later.id } });
    await adminOk('POST', `/api/admin/projects/${project}/features/${flag}/environments/development/strategies`, {
      name: 'default',
      segments: [later.id],
    });
    expect((await bodyOf(await call('GET', `${base()}/${requestId}`))).segments[0].conflict).toMatch(/in use/);
    await expectError(
      await call('PUT', `${base()}/${requestId}/state`, { token: who.approver, body: { state: 'Applied' } }),
      409,
      'ConflictError',
    );
    expect(await stored(later.id)).toBeDefined();
  });
});
