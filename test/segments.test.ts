import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { signInAs } from './support/users';
import { count } from './support/db';

const FEATURES = '/api/admin/projects/default/features';
let viewer: string;

beforeAll(async () => {
  viewer = await signInAs('Viewer');
});

async function stored(): Promise<string> {
  const links = await env.DB.prepare('SELECT * FROM feature_strategy_segment ORDER BY feature_strategy_id, segment_id').all();
  const segments = await env.DB.prepare('SELECT * FROM segments ORDER BY id').all();
  return JSON.stringify([links.results, segments.results]) + (await count('SELECT count(*) AS n FROM events'));
}

async function createSegment(name: string, project?: string) {
  const response = await call('POST', '/api/admin/segments', { body: { name, constraints: [], ...(project ? { project } : {}) } });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await bodyOf(response)).id as number;
}

async function flagWithStrategy(name: string, segments: number[] = [], environment = 'development') {
  if ((await call('GET', `${FEATURES}/${name}`)).status === 404)
    expect((await call('POST', FEATURES, { body: { name } })).status).toBe(201);
  const response = await call('POST', `${FEATURES}/${name}/environments/${environment}/strategies`, {
    body: { name: 'default', segments },
  });
  expect(response.status).toBe(200);
  return (await bodyOf(response)).id as string;
}

describe('POST /api/admin/segments/validate', () => {
  it('answers 204 for a free name and writes nothing', async () => {
    const before = await stored();
    const response = await call('POST', '/api/admin/segments/validate', { body: { name: 'free-name' }, token: viewer });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(await stored()).toBe(before);
  });

  it('answers 409 for a taken name and 400 for an empty or missing one', async () => {
    await createSegment('taken-seg');
    const taken = await expectError(
      await call('POST', '/api/admin/segments/validate', { body: { name: 'taken-seg' } }),
      409,
      'NameExistsError',
    );
    expect(taken.message).toBe('Segment name already exists');
    const empty = await expectError(await call('POST', '/api/admin/segments/validate', { body: { name: ' ' } }), 400, 'ValidationError');
    expect(empty.details).toEqual([{ message: 'Segment name cannot be empty' }]);
    await expectError(await call('POST', '/api/admin/segments/validate', { body: {} }), 400, 'ValidationError');
    await expectError(
      await call('POST', '/api/admin/segments/validate', { body: { name: 'x' }, token: null }),
      401,
      'AuthenticationRequired',
    );
  });
});

describe('GET /api/admin/segments (usage)', () => {
  it('lists segments by name, with the projects and active flags using each, in Unleash key order', async () => {
    const used = await createSegment('b-used');
    await createSegment('a-unused');
    await flagWithStrategy('seg-usage-1', [used]);
    await flagWithStrategy('seg-usage-1', [used], 'production');
    await flagWithStrategy('seg-usage-2', [used]);
    await flagWithStrategy('seg-usage-archived', [used]);
    expect((await call('DELETE', `${FEATURES}/seg-usage-archived`)).status).toBe(202);
    const { segments } = await bodyOf(await call('GET', '/api/admin/segments'));
    const names = segments.map((segment: { name: string }) => segment.name);
    expect(names).toEqual([...names].sort());
    const row = segments.find((segment: { id: number }) => segment.id === used);
    expect(Object.keys(row)).toEqual([
      'id',
      'name',
      'description',
      'constraints',
      'createdBy',
      'createdAt',
      'usedInProjects',
      'usedInFeatures',
    ]);
    expect(row).toMatchObject({ usedInProjects: 1, usedInFeatures: 2 });
    expect(segments.find((segment: { name: string }) => segment.name === 'a-unused')).toMatchObject({
      usedInProjects: 0,
      usedInFeatures: 0,
    });
  });
});

describe('segment shape', () => {
  it('names the project of a project segment after the description, as Unleash does', async () => {
    const id = await createSegment('project-seg', 'default');
    const segment = await bodyOf(await call('GET', `/api/admin/segments/${id}`));
    expect(Object.keys(segment)).toEqual(['id', 'name', 'description', 'project', 'constraints', 'createdBy', 'createdAt']);
    expect(segment.project).toBe('default');
  });
});

describe('GET /api/admin/segments/:id/strategies', () => {
  it('lists the strategies of active flags using the segment, none for an unknown one, 400 for a bad id', async () => {
    const id = await createSegment('listed-seg');
    const strategyId = await flagWithStrategy('seg-strategies', [id]);
    const response = await call('GET', `/api/admin/segments/${id}/strategies`, { token: viewer });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body).toEqual({
      strategies: [
        { id: strategyId, projectId: 'default', featureName: 'seg-strategies', strategyName: 'default', environment: 'development' },
      ],
      changeRequestStrategies: [],
    });
    expect(Object.keys(body.strategies[0])).toEqual(['id', 'projectId', 'featureName', 'strategyName', 'environment']);
    expect(await bodyOf(await call('GET', '/api/admin/segments/99999/strategies'))).toEqual({
      strategies: [],
      changeRequestStrategies: [],
    });
    await expectError(await call('GET', '/api/admin/segments/abc/strategies'), 400, 'ValidationError');
  });
});

