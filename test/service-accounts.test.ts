/**
 * Service accounts and their tokens, beyond the open-source build, as Unleash Enterprise has
 * them (Unleash 6.10.1 OSS answers these paths 404). A token acts with its account's root role.
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { unique } from './support/names';
import { sha256Hex } from './support/crypto';
import { signInAs } from './support/users';
import { count, lastEvent } from './support/db';

const FUTURE = '2099-01-01T00:00:00.000Z';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
let editor: string;

beforeAll(async () => {
  editor = await signInAs('Editor');
});

/**
 * Everything a service-account write could touch, and the event count; without last-use times,
 * which the callers' own credentials move.
 */
async function stored(): Promise<string> {
  const dumps = [];
  for (const table of ['users', 'role_user', 'personal_access_tokens']) {
    const rows = (await env.DB.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all<Record<string, unknown>>()).results;
    dumps.push(rows.map(({ seen_at, ...rest }) => rest));
  }
  return JSON.stringify(dumps) + (await count('SELECT count(*) AS n FROM events'));
}

async function createAccount(rootRole = 3, name = 'CI bot') {
  const response = await call('POST', '/api/admin/service-account', { body: { username: unique('svc'), name, rootRole } });
  if (response.status !== 201) throw new Error(`service account creation failed: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

async function createAccountToken(id: number, description = unique('token')) {
  const response = await call('POST', `/api/admin/service-account/${id}/token`, { body: { description, expiresAt: FUTURE } });
  if (response.status !== 201) throw new Error(`token creation failed: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

describe('POST /api/admin/service-account', () => {
  it('201 with the account and its location; the service-account-created event; not a user of the user list', async () => {
    const username = unique('svc');
    const response = await call('POST', '/api/admin/service-account', { body: { username, name: 'Deploy bot', rootRole: 2 } });
    expect(response.status).toBe(201);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['id', 'name', 'username', 'imageUrl', 'rootRole', 'seenAt', 'createdAt']);
    expect(body).toMatchObject({ name: 'Deploy bot', username, rootRole: 2, seenAt: null });
    expect(body.imageUrl).toMatch(/^https:\/\/gravatar\.com\/avatar\/[0-9a-f]{64}\?s=42&d=retro&r=g$/);
    expect(body.createdAt).toMatch(ISO);
    expect(response.headers.get('location')).toBe(`/api/admin/service-account/${body.id}`);
    expect(await count('SELECT count(*) AS n FROM users WHERE id = ? AND is_service = 1 AND password_hash IS NULL', body.id)).toBe(1);

    const event = await lastEvent('service-account-created');
    expect(JSON.parse(event!.data!)).toEqual({ id: body.id, name: 'Deploy bot', username, rootRole: 2 });
    const { users } = await bodyOf(await call('GET', '/api/admin/user-admin'));
    expect(users.map((user: { id: number }) => user.id)).not.toContain(body.id);
    await expectError(await call('GET', `/api/admin/user-admin/${body.id}`), 404, 'NotFoundError');
  });

  it('cannot sign in: it has no password', async () => {
    const account = await createAccount();
    const response = await call('POST', '/auth/simple/login', {
      token: null,
      body: { username: account.username, password: 'anything-1A!' },
    });
    expect(response.status).toBe(401);
  });

  it('400 for a missing username, name or rootRole, or an unknown root role; nothing written', async () => {
    const before = await stored();
    for (const body of [
      { name: 'x', rootRole: 3 },
      { username: unique('svc'), rootRole: 3 },
      { username: unique('svc'), name: 'x' },
      { username: '   ', name: 'x', rootRole: 3 },
      { username: unique('svc'), name: 'x', rootRole: 'Viewer' },
    ]) {
      await expectError(await call('POST', '/api/admin/service-account', { body }), 400, 'ValidationError');
    }
    // A project role is not a root role.
    const error = await expectError(
      await call('POST', '/api/admin/service-account', { body: { username: unique('svc'), name: 'x', rootRole: 4 } }),
      400,
      'ValidationError',
    );
    expect(error.details[0]).toMatchObject({ message: 'Could not find rootRole=4', path: '/body/rootRole' });
    expect(await stored()).toBe(before);
  });

  it('409 for a username a user or account already has; nothing written', async () => {
    const account = await createAccount();
    const before = await stored();
    const error = await expectError(
      await call('POST', '/api/admin/service-account', { body: { username: account.username, name: 'again', rootRole: 3 } }),
      409,
      'NameExistsError',
    );
    expect(error.message).toBe(`A user or service account with the username ${account.username} already exists`);
    expect(await stored()).toBe(before);
  });

  it('403 for an Editor, 401 without a key; nothing written', async () => {
    const before = await stored();
    const body = { username: unique('svc'), name: 'x', rootRole: 1 };
    await expectError(await call('POST', '/api/admin/service-account', { token: editor, body }), 403, 'NoAccessError');
    await expectError(await call('POST', '/api/admin/service-account', { token: null, body }), 401, 'AuthenticationRequired');
    expect(await stored()).toBe(before);
  });
});

describe('GET /api/admin/service-account', () => {
  it('lists live accounts with their tokens (never a secret) and the root roles they name', async () => {
    const account = await createAccount(2, 'Listed bot');
    const token = await createAccountToken(account.id, 'listed');
    const response = await call('GET', '/api/admin/service-account');
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['serviceAccounts', 'rootRoles']);
    const listed = body.serviceAccounts.find((a: { id: number }) => a.id === account.id);
    expect(listed).toEqual({
      ...account,
      tokens: [{ id: token.id, description: 'listed', expiresAt: FUTURE, userId: account.id, createdAt: token.createdAt, seenAt: null }],
    });
    expect(JSON.stringify(body)).not.toContain(token.secret.slice(5));
    expect(body.rootRoles).toContainEqual(expect.objectContaining({ id: 2, name: 'Editor', type: 'root' }));
    expect(await count('SELECT count(*) AS n FROM users WHERE is_service = 1 AND deleted_at IS NULL')).toBe(body.serviceAccounts.length);
    await expectError(await call('GET', '/api/admin/service-account', { token: editor }), 403, 'NoAccessError');
  });
});

