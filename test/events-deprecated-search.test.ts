import { beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createFeature } from './support/admin';
import { count } from './support/db';
import { call, expectError } from './support/http';
import { unique } from './support/names';
import { signInAs } from './support/users';

const SEARCH = '/api/admin/events/search';
let viewer: string;

beforeAll(async () => {
  viewer = await signInAs('Viewer');
});

async function search(body: unknown, token?: string) {
  const response = await call('POST', SEARCH, { body, ...(token === undefined ? {} : { token }) });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text);
}

describe('POST /api/admin/events/search (deprecated)', () => {
  it("answers a flag's events newest first in Unleash's shape and key order", async () => {
    const flag = unique('ev-search');
    await createFeature(flag);
    await adminOk('POST', `/api/admin/features/${flag}/tags`, { type: 'simple', value: 'searched' });
    const body = await search({ feature: flag }, viewer);
    expect(Object.keys(body)).toEqual(['version', 'events', 'totalEvents']);
    expect(body.version).toBe(1);
    expect(body.events.map((event: { type: string }) => event.type)).toEqual(['feature-tagged', 'feature-created']);
    expect(body.totalEvents).toBe(2);
    expect(Object.keys(body.events[0])).toEqual([
      'id',
      'type',
      'createdBy',
      'createdAt',
      'createdByUserId',
      'data',
      'preData',
      'tags',
      'featureName',
      'project',
      'environment',
    ]);
    expect(body.events[1]).toMatchObject({ featureName: flag, project: 'default', tags: [{ value: 'searched', type: 'simple' }] });
  });

  it('filters by type and project, pages with limit and offset, and counts without the free text', async () => {
    const flag = unique('ev-page');
    await createFeature(flag);
    await adminOk('POST', `/api/admin/features/${flag}/tags`, { type: 'simple', value: 'first-tag' });
    await adminOk('POST', `/api/admin/features/${flag}/tags`, { type: 'simple', value: 'second-tag' });
    const tagged = await search({ feature: flag, type: 'feature-tagged' });
    expect(tagged.events.map((event: { data: { value: string } }) => event.data.value)).toEqual(['second-tag', 'first-tag']);
    const page = await search({ feature: flag, type: 'feature-tagged', limit: 1, offset: 1 });
    expect(page.events.map((event: { data: { value: string } }) => event.data.value)).toEqual(['first-tag']);
    expect(page.totalEvents).toBe(2);
    // Free text matches the type, who acted and the data, case-insensitively; the total ignores it.
    const text = await search({ feature: flag, query: 'SECOND-TAG' });
    expect(text.events.map((event: { data: { value?: string } }) => event.data.value)).toEqual(['second-tag']);
    expect(text.totalEvents).toBe(3);
    expect((await search({ feature: flag, query: 'FEATURE-CREATED' })).events).toHaveLength(1);
    expect((await search({ project: 'no-such-project' })).events).toEqual([]);
    const all = await search({});
    expect(all.events.length).toBeLessThanOrEqual(100);
    expect(all.totalEvents).toBe(await count('SELECT count(*) AS n FROM events'));
  });

  it('refuses bad input with 400 and a missing credential with 401, writing nothing', async () => {
    const before = await count('SELECT count(*) AS n FROM events');
    const type = await expectError(await call('POST', SEARCH, { body: { type: 'bogus' } }), 400, 'ValidationError');
    expect(type.details[0]).toMatchObject({ path: '/body/type' });
    const limit = await expectError(await call('POST', SEARCH, { body: { limit: 0 } }), 400, 'ValidationError');
    expect(limit.details[0]).toMatchObject({ path: '/body/limit' });
    await expectError(await call('POST', SEARCH, { body: { limit: 101 } }), 400, 'ValidationError');
    await expectError(await call('POST', SEARCH, { body: { offset: -1 } }), 400, 'ValidationError');
    await expectError(await call('POST', SEARCH, { body: [] }), 400, 'ValidationError');
    await expectError(await call('POST', SEARCH, { token: null, body: {} }), 401, 'AuthenticationRequired');
    expect(await count('SELECT count(*) AS n FROM events')).toBe(before);
  });
});
