import { beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser, loginAs, withSession } from './support/auth';
import { count, rows } from './support/db';
import { bodyOf, call, expectError } from './support/http';
import { unique } from './support/names';
import { enableScim, oktaUser, PATCH_OP, scim } from './support/scim';

let token: string;
beforeAll(async () => {
  token = await enableScim({ assumeControlOfExisting: true });
});

/** A person signed in with a session and a personal token, then taken over by the directory. */
async function provisionedPerson() {
  const email = `${unique('leaver')}@example.com`;
  const person = await createUser('Editor', { email });
  const cookie = await loginAs(email, person.password);
  const pat = await createPersonalToken(cookie);
  // Both work, and are cached in this isolate.
  expect((await call('GET', '/api/admin/user', withSession(cookie))).status).toBe(200);
  expect((await call('GET', '/api/admin/projects', { token: pat })).status).toBe(200);
  const created = await scim(token, 'POST', '/Users', oktaUser(email));
  expect(created.status).toBe(201);
  return { ...person, email, cookie, pat, scimId: (await bodyOf(created)).id as string };
}

const credentials = (userId: number) =>
  count(
    'SELECT (SELECT count(*) FROM sessions WHERE user_id = ?1) + (SELECT count(*) FROM personal_access_tokens WHERE user_id = ?1) AS n',
    userId,
  );

describe('deprovisioning through SCIM', () => {
  it("Okta's PATCH active false refuses the person's session and personal token on their next request", async () => {
    const person = await provisionedPerson();
    const deactivated = await scim(token, 'PATCH', `/Users/${person.scimId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    expect(deactivated.status).toBe(200);
    await expectError(await call('GET', '/api/admin/user', withSession(person.cookie)), 401, 'AuthenticationRequired');
    await expectError(await call('GET', '/api/admin/projects', { token: person.pat }), 401, 'AuthenticationRequired');
    expect(await credentials(person.id)).toBe(0);
    // Nor can they sign in again, and the admin UI no longer lists them.
    expect(
      (await call('POST', '/auth/simple/login', { token: null, body: { username: person.email, password: person.password } })).status,
    ).toBe(401);
    const listed = (await bodyOf(await call('GET', '/api/admin/user-admin'))).users.map((user: { id: number }) => user.id);
    expect(listed).not.toContain(person.id);
    // The directory still sees them, inactive, and can bring them back.
    expect((await bodyOf(await scim(token, 'GET', `/Users/${person.scimId}`))).active).toBe(false);
    const back = await scim(token, 'PATCH', `/Users/${person.scimId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'active', value: 'True' }],
    });
    expect((await bodyOf(back)).active).toBe(true);
    expect(
      (await call('POST', '/auth/simple/login', { token: null, body: { username: person.email, password: person.password } })).status,
    ).toBe(200);
  });

  it('Entra ID\'s PATCH path active with the string "False" does the same', async () => {
    const person = await provisionedPerson();
    await scim(token, 'PATCH', `/Users/${person.scimId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
    });
    await expectError(await call('GET', '/api/admin/user', withSession(person.cookie)), 401, 'AuthenticationRequired');
    await expectError(await call('GET', '/api/admin/projects', { token: person.pat }), 401, 'AuthenticationRequired');
  });

  it('PUT with active false and DELETE end every credential too', async () => {
    const replaced = await provisionedPerson();
    await scim(token, 'PUT', `/Users/${replaced.scimId}`, oktaUser(replaced.email, { active: false }));
    await expectError(await call('GET', '/api/admin/projects', { token: replaced.pat }), 401, 'AuthenticationRequired');
    await expectError(await call('GET', '/api/admin/user', withSession(replaced.cookie)), 401, 'AuthenticationRequired');

    const deleted = await provisionedPerson();
    expect((await scim(token, 'DELETE', `/Users/${deleted.scimId}`)).status).toBe(204);
    await expectError(await call('GET', '/api/admin/user', withSession(deleted.cookie)), 401, 'AuthenticationRequired');
    await expectError(await call('GET', '/api/admin/projects', { token: deleted.pat }), 401, 'AuthenticationRequired');
    expect(await credentials(deleted.id)).toBe(0);
    const [row] = await rows<{ username: string | null; deleted: number }>(
      'SELECT username, deleted_at IS NOT NULL AS deleted FROM users WHERE id = ?',
      deleted.id,
    );
    expect(row).toEqual({ username: null, deleted: 1 });
  });

  it('an update that keeps the person active leaves their credentials alone', async () => {
    const person = await provisionedPerson();
    await scim(token, 'PATCH', `/Users/${person.scimId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'displayName', value: 'Still here' }],
    });
    expect((await call('GET', '/api/admin/projects', { token: person.pat })).status).toBe(200);
    expect((await call('GET', '/api/admin/user', withSession(person.cookie))).status).toBe(200);
  });
});