describe('PUT /api/admin/service-account/:id', () => {
  it('changes the name and root role (the username stays); the service-account-updated event has both sides', async () => {
    const account = await createAccount(3, 'Before');
    const response = await call('PUT', `/api/admin/service-account/${account.id}`, {
      body: { name: 'After', rootRole: 2, username: 'ignored' },
    });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body).toEqual({ ...account, name: 'After', rootRole: 2 });
    const event = await lastEvent('service-account-updated');
    expect(JSON.parse(event!.data!)).toEqual({ id: account.id, name: 'After', username: account.username, rootRole: 2 });
    expect(JSON.parse(event!.pre_data!)).toEqual({ id: account.id, name: 'Before', username: account.username, rootRole: 3 });
    const { serviceAccounts } = await bodyOf(await call('GET', '/api/admin/service-account'));
    expect(serviceAccounts.find((a: { id: number }) => a.id === account.id)).toMatchObject({ name: 'After', rootRole: 2 });
  });

  it('404 for an unknown or deleted account or a person, 400 for a bad id or role, 403 for an Editor; nothing written', async () => {
    const account = await createAccount();
    const person = await bodyOf(
      await call('POST', '/api/admin/user-admin', { body: { username: unique('person'), rootRole: 3, sendEmail: false } }),
    );
    const before = await stored();
    const missing = await expectError(
      await call('PUT', '/api/admin/service-account/999999', { body: { name: 'x' } }),
      404,
      'NotFoundError',
    );
    expect(missing.message).toBe('Could not find service account with id 999999');
    await expectError(await call('PUT', `/api/admin/service-account/${person.id}`, { body: { name: 'x' } }), 404, 'NotFoundError');
    const badId = await expectError(await call('PUT', '/api/admin/service-account/abc', { body: { name: 'x' } }), 400, 'ValidationError');
    expect(badId.details[0]!.path).toBe('/params/id');
    await expectError(await call('PUT', `/api/admin/service-account/${account.id}`, { body: { rootRole: 999 } }), 400, 'ValidationError');
    await expectError(await call('PUT', `/api/admin/service-account/${account.id}`, { body: { name: '' } }), 400, 'ValidationError');
    await expectError(
      await call('PUT', `/api/admin/service-account/${account.id}`, { token: editor, body: { rootRole: 1 } }),
      403,
      'NoAccessError',
    );
    expect(await stored()).toBe(before);
  });
});

