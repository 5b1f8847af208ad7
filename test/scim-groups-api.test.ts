import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser, loginAs } from './support/auth';
import { count, lastEvent, parsedEvent, rows } from './support/db';
import { bodyOf, call, expectError } from './support/http';
import { unique } from './support/names';
import { enableScim, expectScimError, oktaUser, PATCH_OP, scim, SCIM_GROUP } from './support/scim';

let token: string;
beforeAll(async () => {
  token = await enableScim();
});

async function provisionUser(): Promise<{ id: string; userName: string }> {
  const response = await scim(token, 'POST', '/Users', oktaUser(`${unique('member')}@example.com`));
  expect(response.status).toBe(201);
  return bodyOf(response);
}

async function provisionGroup(members: string[] = [], displayName = unique('Engineering')) {
  const response = await scim(token, 'POST', '/Groups', {
    schemas: [SCIM_GROUP],
    displayName,
    members: members.map((value) => ({ value })),
  });
  expect(response.status).toBe(201);
  return bodyOf(response);
}

const groupIdOf = async (scimId: string) => (await rows<{ id: number }>('SELECT id FROM groups WHERE scim_id = ?', scimId))[0]!.id;
const memberValues = (group: { members: { value: string }[] }) => group.members.map((member) => member.value).sort();
const footprint = async () => ({
  groups: await count('SELECT count(*) AS n FROM groups'),
  members: await count('SELECT count(*) AS n FROM group_user'),
  events: await count('SELECT count(*) AS n FROM events'),
});
const patch = (operations: unknown[]) => ({ schemas: [PATCH_OP], Operations: operations });

