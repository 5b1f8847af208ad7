/** Tags and tag types: creating, reading and deleting them, and tagging flags one or many at a time. */
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { signInAs } from './support/users';
import { count, eventsSince } from './support/db';
import { createProject } from './support/admin';
import { maxEventId } from './support/import';
import { unique } from './support/names';

let viewer: string;
const PROJECT = unique('tagproj');

async function createFeature(name: string, project = 'default') {
  const response = await call('POST', `/api/admin/projects/${project}/features`, { body: { name } });
  if (response.status !== 201) throw new Error(`create ${name}: ${response.status} ${await response.text()}`);
}

beforeAll(async () => {
  viewer = await signInAs('Viewer');
  await createProject(PROJECT);
});

describe('POST /api/admin/tags', () => {
  it('creates a tag (201, trimmed, with its location) and records tag-created', async () => {
    const value = unique('t');
    const before = await maxEventId();
    const response = await call('POST', '/api/admin/tags', { body: { type: 'simple', value: `  ${value} ` } });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`tags/simple/${value}`);
    const body = await bodyOf(response);
    expect(body).toEqual({ version: 1, tag: { type: 'simple', value } });
    expect(Object.keys(body)).toEqual(['version', 'tag']);
    expect(Object.keys(body.tag)).toEqual(['type', 'value']);
    const events = await eventsSince(before);
    expect(events.map((event) => [event.type, JSON.parse(event.data!)])).toEqual([['tag-created', { type: 'simple', value }]]);
  });

  it('refuses a duplicate (409), an unknown type and a too short value (400), and no credential (401); writes nothing', async () => {
    const value = unique('dup');
    expect((await call('POST', '/api/admin/tags', { body: { type: 'simple', value } })).status).toBe(201);
    const before = await maxEventId();
    await expectError(await call('POST', '/api/admin/tags', { body: { type: 'simple', value } }), 409, 'NameExistsError');
    const unknown = await expectError(await call('POST', '/api/admin/tags', { body: { type: 'nosuch', value } }), 400, 'ValidationError');
    expect(unknown.details[0]!.message).toBe("Tag type 'nosuch' does not exist");
    await expectError(await call('POST', '/api/admin/tags', { body: { type: 'simple', value: 'x' } }), 400, 'ValidationError');
    await expectError(await call('POST', '/api/admin/tags', { body: { value: 'abc' } }), 400, 'ValidationError');
    await expectError(
      await call('POST', '/api/admin/tags', { token: null, body: { type: 'simple', value: 'zz' } }),
      401,
      'AuthenticationRequired',
    );
    expect(await maxEventId()).toBe(before);
    expect(await count("SELECT count(*) AS n FROM tags WHERE type = 'nosuch'")).toBe(0);
  });
});

describe('GET /api/admin/tags/:type/:value', () => {
  it('answers the tag, or 404 with Unleash’s message', async () => {
    const value = unique('get');
    await call('POST', '/api/admin/tags', { body: { type: 'simple', value } });
    const response = await call('GET', `/api/admin/tags/simple/${value}`);
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({ version: 1, tag: { type: 'simple', value } });
    const missing = await expectError(await call('GET', '/api/admin/tags/simple/nope-nope'), 404, 'NotFoundError');
    expect(missing.message).toBe('No tag with type: [simple] and value [nope-nope]');
  });
});

