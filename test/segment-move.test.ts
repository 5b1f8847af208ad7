/**
 * Giving a segment a project while strategies of another project use it, as Unleash refuses it
 * (6.10.1 and 8.2.0 alike, observed): 400 `BadDataError` "Invalid project. Segment is being used
 * by strategies in other projects: <every project using it>", on any update naming a project.
 * Strategies of archived flags do not count; strategies open change requests would give it do
 * (Unleash Enterprise). A refused update writes nothing, its event included.
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ACCESS } from '../src/auth/access';
import { addStrategyStatements } from '../src/admin/feature-strategies/service';
import { StrategySchema } from '../src/admin/feature-strategies/schema';
import { updateSegmentStatements } from '../src/admin/segments/service';
import { getDb, runBatch } from '../src/db/client';
import { SYSTEM_ACTOR } from '../src/db/events';
import { parseInput } from '../src/http/validation';
import { adminOk, createProject } from './support/admin';
import { count, lastEvent, parsedEvent, rows } from './support/db';
import { bodyOf, call, expectError } from './support/http';
import { unique } from './support/names';

const DEV = 'development';
const PROD = 'production';
const IN_USE = 'Invalid project. Segment is being used by strategies in other projects: ';
let projectA: string;
let projectB: string;
let governed: string;

interface Segment {
  id: number;
  name: string;
}

async function segment(): Promise<Segment> {
  return bodyOf(await adminOk('POST', '/api/admin/segments', { name: unique('segmove-s'), constraints: [] }));
}

/** A new flag of `project` whose strategy in `environment` uses the segment; answers the flag's name. */
async function flagUsing(project: string, used: Segment, name = unique('segmove-f'), environment = DEV): Promise<string> {
  await adminOk('POST', `/api/admin/projects/${project}/features`, { name });
  await adminOk('POST', `/api/admin/projects/${project}/features/${name}/environments/${environment}/strategies`, {
    name: 'default',
    segments: [used.id],
  });
  return name;
}

const put = (used: Segment, project?: string | null) =>
  call('PUT', `/api/admin/segments/${used.id}`, {
    body: { name: used.name, description: 'moved', constraints: [], ...(project === undefined ? {} : { project }) },
  });

/** The segment's row and its `segment-updated` events: what a refused update must leave as it was. */
async function stored(used: Segment): Promise<string> {
  const row = await rows('SELECT * FROM segments WHERE id = ?', used.id);
  const events = await count("SELECT count(*) AS n FROM events WHERE type = 'segment-updated' AND json_extract(data, '$.id') = ?", used.id);
  return JSON.stringify([row, events]);
}

async function expectRefused(used: Segment, project: string, users: string) {
  const before = await stored(used);
  const refused = await expectError(await put(used, project), 400, 'BadDataError');
  expect(refused.message).toBe(`Request validation failed: your request body or params contain invalid data: ${IN_USE}${users}`);
  expect(refused.details).toEqual([{ message: `${IN_USE}${users}` }]);
  expect(await stored(used)).toBe(before);
}

beforeAll(async () => {
  projectA = await createProject(unique('segmove-a'));
  projectB = await createProject(unique('segmove-b'));
  governed = await createProject(unique('segmove-g'), [DEV, PROD]);
  await adminOk('PUT', `/api/admin/projects/${governed}/environments/${PROD}/change-requests/config`, {
    changeRequestsEnabled: true,
    requiredApprovals: 1,
  });
});

describe('PUT /api/admin/segments/:id with a project other strategies are in', () => {
  it('refuses a global segment used in another project, naming it, writing nothing (an unknown target too)', async () => {
    const used = await segment();
    await flagUsing(projectA, used);
    await expectRefused(used, projectB, projectA);
    // Unleash judges the users before the project exists (its foreign key comes last).
    await expectRefused(used, 'segmove-ghost', projectA);
  });

  it('refuses the project of some of its users, naming every project using it', async () => {
    const used = await segment();
    const run = unique('segmove');
    // The projects are named in the order of the flags using them (by name).
    await flagUsing(projectB, used, `${run}-1`);
    await flagUsing(projectA, used, `${run}-2`, PROD);
    await flagUsing(projectB, used, `${run}-3`);
    await expectRefused(used, projectA, `${projectB}, ${projectA}`);
    await expectRefused(used, projectB, `${projectB}, ${projectA}`);
  });

  it('moves a segment only its new project’s flags use, with the segment-updated event', async () => {
    const used = await segment();
    await flagUsing(projectA, used);
    expect((await put(used, projectA)).status).toBe(204);
    const event = await lastEvent('segment-updated');
    expect(event?.project).toBe(projectA);
    expect(parsedEvent(event)).toMatchObject({
      data: { id: used.id, name: used.name, description: 'moved', project: projectA },
      preData: { id: used.id, description: null },
    });
    expect(parsedEvent(event)?.preData).not.toHaveProperty('project');
    expect((await bodyOf(await call('GET', `/api/admin/segments/${used.id}`))).project).toBe(projectA);
    // Unchanged, it is judged again, and still passes.
    expect((await put(used, projectA)).status).toBe(204);
  });

  it('ignores archived flags, and lets any segment become global whoever uses it', async () => {
    const used = await segment();
    const archived = await flagUsing(projectA, used);
    await adminOk('DELETE', `/api/admin/projects/${projectA}/features/${archived}`);
    expect((await put(used, projectB)).status).toBe(204);

    await flagUsing(projectB, used);
    expect((await put(used, null)).status).toBe(204);
    expect(await count('SELECT count(*) AS n FROM segments WHERE id = ? AND segment_project_id IS NULL', used.id)).toBe(1);
    await flagUsing(projectA, used);
    expect((await put(used, undefined)).status).toBe(204);
    expect((await lastEvent('segment-updated'))?.project).toBeNull();
  });
});