describe('GET /api/admin/segments/strategies/:strategyId', () => {
  it('lists the segments a strategy uses, none for an unknown strategy', async () => {
    const one = await createSegment('of-strategy-1');
    const two = await createSegment('of-strategy-2');
    const strategyId = await flagWithStrategy('seg-of-strategy', [two, one]);
    const response = await call('GET', `/api/admin/segments/strategies/${strategyId}`, { token: viewer });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body.segments.map((segment: { id: number }) => segment.id)).toEqual([one, two]);
    expect(Object.keys(body.segments[0])).toEqual(['id', 'name', 'description', 'constraints', 'createdBy', 'createdAt']);
    expect(await bodyOf(await call('GET', '/api/admin/segments/strategies/no-such-strategy'))).toEqual({ segments: [] });
  });

  it('is not taken for a segment id', async () => {
    expect((await call('GET', '/api/admin/segments/strategies')).status).not.toBe(200);
  });
});

describe('POST /api/admin/segments/strategies', () => {
  it('replaces the strategy segments, answers 201 echoing the request, and records the event', async () => {
    const one = await createSegment('attach-1');
    const two = await createSegment('attach-2');
    const strategyId = await flagWithStrategy('seg-attach', [one]);
    const body = { projectId: 'default', environmentId: 'development', strategyId, segmentIds: [two] };
    const response = await call('POST', '/api/admin/segments/strategies', { body });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`strategies/${strategyId}`);
    expect(await bodyOf(response)).toEqual(body);
    const strategy = await bodyOf(await call('GET', `${FEATURES}/seg-attach/environments/development/strategies/${strategyId}`));
    expect(strategy.segments).toEqual([two]);
    const event = await env.DB.prepare("SELECT * FROM events WHERE type = 'feature-strategy-update' ORDER BY id DESC LIMIT 1").first<{
      data: string;
      pre_data: string;
      feature_name: string;
      environment: string;
    }>();
    expect(event).toMatchObject({ feature_name: 'seg-attach', environment: 'development' });
    expect(JSON.parse(event!.data).segments).toEqual([two]);
    expect(JSON.parse(event!.pre_data).segments).toEqual([one]);
  });

  it('refuses too many or unknown segments, a strategy elsewhere, a caller without the permission, writing nothing', async () => {
    const ids = [];
    for (let index = 0; index < 6; index++) ids.push(await createSegment(`many-${index}`));
    const strategyId = await flagWithStrategy('seg-refused');
    const before = await stored();
    const post = (body: Record<string, unknown>, token?: string) =>
      call('POST', '/api/admin/segments/strategies', {
        body: { projectId: 'default', environmentId: 'development', strategyId, segmentIds: [], ...body },
        ...(token ? { token } : {}),
      });
    const tooMany = await expectError(await post({ segmentIds: ids }), 400, 'BadDataError');
    expect(tooMany.details).toEqual([{ message: 'Strategies may not have more than 5 segments' }]);
    await expectError(await post({ segmentIds: [99999] }), 400, 'ValidationError');
    await expectError(await post({ segmentIds: undefined }), 400, 'ValidationError');
    await expectError(await post({ environmentId: 'production' }), 404, 'NotFoundError');
    await expectError(await post({ strategyId: 'nope' }), 404, 'NotFoundError');
    await expectError(await post({}, viewer), 403, 'NoAccessError');
    expect(await stored()).toBe(before);
  });
});

describe('DELETE /api/admin/segments/:id', () => {
  it('answers 204 with no body and records the event', async () => {
    const id = await createSegment('deleted-seg');
    const response = await call('DELETE', `/api/admin/segments/${id}`);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'segment-deleted' AND json_extract(pre_data, '$.id') = ?", id)).toBe(
      1,
    );
  });

  it('deletes a segment only archived flags use; refuses one in use (409) and an unknown one (404), writing nothing', async () => {
    const archivedOnly = await createSegment('archived-only');
    await flagWithStrategy('seg-del-archived', [archivedOnly]);
    expect((await call('DELETE', `${FEATURES}/seg-del-archived`)).status).toBe(202);
    expect((await call('DELETE', `/api/admin/segments/${archivedOnly}`)).status).toBe(204);

    const used = await createSegment('in-use');
    await flagWithStrategy('seg-del-used', [used]);
    const before = await stored();
    await expectError(await call('DELETE', `/api/admin/segments/${used}`), 409, 'SegmentInUseError');
    const missing = await expectError(await call('DELETE', '/api/admin/segments/99999'), 404, 'NotFoundError');
    expect(missing.message).toBe('No segment exists with ID "99999"');
    await expectError(await call('DELETE', `/api/admin/segments/${used}`, { token: viewer }), 403, 'NoAccessError');
    expect(await stored()).toBe(before);
  });
});
