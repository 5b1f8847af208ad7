import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createUser, signedInUser } from './support/auth';
import { sha256Hex } from './support/crypto';
import { count, lastEvent, parsedEvent, rows } from './support/db';
import { bodyOf, call, expectError } from './support/http';
import { enableScim, expectScimError, oktaUser, scim } from './support/scim';
import { unique } from './support/names';

async function storedSettings() {
  const [row] = await rows<{ content: string }>("SELECT content FROM settings WHERE name = 'scim'");
  return row === undefined ? undefined : (JSON.parse(row.content) as Record<string, unknown>);
}

describe('GET /api/admin/scim-settings', () => {
  it('answers the shape the UI reads, and is for admins only', async () => {
    const response = await call('GET', '/api/admin/scim-settings');
    expect(response.status).toBe(200);
    expect(Object.keys(await bodyOf(response))).toEqual(['enabled', 'assumeControlOfExisting', 'hasToken']);
    const viewer = await signedInUser('Viewer');
    await expectError(
      await call('GET', '/api/admin/scim-settings', { token: null, headers: { cookie: viewer.cookie } }),
      403,
      'NoAccessError',
    );
  });
});

describe('POST /api/admin/scim-settings and /generate-new-token', () => {
  it('enables SCIM; the token is shown once, stored only as its hash, never in the event', async () => {
    const token = await enableScim();
    expect(token).toMatch(/^scim_[0-9a-f]{64}$/);
    expect(await bodyOf(await call('GET', '/api/admin/scim-settings'))).toEqual({
      enabled: true,
      assumeControlOfExisting: false,
      hasToken: true,
    });
    const stored = await storedSettings();
    expect(stored?.tokenHash).toBe(await sha256Hex(token));
    expect(JSON.stringify(stored)).not.toContain(token.slice(5));
    const event = await lastEvent('scim-token-generated');
    expect(JSON.stringify(event)).not.toContain(token.slice(5));
    expect(parsedEvent(await lastEvent('scim-settings-updated'))?.data).toEqual({ enabled: true, assumeControlOfExisting: false });
    // Nothing shows the token again.
    expect(JSON.stringify(await bodyOf(await call('GET', '/api/admin/scim-settings')))).not.toContain(token.slice(5));
  });

  it('a new token revokes the old one at once; disabling refuses every token', async () => {
    const old = await enableScim();
    expect((await scim(old, 'GET', '/Users')).status).toBe(200);
    const generated = await call('POST', '/api/admin/scim-settings/generate-new-token');
    expect(generated.headers.get('cache-control')).toBe('no-store');
    const current = (await bodyOf<{ token: string }>(generated)).token;
    await expectScimError(await scim(old, 'GET', '/Users'), 401);
    expect((await scim(current, 'GET', '/Users')).status).toBe(200);
    expect((await call('POST', '/api/admin/scim-settings', { body: { enabled: false } })).status).toBe(200);
    await expectScimError(await scim(current, 'GET', '/Users'), 401);
  });

  it('refuses a bad body and non-admins, writing nothing', async () => {
    const editor = await signedInUser('Editor');
    const before = await storedSettings();
    const events = await count('SELECT count(*) AS n FROM events');
    await expectError(await call('POST', '/api/admin/scim-settings', { body: { enabled: 'yes' } }), 400, 'ValidationError');
    const asEditor = { token: null, headers: { cookie: editor.cookie, origin: 'http://localhost' } };
    await expectError(await call('POST', '/api/admin/scim-settings/generate-new-token', asEditor), 403, 'NoAccessError');
    await expectError(await call('POST', '/api/admin/scim-settings', { ...asEditor, body: { enabled: false } }), 403, 'NoAccessError');
    expect(await storedSettings()).toEqual(before);
    expect(await count('SELECT count(*) AS n FROM events')).toBe(events);
  });
});

