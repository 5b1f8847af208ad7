/**
 * Segments and the strategies change requests would give them, as Unleash Enterprise treats
 * them: `GET /api/admin/segments/:id/strategies` lists, under `changeRequestStrategies`, the
 * strategies open requests would add or update with the segment; such a segment is in use (its
 * delete answers 409); and `POST /api/admin/segments/strategies` is a governed strategy write.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createProject } from './support/admin';
import { count, lastEvent, rows } from './support/db';
import { bodyOf, call, expectError } from './support/http';
import { moveRequestOk, projectMembers } from './support/change-requests';
import { unique } from './support/names';

const PROD = 'production';
const DEV = 'development';
const who = {} as Record<'author' | 'approver', string>;
let project: string;

const draftPath = () => `/api/admin/projects/${project}/environments/${PROD}/change-requests`;
const usersOf = async (id: number) => bodyOf(await call('GET', `/api/admin/segments/${id}/strategies`));
const segmentRows = (id: number) => count('SELECT count(*) AS n FROM segments WHERE id = ?', id);

async function segment(): Promise<{ id: number; name: string }> {
  return bodyOf(await adminOk('POST', '/api/admin/segments', { name: unique('crgaps-s'), project, constraints: [] }));
}

async function flagWithStrategy(environment = PROD): Promise<{ flag: string; strategyId: string }> {
  const flag = unique('crgaps-f');
  await adminOk('POST', `/api/admin/projects/${project}/features`, { name: flag });
  const path = `/api/admin/projects/${project}/features/${flag}/environments/${environment}/strategies`;
  const strategy = await bodyOf(await adminOk('POST', path, { name: 'default', constraints: [], parameters: {} }));
  return { flag, strategyId: strategy.id };
}

async function draftOk(body: unknown) {
  const response = await call('POST', draftPath(), { token: who.author, body });
  if (response.status !== 200) throw new Error(`draft: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

beforeAll(async () => {
  project = await createProject(unique('crgaps'), [DEV, PROD]);
  [who.author, who.approver] = (await projectMembers(
    project,
    [
      { name: 'CREATE_FEATURE_STRATEGY', environment: PROD },
      { name: 'UPDATE_FEATURE_STRATEGY', environment: PROD },
      { name: 'UPDATE_FEATURE_STRATEGY', environment: DEV },
      { name: 'APPROVE_CHANGE_REQUEST', environment: PROD },
      { name: 'APPLY_CHANGE_REQUEST', environment: PROD },
    ],
    2,
  )) as [string, string];
  await adminOk('PUT', `/api/admin/projects/${project}/environments/${PROD}/change-requests/config`, {
    changeRequestsEnabled: true,
    requiredApprovals: 1,
  });
});

describe('strategies of a segment in change requests', () => {
  it('lists the strategies open requests would add or update with the segment, in Unleash’s shape', async () => {
    const used = await segment();
    const other = await segment();
    const { flag, strategyId } = await flagWithStrategy();
    const draft = await draftOk([
      { feature: flag, action: 'addStrategy', payload: { name: 'flexibleRollout', constraints: [], parameters: {}, segments: [used.id] } },
      {
        feature: flag,
        action: 'updateStrategy',
        payload: { id: strategyId, name: 'default', constraints: [], parameters: {}, segments: [other.id, used.id] },
      },
    ]);
    const inRequest = (id?: string, title: string | null = null) => ({
      ...(id ? { id } : {}),
      projectId: project,
      featureName: flag,
      strategyName: id ? 'default' : 'flexibleRollout',
      environment: PROD,
      changeRequest: { id: draft.id, title },
    });
    expect(await usersOf(used.id)).toEqual({ strategies: [], changeRequestStrategies: [inRequest(), inRequest(strategyId)] });
    expect((await usersOf(other.id)).changeRequestStrategies).toEqual([inRequest(strategyId)]);

    // The title shows once it has one; in review and approved it is still listed.
    const titled = await call('PUT', `/api/admin/projects/${project}/change-requests/${draft.id}/title`, {
      token: who.author,
      body: { title: 'rollout' },
    });
    expect(titled.status).toBeLessThan(300);
    await moveRequestOk(project, who.author, draft.id, { state: 'In review' });
    await moveRequestOk(project, who.approver, draft.id, { state: 'Approved' });
    expect((await usersOf(used.id)).changeRequestStrategies).toEqual([inRequest(undefined, 'rollout'), inRequest(strategyId, 'rollout')]);

    // Applied: the strategies now use it, and the request no longer counts.
    await moveRequestOk(project, who.approver, draft.id, { state: 'Applied' });
    const after = await usersOf(used.id);
    expect(after.changeRequestStrategies).toEqual([]);
    expect(after.strategies.map((strategy: { featureName: string }) => strategy.featureName)).toEqual([flag, flag]);
  });

  it('forgets a request once it is cancelled, and lists nothing for a strategy change without the segment', async () => {
    const used = await segment();
    const { flag } = await flagWithStrategy();
    const draft = await draftOk({ feature: flag, action: 'addStrategy', payload: { name: 'default', segments: [used.id] } });
    await draftOk({ feature: flag, action: 'addStrategy', payload: { name: 'default', constraints: [] } });
    expect((await usersOf(used.id)).changeRequestStrategies).toHaveLength(1);
    await moveRequestOk(project, who.author, draft.id, { state: 'Cancelled' });
    expect(await usersOf(used.id)).toEqual({ strategies: [], changeRequestStrategies: [] });
  });
});

describe('a segment used only by a change request', () => {
  it('cannot be deleted (409 SegmentInUseError, nothing written) until the request is gone', async () => {
    const used = await segment();
    const { flag } = await flagWithStrategy();
    const draft = await draftOk({ feature: flag, action: 'addStrategy', payload: { name: 'default', segments: [used.id] } });
    const deletedEvents = () =>
      count("SELECT count(*) AS n FROM events WHERE type = 'segment-deleted' AND pre_data LIKE ?", `%${used.name}%`);

    const refused = await expectError(await call('DELETE', `/api/admin/segments/${used.id}`), 409, 'SegmentInUseError');
    expect(refused.message).toContain(used.name);
    expect(await segmentRows(used.id)).toBe(1);
    expect(await deletedEvents()).toBe(0);

    // Nor can a change request delete it.
    const before = await count('SELECT count(*) AS n FROM change_request_changes');
    await expectError(
      await call('POST', `/api/admin/projects/${project}/environments/${PROD}/change-requests`, {
        body: { feature: null, action: 'deleteSegment', payload: { id: used.id } },
      }),
      409,
      'SegmentInUseError',
    );
    expect(await count('SELECT count(*) AS n FROM change_request_changes')).toBe(before);

    await call('DELETE', `/api/admin/projects/${project}/change-requests/${draft.id}`, { token: who.author });
    expect(await count('SELECT count(*) AS n FROM change_requests WHERE id = ?', draft.id)).toBe(0);
    const deleted = await call('DELETE', `/api/admin/segments/${used.id}`);
    expect(deleted.status).toBe(204);
    expect(await segmentRows(used.id)).toBe(0);
    expect(await deletedEvents()).toBe(1);
  });
});

describe('POST /api/admin/segments/strategies in a governed environment', () => {
  const linked = async (strategyId: string) =>
    (await rows<{ segment_id: number }>('SELECT segment_id FROM feature_strategy_segment WHERE feature_strategy_id = ?', strategyId)).map(
      (row) => row.segment_id,
    );

  it('refuses a caller without SKIP_CHANGE_REQUEST with Unleash’s 403, writing nothing', async () => {
    const used = await segment();
    const { flag, strategyId } = await flagWithStrategy();
    const before = await count("SELECT count(*) AS n FROM events WHERE type = 'feature-strategy-update' AND feature_name = ?", flag);
    const body = { projectId: project, environmentId: PROD, strategyId, segmentIds: [used.id] };
    const refused = await expectError(
      await call('POST', '/api/admin/segments/strategies', { token: who.author, body }),
      403,
      'NoAccessError',
    );
    expect(refused.message).toContain('"SKIP_CHANGE_REQUEST"');
    expect(await linked(strategyId)).toEqual([]);
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'feature-strategy-update' AND feature_name = ?", flag)).toBe(before);
  });

  it('lets the same caller write where change requests are off, and an admin token everywhere, with the strategy’s event', async () => {
    const used = await segment();
    const dev = await flagWithStrategy(DEV);
    const devBody = { projectId: project, environmentId: DEV, strategyId: dev.strategyId, segmentIds: [used.id] };
    expect((await call('POST', '/api/admin/segments/strategies', { token: who.author, body: devBody })).status).toBe(201);
    expect(await linked(dev.strategyId)).toEqual([used.id]);

    const prod = await flagWithStrategy();
    await adminOk('POST', '/api/admin/segments/strategies', {
      projectId: project,
      environmentId: PROD,
      strategyId: prod.strategyId,
      segmentIds: [used.id],
    });
    expect(await linked(prod.strategyId)).toEqual([used.id]);
    const event = await lastEvent('feature-strategy-update');
    expect(event).toMatchObject({ feature_name: prod.flag, environment: PROD, project });
  });
});