describe('DELETE /api/admin/tags/:type/:value', () => {
  it('deletes the tag and removes it from every flag, with tag-deleted', async () => {
    const value = unique('del');
    const flag = unique('del-flag');
    await createFeature(flag);
    expect((await call('POST', `/api/admin/features/${flag}/tags`, { body: { type: 'simple', value } })).status).toBe(201);
    const before = await maxEventId();
    const response = await call('DELETE', `/api/admin/tags/simple/${value}`);
    expect(response.status).toBe(200);
    expect(await bodyOf(await call('GET', `/api/admin/features/${flag}/tags`))).toEqual({ version: 1, tags: [] });
    expect((await call('GET', `/api/admin/tags/simple/${value}`)).status).toBe(404);
    const events = await eventsSince(before);
    expect(events.map((event) => [event.type, JSON.parse(event.data!)])).toEqual([['tag-deleted', { type: 'simple', value }]]);
  });

  it('refuses a viewer (403) and deletes nothing', async () => {
    const value = unique('keep');
    await call('POST', '/api/admin/tags', { body: { type: 'simple', value } });
    const before = await maxEventId();
    await expectError(await call('DELETE', `/api/admin/tags/simple/${value}`, { token: viewer }), 403, 'NoAccessError');
    expect((await call('GET', `/api/admin/tags/simple/${value}`)).status).toBe(200);
    expect(await maxEventId()).toBe(before);
  });
});

