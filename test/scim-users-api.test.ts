import { beforeAll, describe, expect, it } from 'vitest';
import { createUser } from './support/auth';
import { count, lastEvent, parsedEvent, rows } from './support/db';
import { bodyOf, call } from './support/http';
import { unique } from './support/names';
import { enableScim, expectScimError, LIST_RESPONSE, oktaUser, PATCH_OP, scim, SCIM_USER } from './support/scim';

let token: string;
beforeAll(async () => {
  token = await enableScim();
});

const address = (prefix: string) => `${unique(prefix)}@example.com`;
const filter = (text: string) => `/Users?filter=${encodeURIComponent(text)}`;
const footprint = async () => ({
  users: await count('SELECT count(*) AS n FROM users'),
  events: await count('SELECT count(*) AS n FROM events'),
});

async function provision(userName = address('ada'), extra: Record<string, unknown> = {}) {
  const response = await scim(token, 'POST', '/Users', oktaUser(userName, extra));
  expect(response.status).toBe(201);
  return bodyOf(response);
}

describe('POST /scim/v2/Users', () => {
  it('creates a Viewer with 201, Location, application/scim+json and a user-created event', async () => {
    const userName = address('create');
    const response = await scim(token, 'POST', '/Users', oktaUser(userName, { externalId: 'okta-00u1' }));
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toBe('application/scim+json');
    const user = await bodyOf(response);
    expect(response.headers.get('location')).toBe(`http://localhost/scim/v2/Users/${user.id}`);
    expect(user).toEqual({
      schemas: [SCIM_USER],
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      externalId: 'okta-00u1',
      userName,
      name: { formatted: 'Ada Lovelace' },
      displayName: 'Ada Lovelace',
      emails: [{ value: userName, type: 'work', primary: true }],
      active: true,
      meta: {
        resourceType: 'User',
        created: expect.any(String),
        lastModified: expect.any(String),
        location: response.headers.get('location'),
      },
    });
    const [stored] = await rows<{ id: number; username: string; email: string; role: number }>(
      "SELECT u.id, u.username, u.email, ru.role_id AS role FROM users u JOIN role_user ru ON ru.user_id = u.id WHERE u.scim_id = ? AND ru.project = 'default'",
      user.id,
    );
    expect(stored).toMatchObject({ username: userName, email: userName, role: 3 });
    expect(parsedEvent(await lastEvent('user-created'))).toMatchObject({
      createdBy: 'scim',
      data: { id: stored!.id, name: 'Ada Lovelace', username: userName, email: userName, active: true, rootRole: 3 },
    });
  });

  it('answers 409 uniqueness for a taken userName (any case) or email, writing nothing', async () => {
    const userName = address('taken');
    await provision(userName);
    const before = await footprint();
    await expectScimError(await scim(token, 'POST', '/Users', oktaUser(userName.toUpperCase())), 409, 'uniqueness');
    await expectScimError(
      await scim(token, 'POST', '/Users', oktaUser(address('other'), { emails: [{ value: userName, primary: true }] })),
      409,
      'uniqueness',
    );
    // A person made by hand holds their identity too, unless SCIM may take over existing people.
    const local = await createUser('Viewer', { email: address('local') });
    const { email } = (await rows<{ email: string }>('SELECT email FROM users WHERE id = ?', local.id))[0]!;
    const after = await footprint();
    await expectScimError(await scim(token, 'POST', '/Users', oktaUser(email)), 409, 'uniqueness');
    expect(await footprint()).toEqual(after);
    expect(after.users).toBe(before.users + 1);
  });

  it('takes over an existing person when assumeControlOfExisting is on', async () => {
    const local = await createUser('Editor', { email: address('existing') });
    const { email } = (await rows<{ email: string }>('SELECT email FROM users WHERE id = ?', local.id))[0]!;
    await call('POST', '/api/admin/scim-settings', { body: { enabled: true, assumeControlOfExisting: true } });
    try {
      const response = await scim(token, 'POST', '/Users', oktaUser(email));
      expect(response.status).toBe(201);
      const user = await bodyOf(response);
      const [row] = await rows<{ id: number; username: string }>('SELECT id, username FROM users WHERE scim_id = ?', user.id);
      expect(row).toEqual({ id: local.id, username: email });
      // Their root role stays.
      expect(await count("SELECT count(*) AS n FROM role_user WHERE user_id = ? AND role_id = 2 AND project = 'default'", local.id)).toBe(
        1,
      );
    } finally {
      await call('POST', '/api/admin/scim-settings', { body: { enabled: true, assumeControlOfExisting: false } });
    }
  });

  it('answers 400 for a body that is not a User, is not JSON, or has a bad value, writing nothing', async () => {
    const before = await footprint();
    await expectScimError(await scim(token, 'POST', '/Users', { schemas: [SCIM_USER], displayName: 'No name' }), 400, 'invalidValue');
    await expectScimError(await scim(token, 'POST', '/Users', oktaUser(address('x'), { active: 'maybe' })), 400, 'invalidValue');
    await expectScimError(
      await scim(token, 'POST', '/Users', oktaUser(address('x'), { emails: [{ value: 'not-an-address' }] })),
      400,
      'invalidValue',
    );
    await expectScimError(await scim(token, 'POST', '/Users', oktaUser('x'.repeat(300))), 400, 'invalidValue');
    await expectScimError(await scim(token, 'POST', '/Users', oktaUser('nul\u0000name')), 400, 'invalidValue');
    await expectScimError(await scim(token, 'POST', '/Users', [1, 2]), 400, 'invalidValue');
    await expectScimError(
      await scim(token, 'POST', '/Users', undefined, { rawBody: '{"userName":', contentType: 'application/scim+json' }),
      400,
      'invalidSyntax',
    );
    await expectScimError(await scim(token, 'POST', '/Users', undefined, { rawBody: 'userName=a', contentType: 'text/plain' }), 415);
    await expectScimError(await scim(null, 'POST', '/Users', oktaUser(address('anon'))), 401);
    expect(await footprint()).toEqual(before);
  });

  it('takes application/json bodies too, and Entra ID’s shape (no primary, a work email, externalId)', async () => {
    const userName = address('entra');
    const response = await call('POST', '/scim/v2/Users', {
      token: `Bearer ${token}`,
      body: {
        schemas: [SCIM_USER, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
        externalId: 'e1d2',
        userName,
        active: 'True',
        emails: [{ type: 'work', value: userName.toUpperCase() }],
        name: { givenName: 'Grace', familyName: 'Hopper' },
        'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Navy' },
      },
    });
    expect(response.status).toBe(201);
    expect(await bodyOf(response)).toMatchObject({ userName, displayName: 'Grace Hopper', emails: [{ value: userName }], active: true });
  });
});