describe('SCIM authentication', () => {
  it('answers 401 in SCIM shape without a token, with a wrong one, and with an Unleash admin key', async () => {
    await enableScim();
    await expectScimError(await scim(null, 'GET', '/Users'), 401);
    await expectScimError(await scim('scim_' + '0'.repeat(64), 'GET', '/Users'), 401);
    await expectScimError(await call('GET', '/scim/v2/Users'), 401);
    await expectScimError(await scim(null, 'GET', '/ServiceProviderConfig'), 401);
  });
});

describe('SCIM discovery', () => {
  it('serves ServiceProviderConfig, ResourceTypes and Schemas', async () => {
    const token = await enableScim();
    const config = await bodyOf(await scim(token, 'GET', '/ServiceProviderConfig'));
    expect(config.patch).toEqual({ supported: true });
    expect(config.filter).toEqual({ supported: true, maxResults: 200 });
    expect(config.authenticationSchemes[0].type).toBe('oauthbearertoken');
    const types = await bodyOf(await scim(token, 'GET', '/ResourceTypes'));
    expect(types.Resources.map((type: { id: string; endpoint: string }) => [type.id, type.endpoint])).toEqual([
      ['User', '/Users'],
      ['Group', '/Groups'],
    ]);
    expect((await bodyOf(await scim(token, 'GET', '/ResourceTypes/User'))).schema).toBe('urn:ietf:params:scim:schemas:core:2.0:User');
    await expectScimError(await scim(token, 'GET', '/ResourceTypes/Nope'), 404);
    const schemas = await bodyOf(await scim(token, 'GET', '/Schemas'));
    expect(schemas.totalResults).toBe(2);
    const user = await bodyOf(await scim(token, 'GET', '/Schemas/urn:ietf:params:scim:schemas:core:2.0:User'));
    expect(user.attributes.map((attribute: { name: string }) => attribute.name)).toContain('userName');
    // The address Unleash's SCIM page shows (`<unleashUrl>/scim`) answers too.
    const unversioned = await call('GET', '/scim/ServiceProviderConfig', { token: `Bearer ${token}` });
    expect(unversioned.status).toBe(200);
  });
});

describe('hand edits of SCIM-managed people', () => {
  it('are refused with 403 while SCIM is enabled, as Unleash refuses them; allowed again once it is off', async () => {
    const token = await enableScim();
    const userName = `${unique('managed')}@example.com`;
    const provisioned = await bodyOf(await scim(token, 'POST', '/Users', oktaUser(userName)));
    const { id } = (await rows<{ id: number }>('SELECT id FROM users WHERE scim_id = ?', provisioned.id))[0]!;
    const listed = (await bodyOf(await call('GET', '/api/admin/user-admin'))).users.find((user: { id: number }) => user.id === id);
    expect(listed.scimId).toBe(provisioned.id);
    const events = await count('SELECT count(*) AS n FROM events');

    const edit = await call('PUT', `/api/admin/user-admin/${id}`, { body: { name: 'By hand' } });
    const body = await expectError(edit, 403, 'ForbiddenError');
    expect(body.message).toBe('This user is managed by your SCIM provider and cannot be changed manually');
    await expectError(
      await call('POST', `/api/admin/user-admin/${id}/change-password`, { body: { password: 'Correct-Horse-42' } }),
      403,
      'ForbiddenError',
    );
    await expectError(await call('POST', '/api/admin/user-admin/reset-password', { body: { id: userName } }), 403, 'ForbiddenError');
    expect(await count('SELECT count(*) AS n FROM events')).toBe(events);
    expect(await count("SELECT count(*) AS n FROM users WHERE id = ? AND name = 'Ada Lovelace'", id)).toBe(1);

    // People made by hand stay editable.
    const local = await createUser('Viewer');
    expect((await call('PUT', `/api/admin/user-admin/${local.id}`, { body: { name: 'Fine' } })).status).toBe(200);
    await env.DB.prepare("UPDATE settings SET content = json_set(content, '$.enabled', json('false')) WHERE name = 'scim'").run();
    expect((await call('PUT', `/api/admin/user-admin/${id}`, { body: { name: 'By hand' } })).status).toBe(200);
  });
});