describe('PUT /api/admin/features/:featureName/tags', () => {
  it('adds then removes in one call and answers the flag’s tags with their colours', async () => {
    const flag = unique('multi');
    const [a, b, c] = [unique('a'), unique('b'), unique('c')];
    await createFeature(flag);
    const first = await call('PUT', `/api/admin/features/${flag}/tags`, {
      body: {
        addedTags: [
          { type: 'simple', value: a },
          { type: 'simple', value: b },
        ],
        removedTags: [],
      },
    });
    expect(first.status).toBe(200);
    expect(await bodyOf(first)).toEqual({
      version: 1,
      tags: [
        { type: 'simple', value: a, color: '#FFFFFF' },
        { type: 'simple', value: b, color: '#FFFFFF' },
      ],
    });
    const before = await maxEventId();
    const second = await call('PUT', `/api/admin/features/${flag}/tags`, {
      body: { addedTags: [{ type: 'simple', value: c }], removedTags: [{ type: 'simple', value: a }] },
    });
    const body = await bodyOf(second);
    expect(body.tags.map((tag: { value: string }) => tag.value)).toEqual([b, c]);
    expect(Object.keys(body.tags[0])).toEqual(['type', 'value', 'color']);
    const events = await eventsSince(before);
    expect(events.map((event) => [event.type, event.feature_name, event.project])).toEqual([
      ['tag-created', null, null],
      ['feature-tagged', flag, 'default'],
      ['feature-untagged', flag, 'default'],
    ]);
    expect(JSON.parse(events[2]!.pre_data!)).toEqual({ type: 'simple', value: a });
  });

  it('refuses an unknown tag type (400), a missing list (400), an unknown flag (404) and a viewer (403), writing nothing', async () => {
    const flag = unique('multi-bad');
    await createFeature(flag);
    const before = await maxEventId();
    const unknown = await expectError(
      await call('PUT', `/api/admin/features/${flag}/tags`, {
        body: {
          addedTags: [
            { type: 'simple', value: 'okay-1' },
            { type: 'nosuch', value: 'okay-2' },
          ],
          removedTags: [],
        },
      }),
      400,
      'ValidationError',
    );
    expect(unknown.details[0]!.message).toBe("Tag type 'nosuch' does not exist");
    await expectError(await call('PUT', `/api/admin/features/${flag}/tags`, { body: { addedTags: [] } }), 400, 'ValidationError');
    const missing = await expectError(
      await call('PUT', '/api/admin/features/no-such-flag/tags', { body: { addedTags: [], removedTags: [] } }),
      404,
      'NotFoundError',
    );
    expect(missing.message).toBe('Could not find feature with name no-such-flag');
    await expectError(
      await call('PUT', `/api/admin/features/${flag}/tags`, {
        token: viewer,
        body: { addedTags: [{ type: 'simple', value: 'okay-1' }], removedTags: [] },
      }),
      403,
      'NoAccessError',
    );
    expect(await maxEventId()).toBe(before);
    expect(await count('SELECT count(*) AS n FROM feature_tag WHERE feature_name = ?', flag)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM tags WHERE value = 'okay-1'")).toBe(0);
  });
});

describe('PUT /api/admin/projects/:projectId/tags', () => {
  it('tags and untags several flags of the project at once', async () => {
    const [f1, f2] = [unique('bulk1'), unique('bulk2')];
    const [keep, drop] = [unique('keep'), unique('drop')];
    await createFeature(f1, PROJECT);
    await createFeature(f2, PROJECT);
    await call('PUT', `/api/admin/features/${f1}/tags`, { body: { addedTags: [{ type: 'simple', value: drop }], removedTags: [] } });
    const before = await maxEventId();
    const response = await call('PUT', `/api/admin/projects/${PROJECT}/tags`, {
      body: { features: [f1, f2], tags: { addedTags: [{ type: 'simple', value: keep }], removedTags: [{ type: 'simple', value: drop }] } },
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    for (const flag of [f1, f2]) {
      const tags = (await bodyOf(await call('GET', `/api/admin/features/${flag}/tags`))).tags;
      expect(tags).toEqual([{ type: 'simple', value: keep, color: '#FFFFFF' }]);
    }
    const events = await eventsSince(before);
    expect(events.map((event) => [event.type, event.feature_name])).toEqual([
      ['tag-created', null],
      ['feature-tagged', f1],
      ['feature-tagged', f2],
      ['feature-untagged', f1],
      ['feature-untagged', f2],
    ]);
  });

  it('refuses flags outside the project (404), a viewer (403) and bad bodies (400), all or nothing', async () => {
    const [mine, other] = [unique('mine'), unique('other')];
    await createFeature(mine, PROJECT);
    await createFeature(other);
    const before = await maxEventId();
    const body = { features: [mine, other], tags: { addedTags: [{ type: 'simple', value: 'bulk-refused' }], removedTags: [] } };
    const outside = await expectError(await call('PUT', `/api/admin/projects/${PROJECT}/tags`, { body }), 404, 'NotFoundError');
    expect(outside.message).toBe(`These feature flags do not exist in project ${PROJECT}: ${other}`);
    await expectError(
      await call('PUT', `/api/admin/projects/${PROJECT}/tags`, { token: viewer, body: { ...body, features: [mine] } }),
      403,
      'NoAccessError',
    );
    await expectError(await call('PUT', `/api/admin/projects/${PROJECT}/tags`, { body: { features: [mine] } }), 400, 'ValidationError');
    expect(await maxEventId()).toBe(before);
    expect(await count('SELECT count(*) AS n FROM feature_tag WHERE feature_name IN (?, ?)', mine, other)).toBe(0);
  });
});

describe('POST /api/admin/tag-types/validate', () => {
  it('answers valid with the tag type sent, and writes nothing', async () => {
    const name = unique('tt');
    const before = await maxEventId();
    const response = await call('POST', '/api/admin/tag-types/validate', {
      body: { name, description: 'd', icon: null, color: '#FFFFFF' },
    });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body).toEqual({ valid: true, tagType: { name, description: 'd', icon: null, color: '#FFFFFF' } });
    expect(Object.keys(body)).toEqual(['valid', 'tagType']);
    expect(await maxEventId()).toBe(before);
    expect(await count('SELECT count(*) AS n FROM tag_types WHERE name = ?', name)).toBe(0);
  });

  it('refuses a taken name (409) and a name that is not URL friendly or missing (400)', async () => {
    const taken = await expectError(
      await call('POST', '/api/admin/tag-types/validate', { body: { name: 'simple' } }),
      409,
      'NameExistsError',
    );
    expect(taken.message).toBe('There already exists a tag-type with the name simple');
    await expectError(await call('POST', '/api/admin/tag-types/validate', { body: { name: 'a b' } }), 400, 'ValidationError');
    await expectError(await call('POST', '/api/admin/tag-types/validate', { body: {} }), 400, 'ValidationError');
  });
});

describe('PUT /api/admin/tag-types/:name', () => {
  it('changes only the fields sent, with tag-type-updated', async () => {
    const name = unique('tt-up');
    expect((await call('POST', '/api/admin/tag-types', { body: { name, description: 'd' } })).status).toBe(201);
    const before = await maxEventId();
    const response = await call('PUT', `/api/admin/tag-types/${name}`, { body: { description: 'd2', color: '#00FF00' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    await call('PUT', `/api/admin/tag-types/${name}`, { body: { icon: 'x' } });
    expect(await bodyOf(await call('GET', `/api/admin/tag-types/${name}`))).toEqual({
      version: 1,
      tagType: { name, description: 'd2', icon: 'x', color: '#00FF00' },
    });
    const events = await eventsSince(before);
    expect(events.map((event) => [event.type, JSON.parse(event.data!)])).toEqual([
      ['tag-type-updated', { name, description: 'd2', color: '#00FF00' }],
      ['tag-type-updated', { name, icon: 'x' }],
    ]);
  });

  it('refuses a bad colour (400), an unknown type (404) and a viewer (403), writing nothing', async () => {
    const name = unique('tt-bad');
    await call('POST', '/api/admin/tag-types', { body: { name, description: 'd' } });
    const before = await maxEventId();
    await expectError(await call('PUT', `/api/admin/tag-types/${name}`, { body: { color: 'red' } }), 400, 'ValidationError');
    const missing = await expectError(
      await call('PUT', '/api/admin/tag-types/no-such-type', { body: { description: 'x' } }),
      404,
      'NotFoundError',
    );
    expect(missing.message).toBe('Could not find tag-type');
    await expectError(
      await call('PUT', `/api/admin/tag-types/${name}`, { token: viewer, body: { description: 'x' } }),
      403,
      'NoAccessError',
    );
    expect(await maxEventId()).toBe(before);
    expect((await bodyOf(await call('GET', `/api/admin/tag-types/${name}`))).tagType.description).toBe('d');
  });
});

describe('DELETE /api/admin/tag-types/:name', () => {
  it('deletes the type, its tags and their uses, with tag-type-deleted', async () => {
    const name = unique('tt-del');
    const flag = unique('tt-del-flag');
    await call('POST', '/api/admin/tag-types', { body: { name, description: 'd' } });
    await createFeature(flag);
    await call('POST', `/api/admin/features/${flag}/tags`, { body: { type: name, value: 'gone' } });
    const before = await maxEventId();
    expect((await call('DELETE', `/api/admin/tag-types/${name}`)).status).toBe(200);
    expect((await call('GET', `/api/admin/tag-types/${name}`)).status).toBe(404);
    expect(await count('SELECT count(*) AS n FROM tags WHERE type = ?', name)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM feature_tag WHERE tag_type = ?', name)).toBe(0);
    const events = await eventsSince(before);
    expect(events.map((event) => [event.type, JSON.parse(event.pre_data!)])).toEqual([
      ['tag-type-deleted', { name, description: 'd', icon: null, color: null }],
    ]);
  });

  it('refuses an unknown type (404) and a viewer (403), deleting nothing', async () => {
    await expectError(await call('DELETE', '/api/admin/tag-types/no-such-type'), 404, 'NotFoundError');
    const before = await maxEventId();
    await expectError(await call('DELETE', '/api/admin/tag-types/simple', { token: viewer }), 403, 'NoAccessError');
    expect(await maxEventId()).toBe(before);
    expect((await call('GET', '/api/admin/tag-types/simple')).status).toBe(200);
  });
});

describe('GET /api/admin/features/:featureName/tags', () => {
  it("answers 404 for an unknown flag with 6.10.1's message for this read", async () => {
    const name = unique('no-such-flag');
    const error = await expectError(await call('GET', `/api/admin/features/${name}/tags`), 404, 'NotFoundError');
    expect(error.message).toBe(`Could not find feature with name ${name}`);
  });
});