describe('DELETE /api/admin/service-account/:id', () => {
  it('deletes the account and its tokens at once; the service-account-deleted event', async () => {
    const account = await createAccount(2);
    const token = await createAccountToken(account.id);
    expect((await call('GET', '/api/admin/projects', { token: token.secret })).status).toBe(200);

    const response = await call('DELETE', `/api/admin/service-account/${account.id}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    await expectError(await call('GET', '/api/admin/projects', { token: token.secret }), 401, 'AuthenticationRequired');
    expect(await env.TOKENS.get(`pat:${await sha256Hex(token.secret)}`)).toBeNull();
    expect(await count('SELECT count(*) AS n FROM personal_access_tokens WHERE user_id = ?', account.id)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM role_user WHERE user_id = ?', account.id)).toBe(0);
    const { serviceAccounts } = await bodyOf(await call('GET', '/api/admin/service-account'));
    expect(serviceAccounts.map((a: { id: number }) => a.id)).not.toContain(account.id);
    const event = await lastEvent('service-account-deleted');
    expect(JSON.parse(event!.pre_data!)).toEqual({ id: account.id, name: account.name, username: account.username, rootRole: 2 });
    // Its username is free again.
    const again = await call('POST', '/api/admin/service-account', { body: { username: account.username, name: 'again', rootRole: 3 } });
    expect(again.status).toBe(201);
  });

  it('404 for an unknown account, 403 for an Editor; nothing written', async () => {
    const account = await createAccount();
    const before = await stored();
    await expectError(await call('DELETE', '/api/admin/service-account/999999'), 404, 'NotFoundError');
    await expectError(await call('DELETE', `/api/admin/service-account/${account.id}`, { token: editor }), 403, 'NoAccessError');
    expect(await stored()).toBe(before);
  });
});

describe('service account tokens', () => {
  it('POST …/:id/token: 201, the secret shown once and stored hashed; the pat-created event without it', async () => {
    const account = await createAccount();
    const response = await call('POST', `/api/admin/service-account/${account.id}/token`, {
      body: { description: 'deploys', expiresAt: FUTURE },
    });
    expect(response.status).toBe(201);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['id', 'description', 'expiresAt', 'userId', 'createdAt', 'seenAt', 'secret']);
    expect(body).toMatchObject({ description: 'deploys', expiresAt: FUTURE, userId: account.id, seenAt: null });
    expect(body.secret).toMatch(/^user:[0-9a-f]{56}$/);
    expect(response.headers.get('location')).toBe(`/api/admin/service-account/${account.id}/token/${body.id}`);
    const row = await env.DB.prepare('SELECT * FROM personal_access_tokens WHERE id = ?').bind(body.id).first<Record<string, unknown>>();
    expect(row!.secret_hash).toBe(await sha256Hex(body.secret));
    expect(JSON.stringify(row)).not.toContain(body.secret.slice(5));
    const event = await lastEvent('pat-created');
    expect(JSON.parse(event!.data!)).toEqual({ description: 'deploys', expiresAt: FUTURE, secret: '***' });

    const listed = await call('GET', `/api/admin/service-account/${account.id}/token`);
    expect(listed.status).toBe(200);
    const { secret, ...shown } = body;
    expect(await bodyOf(listed)).toEqual({ pats: [shown] });
  });

  it('refusals: 400 bad body or past expiry, 404 unknown account, 409 taken description, 403 Editor and the eleventh token; nothing written', async () => {
    const account = await createAccount();
    await createAccountToken(account.id, 'taken');
    const path = `/api/admin/service-account/${account.id}/token`;
    let before = await stored();
    await expectError(await call('POST', path, { body: { description: 'x' } }), 400, 'ValidationError');
    await expectError(await call('POST', path, { body: { description: ' ', expiresAt: FUTURE } }), 400, 'ValidationError');
    const past = await expectError(
      await call('POST', path, { body: { description: 'old', expiresAt: '2001-01-01T00:00:00.000Z' } }),
      400,
      'ValidationError',
    );
    expect(past.details[0]!.message).toBe('The expiry date should be in future.');
    await expectError(
      await call('POST', '/api/admin/service-account/999999/token', { body: { description: 'x', expiresAt: FUTURE } }),
      404,
      'NotFoundError',
    );
    const taken = await expectError(
      await call('POST', path, { body: { description: 'taken', expiresAt: FUTURE } }),
      409,
      'NameExistsError',
    );
    expect(taken.message).toBe('PAT description already exists.');
    await expectError(await call('POST', path, { token: editor, body: { description: 'y', expiresAt: FUTURE } }), 403, 'NoAccessError');
    expect(await stored()).toBe(before);

    for (let i = 1; i < 10; i++) await createAccountToken(account.id, `more-${i}`);
    before = await stored();
    const full = await expectError(
      await call('POST', path, { body: { description: 'eleventh', expiresAt: FUTURE } }),
      403,
      'OperationDeniedError',
    );
    expect(full.message).toBe('Too many PATs (10) already exist for this user.');
    expect(await stored()).toBe(before);
  });

  it('GET …/:id/token: 404 for an unknown account, 403 for an Editor', async () => {
    await expectError(await call('GET', '/api/admin/service-account/999999/token'), 404, 'NotFoundError');
    const account = await createAccount();
    await expectError(await call('GET', `/api/admin/service-account/${account.id}/token`, { token: editor }), 403, 'NoAccessError');
  });

  it('DELETE …/:id/token/:tokenId revokes at once; the pat-deleted event', async () => {
    const account = await createAccount(2);
    const token = await createAccountToken(account.id, 'short-lived');
    expect((await call('GET', '/api/admin/projects', { token: token.secret })).status).toBe(200);
    const response = await call('DELETE', `/api/admin/service-account/${account.id}/token/${token.id}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    await expectError(await call('GET', '/api/admin/projects', { token: token.secret }), 401, 'AuthenticationRequired');
    expect(await env.TOKENS.get(`pat:${await sha256Hex(token.secret)}`)).toBeNull();
    const event = await lastEvent('pat-deleted');
    const { secret, seenAt, ...shown } = token;
    // Unleash's event carries the token as stored (seenAt moved when it was used above), the secret masked.
    expect(JSON.parse(event!.data!)).toEqual({ ...shown, seenAt: expect.stringMatching(ISO), secret: '***' });
    expect(await bodyOf(await call('GET', `/api/admin/service-account/${account.id}/token`))).toEqual({ pats: [] });
  });

  it("DELETE …/token/:tokenId: 404 for another account's token or an unknown one, 403 for an Editor; nothing written", async () => {
    const owner = await createAccount();
    const other = await createAccount();
    const token = await createAccountToken(owner.id);
    const before = await stored();
    const error = await expectError(await call('DELETE', `/api/admin/service-account/${other.id}/token/${token.id}`), 404, 'NotFoundError');
    expect(error.message).toBe('No PAT found.');
    await expectError(await call('DELETE', `/api/admin/service-account/${owner.id}/token/999999`), 404, 'NotFoundError');
    await expectError(await call('DELETE', `/api/admin/service-account/${owner.id}/token/x`), 400, 'ValidationError');
    await expectError(
      await call('DELETE', `/api/admin/service-account/${owner.id}/token/${token.id}`, { token: editor }),
      403,
      'NoAccessError',
    );
    expect(await stored()).toBe(before);
    expect((await call('GET', '/api/admin/projects', { token: token.secret })).status).toBe(200);
  });
});

describe("a service account token acts with the account's root role", () => {
  it('Viewer: reads, but a write is refused (403) and writes nothing', async () => {
    const account = await createAccount(3);
    const { secret } = await createAccountToken(account.id);
    expect((await call('GET', '/api/admin/projects', { token: secret })).status).toBe(200);
    const name = unique('svc-viewer-flag');
    const error = await expectError(
      await call('POST', '/api/admin/projects/default/features', { token: secret, body: { name } }),
      403,
      'NoAccessError',
    );
    expect(error.message).toContain('CREATE_FEATURE');
    expect(await count('SELECT count(*) AS n FROM features WHERE name = ?', name)).toBe(0);
  });

  it('Editor: the same write is allowed, and recorded as the account', async () => {
    const account = await createAccount(2);
    const { secret } = await createAccountToken(account.id);
    const name = unique('svc-editor-flag');
    const response = await call('POST', '/api/admin/projects/default/features', { token: secret, body: { name } });
    expect(response.status).toBe(201);
    const event = await env.DB.prepare(
      "SELECT created_by, created_by_user_id FROM events WHERE type = 'feature-created' AND feature_name = ?",
    )
      .bind(name)
      .first<{ created_by: string; created_by_user_id: number }>();
    expect(event).toEqual({ created_by: account.username, created_by_user_id: account.id });
  });

  it("GET /api/admin/user answers the account as a Service Account, with its role's permissions", async () => {
    const account = await createAccount(2, 'Who am I');
    const { secret } = await createAccountToken(account.id);
    const response = await call('GET', '/api/admin/user', { token: secret });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body.user).toMatchObject({
      isAPI: false,
      accountType: 'Service Account',
      id: account.id,
      name: 'Who am I',
      username: account.username,
    });
    expect(body.permissions).toContainEqual({ permission: 'CREATE_PROJECT' });
    expect(body.permissions).not.toContainEqual({ permission: 'ADMIN' });
  });

  it('a role change applies to its tokens', async () => {
    const account = await createAccount(3);
    const { secret } = await createAccountToken(account.id);
    const name = unique('svc-promoted-flag');
    await expectError(await call('POST', '/api/admin/projects/default/features', { token: secret, body: { name } }), 403, 'NoAccessError');
    expect((await call('PUT', `/api/admin/service-account/${account.id}`, { body: { rootRole: 2 } })).status).toBe(200);
    expect((await call('POST', '/api/admin/projects/default/features', { token: secret, body: { name } })).status).toBe(201);
  });
});