describe('GET /scim/v2/Users', () => {
  it('filters by userName (case-insensitive), externalId, emails, active, with and/or', async () => {
    const userName = address('filter');
    const user = await provision(userName, { externalId: `ext-${userName}` });
    const ids = async (text: string) =>
      (await bodyOf(await scim(token, 'GET', filter(text)))).Resources.map((found: { id: string }) => found.id);
    expect(await ids(`userName eq "${userName.toUpperCase()}"`)).toEqual([user.id]);
    expect(await ids(`externalId eq "ext-${userName}"`)).toEqual([user.id]);
    expect(await ids(`externalId eq "EXT-${userName}"`)).toEqual([]);
    expect(await ids(`emails[type eq "work"].value eq "${userName}"`)).toEqual([user.id]);
    expect(await ids(`emails[type eq "home"].value eq "${userName}"`)).toEqual([]);
    expect(await ids(`emails.value eq "${userName}"`)).toEqual([user.id]);
    expect(await ids(`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "${userName}"`)).toEqual([user.id]);
    expect(await ids(`userName eq "${userName}" and active eq true`)).toEqual([user.id]);
    expect(await ids(`userName eq "${userName}" and active eq false`)).toEqual([]);
    expect(await ids(`(userName eq "nobody@example.com" or id eq "${user.id}")`)).toEqual([user.id]);
    expect(await ids(`userName sw "${userName.slice(0, -12)}"`)).toEqual([user.id]);
    expect(await ids(`userName co "%"`)).toEqual([]);
    expect(await ids('userName eq "nobody@example.com"')).toEqual([]);
  });

  it('answers 400 invalidFilter for a filter it cannot read or an attribute it does not filter on', async () => {
    for (const text of [
      'userName eq',
      'userName eq "x" and',
      'title eq "x"',
      'userName xx "x"',
      '(userName eq "x"',
      'userName eq "x',
      `${'('.repeat(40)}userName eq "x"${')'.repeat(40)}`,
    ]) {
      await expectScimError(await scim(token, 'GET', filter(text)), 400, 'invalidFilter');
    }
    await expectScimError(await scim(token, 'GET', '/Users?startIndex=abc'), 400, 'invalidValue');
  });

  it('pages with startIndex and count, reporting totalResults', async () => {
    const prefix = unique('page');
    for (let index = 0; index < 5; index++) await provision(`${prefix}-${index}@example.com`);
    const page = async (query: string) => bodyOf(await scim(token, 'GET', `${filter(`userName sw "${prefix}"`)}&${query}`));
    const first = await page('startIndex=1&count=2');
    expect({ ...first, Resources: first.Resources.map((user: { userName: string }) => user.userName) }).toEqual({
      schemas: [LIST_RESPONSE],
      totalResults: 5,
      itemsPerPage: 2,
      startIndex: 1,
      Resources: [`${prefix}-0@example.com`, `${prefix}-1@example.com`],
    });
    expect((await page('startIndex=5&count=2')).Resources.map((user: { userName: string }) => user.userName)).toEqual([
      `${prefix}-4@example.com`,
    ]);
    const counted = await page('count=0');
    expect([counted.totalResults, counted.Resources]).toEqual([5, []]);
    expect((await page('startIndex=0&count=-3')).startIndex).toBe(1);
  });

  it('returns only the attributes asked for', async () => {
    const user = await provision();
    const only = await bodyOf(await scim(token, 'GET', `/Users/${user.id}?attributes=userName`));
    expect(Object.keys(only)).toEqual(['schemas', 'id', 'userName']);
    const without = await bodyOf(await scim(token, 'GET', `/Users/${user.id}?excludedAttributes=emails,meta`));
    expect(Object.keys(without)).not.toContain('emails');
  });
});