describe('a segment in open change requests of another project', () => {
  const draftPath = `/api/admin/projects/:p/environments/${PROD}/change-requests`;
  const draft = async (body: unknown) => bodyOf(await adminOk('POST', draftPath.replace(':p', governed), body));

  it('counts as used there until the request is gone', async () => {
    const used = await segment();
    const flag = unique('segmove-cr');
    await adminOk('POST', `/api/admin/projects/${governed}/features`, { name: flag });
    const request = await draft({ feature: flag, action: 'addStrategy', payload: { name: 'default', segments: [used.id] } });
    await expectRefused(used, projectA, governed);
    expect((await put(used, governed)).status).toBe(204);

    await adminOk('PUT', `/api/admin/projects/${governed}/change-requests/${request.id}/state`, { state: 'Cancelled' });
    expect((await put(used, projectA)).status).toBe(204);
  });

  it('refuses a move drafted into a change request as the direct write, drafting nothing', async () => {
    const used = await segment();
    await flagUsing(projectA, used);
    const before = await count('SELECT count(*) AS n FROM change_request_changes');
    const refused = await expectError(
      await call('POST', draftPath.replace(':p', governed), {
        body: { feature: null, action: 'updateSegment', payload: { id: used.id, name: used.name, project: governed, constraints: [] } },
      }),
      400,
      'BadDataError',
    );
    expect(refused.details).toEqual([{ message: `${IN_USE}${projectA}` }]);
    expect(await count('SELECT count(*) AS n FROM change_request_changes')).toBe(before);
  });
});

describe('a segment and a strategy of another project meeting between the check and the write', () => {
  const db = getDb(env);
  const holder = { ...SYSTEM_ACTOR, access: ADMIN_ACCESS };

  it('a strategy taking the segment up meanwhile leaves the whole segment update unwritten, its event included', async () => {
    const used = await segment();
    const statements = await updateSegmentStatements(db, holder, used.id, { name: used.name, project: projectA, constraints: [] });
    await flagUsing(projectB, used);
    const before = await stored(used);
    await expect(runBatch(db, statements)).rejects.toThrow(/malformed JSON/);
    expect(await stored(used)).toBe(before);
  });

  it('the segment given another project meanwhile leaves the whole strategy write unwritten, its event included', async () => {
    const used = await segment();
    const flag = unique('segmove-race');
    await adminOk('POST', `/api/admin/projects/${projectB}/features`, { name: flag });
    const body = parseInput(StrategySchema, { name: 'default', segments: [used.id] }, '/body');
    const { statements } = await addStrategyStatements(db, holder, projectB, flag, DEV, body);
    await adminOk('PUT', `/api/admin/segments/${used.id}`, { name: used.name, project: projectA, constraints: [] });
    const written = () =>
      count(
        "SELECT (SELECT count(*) FROM feature_strategies WHERE feature_name = ?1) + (SELECT count(*) FROM events WHERE type = 'feature-strategy-add' AND feature_name = ?1) AS n",
        flag,
      );
    await expect(runBatch(db, statements)).rejects.toThrow(/malformed JSON/);
    expect(await written()).toBe(0);
  });
});

describe('a strategy given another project’s segment', () => {
  const strategies = (project: string, flag: string) => `/api/admin/projects/${project}/features/${flag}/environments/${DEV}/strategies`;
  const links = (flag: string) =>
    count(
      'SELECT count(*) AS n FROM feature_strategy_segment l JOIN feature_strategies s ON s.id = l.feature_strategy_id WHERE s.feature_name = ?',
      flag,
    );
  const strategyEvents = (flag: string) =>
    count("SELECT count(*) AS n FROM events WHERE type LIKE 'feature-strategy-%' AND feature_name = ?", flag);

  it('is refused on create, update and the segments call, in 6.10.1’s words, writing nothing', async () => {
    const own = await segment();
    const other = await segment();
    await adminOk('PUT', `/api/admin/segments/${own.id}`, { name: own.name, project: projectB, constraints: [] });
    await adminOk('PUT', `/api/admin/segments/${other.id}`, { name: other.name, project: projectA, constraints: [] });
    const global = await segment();
    const flag = unique('segmove-st');
    await adminOk('POST', `/api/admin/projects/${projectB}/features`, { name: flag });
    const strategy = await bodyOf(await adminOk('POST', strategies(projectB, flag), { name: 'default', segments: [global.id, own.id] }));
    const before = [await links(flag), await strategyEvents(flag)];
    const message = `The segment "${other.name}" with id ${other.id} does not belong to project "${projectB}".`;

    const refusals = [
      await call('POST', strategies(projectB, flag), { body: { name: 'default', segments: [own.id, other.id] } }),
      await call('PUT', `${strategies(projectB, flag)}/${strategy.id}`, { body: { name: 'default', segments: [other.id] } }),
      await call('POST', '/api/admin/segments/strategies', {
        body: { projectId: projectB, environmentId: DEV, strategyId: strategy.id, segmentIds: [global.id, other.id] },
      }),
    ];
    for (const response of refusals) {
      const refused = await expectError(response, 400, 'BadDataError');
      expect(refused.details).toEqual([{ message }]);
    }
    expect([await links(flag), await strategyEvents(flag)]).toEqual(before);
  });
});