describe('POST /scim/v2/Groups', () => {
  it('creates the group marked with its scim_id, its members, and the group events', async () => {
    const [ada, grace] = [await provisionUser(), await provisionUser()];
    const displayName = unique('Platform');
    const response = await scim(token, 'POST', '/Groups', {
      schemas: [SCIM_GROUP],
      displayName,
      externalId: 'okta-grp-1',
      members: [{ value: ada.id }, { value: grace.id, display: 'Grace' }],
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toBe('application/scim+json');
    const group = await bodyOf(response);
    expect(response.headers.get('location')).toBe(`http://localhost/scim/v2/Groups/${group.id}`);
    expect({ ...group, members: memberValues(group) }).toEqual({
      schemas: [SCIM_GROUP],
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      externalId: 'okta-grp-1',
      displayName,
      members: [ada.id, grace.id].sort(),
      meta: {
        resourceType: 'Group',
        created: expect.any(String),
        lastModified: expect.any(String),
        location: response.headers.get('location'),
      },
    });
    const id = await groupIdOf(group.id);
    expect(await rows('SELECT name, created_by AS createdBy FROM groups WHERE id = ?', id)).toEqual([
      { name: displayName, createdBy: 'SCIM' },
    ]);
    expect(await count("SELECT count(*) AS n FROM group_user WHERE group_id = ? AND created_by = 'SCIM'", id)).toBe(2);
    expect(parsedEvent(await lastEvent('group-created'))).toMatchObject({
      createdBy: 'scim',
      data: { id, name: displayName, scimId: group.id },
    });
    expect(
      await count("SELECT count(*) AS n FROM events WHERE type = 'group-user-added' AND json_extract(data, '$.groupId') = ?", id),
    ).toBe(2);
  });

  it('refuses a taken name (409), an unknown member or no name (400), writing nothing', async () => {
    const taken = await provisionGroup();
    const before = await footprint();
    await expectScimError(
      await scim(token, 'POST', '/Groups', { schemas: [SCIM_GROUP], displayName: taken.displayName.toUpperCase() }),
      409,
      'uniqueness',
    );
    const user = await provisionUser();
    const after = await footprint();
    await expectScimError(
      await scim(token, 'POST', '/Groups', {
        schemas: [SCIM_GROUP],
        displayName: unique('G'),
        members: [{ value: user.id }, { value: 'no-such-user' }],
      }),
      400,
      'invalidValue',
    );
    await expectScimError(await scim(token, 'POST', '/Groups', { schemas: [SCIM_GROUP], members: [] }), 400, 'invalidValue');
    await expectScimError(
      await scim(token, 'POST', '/Groups', { schemas: [SCIM_GROUP], displayName: 'x', members: [{ display: 'no value' }] }),
      400,
      'invalidValue',
    );
    await expectScimError(await scim(null, 'POST', '/Groups', { schemas: [SCIM_GROUP], displayName: unique('G') }), 401);
    expect(await footprint()).toEqual(after);
    expect(after.groups).toBe(before.groups);
  });
});

describe('GET /scim/v2/Groups', () => {
  it('finds by displayName, and answers Entra ID’s membership check', async () => {
    const [member, outsider] = [await provisionUser(), await provisionUser()];
    const group = await provisionGroup([member.id]);
    const find = async (filter: string, extra = '') =>
      bodyOf(await scim(token, 'GET', `/Groups?filter=${encodeURIComponent(filter)}${extra}`));
    expect((await find(`displayName eq "${group.displayName.toLowerCase()}"`)).Resources.map((found: { id: string }) => found.id)).toEqual([
      group.id,
    ]);
    const check = await find(`id eq "${group.id}" and members[value eq "${member.id}"]`, '&excludedAttributes=members');
    expect(check.totalResults).toBe(1);
    expect(Object.keys(check.Resources[0])).not.toContain('members');
    expect((await find(`id eq "${group.id}" and members[value eq "${outsider.id}"]`)).totalResults).toBe(0);
    await expectScimError(await scim(token, 'GET', `/Groups?filter=${encodeURIComponent('owner eq "x"')}`), 400, 'invalidFilter');
    expect((await bodyOf(await scim(token, 'GET', `/Groups/${group.id}`))).displayName).toBe(group.displayName);
    await expectScimError(await scim(token, 'GET', '/Groups/unknown'), 404);
  });
});

describe('PATCH /scim/v2/Groups/:id', () => {
  it("adds and removes members in Entra ID's and Okta's forms, each change with its event", async () => {
    const [a, b, c] = [await provisionUser(), await provisionUser(), await provisionUser()];
    const group = await provisionGroup([a.id]);
    const id = await groupIdOf(group.id);
    const members = async (response: Response) => {
      expect(response.status).toBe(200);
      return memberValues(await bodyOf(response));
    };
    // Entra ID
    expect(
      await members(
        await scim(
          token,
          'PATCH',
          `/Groups/${group.id}`,
          patch([{ op: 'Add', path: 'members', value: [{ value: b.id }, { value: c.id }] }]),
        ),
      ),
    ).toEqual([a.id, b.id, c.id].sort());
    expect(
      await members(
        await scim(token, 'PATCH', `/Groups/${group.id}`, patch([{ op: 'Remove', path: 'members', value: [{ value: a.id }] }])),
      ),
    ).toEqual([b.id, c.id].sort());
    // Okta
    expect(
      await members(await scim(token, 'PATCH', `/Groups/${group.id}`, patch([{ op: 'remove', path: `members[value eq "${b.id}"]` }]))),
    ).toEqual([c.id]);
    const renamed = unique('Renamed');
    const replaced = await scim(
      token,
      'PATCH',
      `/Groups/${group.id}`,
      patch([
        { op: 'replace', value: { id: group.id, displayName: renamed } },
        { op: 'replace', path: 'members', value: [{ value: a.id }] },
      ]),
    );
    const body = await bodyOf(replaced);
    expect([body.displayName, memberValues(body)]).toEqual([renamed, [a.id]]);
    const events = await rows<{ type: string; n: number }>(
      "SELECT type, count(*) AS n FROM events WHERE type LIKE 'group-user-%' AND coalesce(json_extract(data, '$.groupId'), json_extract(pre_data, '$.groupId')) = ? GROUP BY type ORDER BY type",
      id,
    );
    expect(events).toEqual([
      { type: 'group-user-added', n: 4 },
      { type: 'group-user-removed', n: 3 },
    ]);
    expect(parsedEvent(await lastEvent('group-updated'))).toMatchObject({ data: { name: renamed }, preData: { name: group.displayName } });
  });

  it('refuses an unknown member, a bad operation or an unknown group, writing nothing', async () => {
    const group = await provisionGroup();
    const before = await footprint();
    await expectScimError(
      await scim(token, 'PATCH', `/Groups/${group.id}`, patch([{ op: 'add', path: 'members', value: [{ value: 'ghost' }] }])),
      400,
      'invalidValue',
    );
    await expectScimError(
      await scim(token, 'PATCH', `/Groups/${group.id}`, patch([{ op: 'remove', path: 'displayName' }])),
      400,
      'mutability',
    );
    await expectScimError(
      await scim(token, 'PATCH', `/Groups/${group.id}`, patch([{ op: 'add', path: 'owners[value eq "x"]', value: 'y' }])),
      400,
      'invalidPath',
    );
    await expectScimError(await scim(token, 'PATCH', '/Groups/unknown', patch([{ op: 'add', path: 'members', value: [] }])), 404);
    expect(await footprint()).toEqual(before);
  });
});

describe('PUT and DELETE /scim/v2/Groups/:id', () => {
  it('replaces name and members; deletes with 204 and group-deleted', async () => {
    const [a, b] = [await provisionUser(), await provisionUser()];
    const group = await provisionGroup([a.id]);
    const id = await groupIdOf(group.id);
    const name = unique('Replaced');
    const replaced = await scim(token, 'PUT', `/Groups/${group.id}`, {
      schemas: [SCIM_GROUP],
      displayName: name,
      members: [{ value: b.id }],
    });
    expect(replaced.status).toBe(200);
    expect(memberValues(await bodyOf(replaced))).toEqual([b.id]);
    const response = await scim(token, 'DELETE', `/Groups/${group.id}`);
    expect(response.status).toBe(204);
    await expectScimError(await scim(token, 'GET', `/Groups/${group.id}`), 404);
    expect(await count('SELECT count(*) AS n FROM group_user WHERE group_id = ?', id)).toBe(0);
    expect(parsedEvent(await lastEvent('group-deleted'))).toMatchObject({ createdBy: 'scim', preData: { id, name } });
  });
});

describe("a member's rights follow the directory", () => {
  it('a group root role given in Unleash applies to its SCIM members; removal takes effect on their next request', async () => {
    const email = `${unique('rights')}@example.com`;
    const person = await createUser('Viewer', { email });
    const pat = await createPersonalToken(await loginAs(email, person.password));
    await call('POST', '/api/admin/scim-settings', { body: { enabled: true, assumeControlOfExisting: true } });
    const user = await bodyOf(await scim(token, 'POST', '/Users', oktaUser(email)));
    await call('POST', '/api/admin/scim-settings', { body: { enabled: true, assumeControlOfExisting: false } });
    const group = await provisionGroup([user.id]);
    // An admin gives the directory's group the Editor root role in Unleash.
    await env.DB.prepare('UPDATE groups SET root_role_id = 2 WHERE scim_id = ?').bind(group.id).run();
    const createProject = () => call('POST', '/api/admin/projects', { token: pat, body: { id: unique('scimproj'), name: 'p' } });
    expect((await createProject()).status).toBe(201);
    await scim(token, 'PATCH', `/Groups/${group.id}`, patch([{ op: 'Remove', path: 'members', value: [{ value: user.id }] }]));
    await expectError(await createProject(), 403, 'NoAccessError');
  });
});