describe('GET /scim/v2/Users/:id', () => {
  it('answers the User, and 404 for an unknown id', async () => {
    const user = await provision();
    expect(await bodyOf(await scim(token, 'GET', `/Users/${user.id}`))).toEqual(user);
    await expectScimError(await scim(token, 'GET', '/Users/00000000-0000-4000-8000-000000000000'), 404);
  });
});

describe('PUT /scim/v2/Users/:id', () => {
  it('replaces the attributes with a user-updated event', async () => {
    const user = await provision();
    const userName = address('renamed');
    const response = await scim(token, 'PUT', `/Users/${user.id}`, {
      schemas: [SCIM_USER],
      userName,
      displayName: 'Ada King',
      externalId: 'x-1',
    });
    expect(response.status).toBe(200);
    const replaced = await bodyOf(response);
    expect(replaced).toMatchObject({
      id: user.id,
      userName,
      displayName: 'Ada King',
      externalId: 'x-1',
      emails: [{ value: userName }],
      active: true,
    });
    expect(await bodyOf(await scim(token, 'GET', `/Users/${user.id}`))).toMatchObject({ userName, displayName: 'Ada King' });
    expect(parsedEvent(await lastEvent('user-updated'))).toMatchObject({
      data: { username: userName, name: 'Ada King' },
      preData: { username: user.userName },
    });
  });

  it('answers 404 and 409 writing nothing', async () => {
    const one = await provision();
    const two = await provision();
    const before = await footprint();
    await expectScimError(await scim(token, 'PUT', '/Users/nope', oktaUser(address('x'))), 404);
    await expectScimError(await scim(token, 'PUT', `/Users/${two.id}`, oktaUser(one.userName)), 409, 'uniqueness');
    expect(await footprint()).toEqual(before);
    expect((await bodyOf(await scim(token, 'GET', `/Users/${two.id}`))).userName).toBe(two.userName);
  });
});

describe('PATCH /scim/v2/Users/:id', () => {
  const patch = (operations: unknown[]) => ({ schemas: [PATCH_OP], Operations: operations });

  it("applies Okta's replace without a path and Entra ID's path forms", async () => {
    const user = await provision();
    const entra = await scim(
      token,
      'PATCH',
      `/Users/${user.id}`,
      patch([
        { op: 'Replace', path: 'displayName', value: 'Countess Lovelace' },
        { op: 'Add', path: 'emails[type eq "work"].value', value: 'countess@example.com' },
        { op: 'Replace', path: 'externalId', value: 'entra-9' },
        { op: 'Add', path: 'title', value: 'Analyst' },
        { op: 'Add', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'Maths' },
      ]),
    );
    expect(entra.status).toBe(200);
    expect(await bodyOf(entra)).toMatchObject({
      displayName: 'Countess Lovelace',
      emails: [{ value: 'countess@example.com' }],
      externalId: 'entra-9',
    });
    const okta = await scim(
      token,
      'PATCH',
      `/Users/${user.id}`,
      patch([{ op: 'replace', value: { active: false, 'name.givenName': 'Augusta' } }]),
    );
    // A given name alone replaces the first word of the name kept.
    expect(await bodyOf(okta)).toMatchObject({ active: false, displayName: 'Augusta Lovelace' });
    const names = await scim(
      token,
      'PATCH',
      `/Users/${user.id}`,
      patch([
        { op: 'replace', path: 'name.familyName', value: 'King' },
        { op: 'replace', path: 'active', value: 'True' },
      ]),
    );
    expect(await bodyOf(names)).toMatchObject({ active: true, displayName: 'Augusta King' });
    const removed = await scim(token, 'PATCH', `/Users/${user.id}`, patch([{ op: 'remove', path: 'externalId' }]));
    expect((await bodyOf(removed)).externalId).toBeUndefined();
  });

  it('refuses bad operations with 400, unknown ids with 404, writing nothing', async () => {
    const user = await provision();
    const other = await provision();
    const before = await footprint();
    await expectScimError(await scim(token, 'PATCH', `/Users/${user.id}`, { schemas: [PATCH_OP] }), 400, 'invalidSyntax');
    await expectScimError(
      await scim(token, 'PATCH', `/Users/${user.id}`, patch([{ op: 'move', path: 'active', value: false }])),
      400,
      'invalidSyntax',
    );
    await expectScimError(await scim(token, 'PATCH', `/Users/${user.id}`, patch([{ op: 'remove' }])), 400, 'noTarget');
    await expectScimError(await scim(token, 'PATCH', `/Users/${user.id}`, patch([{ op: 'remove', path: 'userName' }])), 400, 'mutability');
    await expectScimError(
      await scim(token, 'PATCH', `/Users/${user.id}`, patch([{ op: 'replace', path: 'active', value: 'nope' }])),
      400,
      'invalidValue',
    );
    // A good operation before a bad one is not applied either.
    await expectScimError(
      await scim(
        token,
        'PATCH',
        `/Users/${user.id}`,
        patch([
          { op: 'replace', path: 'displayName', value: 'Half' },
          { op: 'replace', path: 'active', value: 3 },
        ]),
      ),
      400,
      'invalidValue',
    );
    await expectScimError(
      await scim(token, 'PATCH', `/Users/${user.id}`, patch([{ op: 'replace', path: 'userName', value: other.userName }])),
      409,
      'uniqueness',
    );
    await expectScimError(await scim(token, 'PATCH', '/Users/nope', patch([{ op: 'replace', path: 'active', value: false }])), 404);
    expect(await footprint()).toEqual(before);
    expect(await bodyOf(await scim(token, 'GET', `/Users/${user.id}`))).toEqual(user);
  });
});

describe('DELETE /scim/v2/Users/:id', () => {
  it('deletes with 204 and a user-deleted event; the User is gone (404) and its name free again', async () => {
    const user = await provision();
    const response = await scim(token, 'DELETE', `/Users/${user.id}`);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    await expectScimError(await scim(token, 'GET', `/Users/${user.id}`), 404);
    expect(parsedEvent(await lastEvent('user-deleted'))).toMatchObject({ createdBy: 'scim', preData: { username: user.userName } });
    await expectScimError(await scim(token, 'DELETE', `/Users/${user.id}`), 404);
    expect((await scim(token, 'POST', '/Users', oktaUser(user.userName))).status).toBe(201);
  });
});
