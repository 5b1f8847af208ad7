import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { createPersonalToken, createUser, loginAs, signedInUser, STRONG_PASSWORD, withSession } from './support/auth';
import { count } from './support/db';

const TOO_SHORT = 'The password must be at least 10 characters long.';
const TOO_LONG = 'The password must be fewer than 128 characters.';
const REPEATS = 'The password may not contain sequences of three or more repeated characters.';
const LOWER = 'The password must contain at least one lowercase letter.';
const UPPER = 'The password must contain at least one uppercase letter.';
const NUMBER = 'The password must contain at least one number.';
const SPECIAL = 'The password must contain at least one special character.';
const PREVIOUSLY_USED = "You've previously used this password. Please use a new password.";
const OLD_INVALID =
  'The old password you provided is invalid. If you have forgotten your password, visit /forgotten-password or get in touch with your instance administrator.';

async function expectWeak(response: Response, problems: string[]) {
  const body = await expectError(response, 400, 'ValidationError');
  expect(body).toEqual({
    id: body.id,
    name: 'ValidationError',
    message: problems[0],
    details: [{ validationErrors: problems, message: problems[0] }],
  });
}

function sessionRows(userId: number): Promise<number> {
  return count('SELECT count(*) AS n FROM sessions WHERE user_id = ?', userId);
}

function usedPasswordRows(userId: number): Promise<number> {
  return count('SELECT count(*) AS n FROM used_passwords WHERE user_id = ?', userId);
}

function userCount(): Promise<number> {
  return count('SELECT count(*) AS n FROM users');
}

describe.each([
  ['POST /auth/reset/validate-password (public)', '/auth/reset/validate-password', null],
  ['POST /api/admin/user-admin/validate-password', '/api/admin/user-admin/validate-password', undefined],
] as const)('%s', (_title, path, token) => {
  const check = (password: unknown) => call('POST', path, { token, body: { password } });

  it('200 with no body for a strong password', async () => {
    const response = await check('Abcdefghij1!');
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });

  it("lists every problem, the first as the message (Unleash's order)", async () => {
    await expectWeak(await check('abc'), [TOO_SHORT, UPPER, NUMBER, SPECIAL]);
    await expectWeak(await check('abcdefghijk'), [UPPER, NUMBER, SPECIAL]);
    await expectWeak(await check('ABCDEFGHIJ1!'), [LOWER]);
    await expectWeak(await check('aaaAAA111!!!'), [REPEATS]);
    await expectWeak(await check(`Aa1!${'xy'.repeat(63)}`), [TOO_LONG]);
  });

  it('a passphrase of 20 characters or more needs no character classes', async () => {
    expect((await check('correct horse battery staple')).status).toBe(200);
    await expectWeak(await check('correct horse batttery staple'), [REPEATS]);
  });

  it('400 naming /body/password when it is missing or not a string', async () => {
    const missing = await expectError(await call('POST', path, { token, body: {} }), 400, 'ValidationError');
    expect(missing.details[0]!.path).toBe('/body/password');
    const number = await expectError(await check(123), 400, 'ValidationError');
    expect(number.details[0]!.path).toBe('/body/password');
  });
});

describe('passwords on user creation and signup', () => {
  it('POST /api/admin/user-admin refuses a weak password and writes nothing', async () => {
    const before = await userCount();
    await expectWeak(await call('POST', '/api/admin/user-admin', { body: { username: 'weak-one', password: 'weakpass', rootRole: 3 } }), [
      TOO_SHORT,
      UPPER,
      NUMBER,
      SPECIAL,
    ]);
    expect(await userCount()).toBe(before);
  });

  it('the invite path end to end: link, anonymous signup with a strong password, sign-in, a read (200), an API token (403, nothing written)', async () => {
    const created = await call('POST', '/api/admin/invite-link/tokens', {
      body: { name: 'Invite e2e', expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
    });
    expect(created.status).toBe(201);
    const { secret } = await bodyOf(created);

    const before = await userCount();
    await expectWeak(
      await call('POST', `/invite/${secret}/signup`, {
        token: null,
        body: { email: 'weak.invitee@example.com', name: 'Weak', password: 'password1' },
      }),
      [TOO_SHORT, UPPER, SPECIAL],
    );
    expect(await userCount()).toBe(before);

    const signup = await call('POST', `/invite/${secret}/signup`, {
      token: null,
      body: { email: 'invitee@example.com', name: 'Invitee', password: STRONG_PASSWORD },
    });
    expect(signup.status).toBe(201);
    const cookie = await loginAs('Invitee@Example.com');
    const me = await call('GET', '/api/admin/user', withSession(cookie));
    expect(me.status).toBe(200);
    expect((await bodyOf(me)).user).toMatchObject({ email: 'invitee@example.com', name: 'Invitee' });

    // The link granted its root role (Viewer): reads are open, creating an API token is not.
    expect((await call('GET', '/api/admin/projects', withSession(cookie))).status).toBe(200);
    const tokensBefore = await env.DB.prepare('SELECT count(*) AS n FROM api_tokens').first<number>('n');
    await expectError(
      await call(
        'POST',
        '/api/admin/api-tokens',
        withSession(cookie, { body: { tokenName: 'invitee-key', type: 'client', environment: 'development' } }),
      ),
      403,
      'NoAccessError',
    );
    expect(await env.DB.prepare('SELECT count(*) AS n FROM api_tokens').first<number>('n')).toBe(tokensBefore);
  });
});

describe('POST /api/admin/user-admin/:id/change-password', () => {
  it("sets the password; the old one stops working and the user's sessions end", async () => {
    const user = await signedInUser(3);
    const response = await call('POST', `/api/admin/user-admin/${user.id}/change-password`, { body: { password: 'Fresh-Password-9' } });
    expect(response.status).toBe(200);
    await expectError(await call('GET', '/api/admin/user', withSession(user.cookie)), 401, 'AuthenticationRequired');
    await expectError(
      await call('POST', '/auth/simple/login', { token: null, body: { username: user.username, password: STRONG_PASSWORD } }),
      401,
      'AuthenticationRequired',
    );
    await loginAs(user.username, 'Fresh-Password-9');
  });

  it('400 for a weak password, 404 for an unknown user, 403 for a non-admin', async () => {
    const user = await createUser();
    await expectWeak(await call('POST', `/api/admin/user-admin/${user.id}/change-password`, { body: { password: 'short' } }), [
      TOO_SHORT,
      UPPER,
      NUMBER,
      SPECIAL,
    ]);
    await expectError(
      await call('POST', '/api/admin/user-admin/999999/change-password', { body: { password: 'Fresh-Password-9' } }),
      404,
      'NotFoundError',
    );
    const editor = await signedInUser(2);
    await expectError(
      await call(
        'POST',
        `/api/admin/user-admin/${user.id}/change-password`,
        withSession(editor.cookie, { body: { password: 'Fresh-Password-9' } }),
      ),
      403,
      'NoAccessError',
    );
  });
});

describe('POST /api/admin/user/change-password', () => {
  it("changes the caller's password and ends every session of theirs, this one included (as Unleash 6.10.1)", async () => {
    const user = await signedInUser(3);
    const other = await loginAs(user.username);
    const pat = await createPersonalToken(user.cookie);
    const response = await call(
      'POST',
      '/api/admin/user/change-password',
      withSession(user.cookie, {
        body: { password: 'Brand-New-Pass-1', confirmPassword: 'Brand-New-Pass-1', oldPassword: STRONG_PASSWORD },
      }),
    );
    expect(response.status).toBe(200);
    for (const cookie of [user.cookie, other]) {
      await expectError(await call('GET', '/api/admin/user', withSession(cookie)), 401, 'AuthenticationRequired');
    }
    expect(await sessionRows(user.id)).toBe(0);
    // Personal access tokens survive a password change, as in Unleash.
    expect((await call('GET', '/api/admin/user', { token: pat })).status).toBe(200);
    await loginAs(user.username, 'Brand-New-Pass-1');
  });

  it("expires the person's open reset links", async () => {
    const created = await call('POST', '/api/admin/user-admin', {
      body: { username: `with-link-${crypto.randomUUID().slice(0, 8)}`, password: STRONG_PASSWORD, rootRole: 3 },
    });
    const { username, inviteLink } = await bodyOf(created);
    const token = new URL(inviteLink).searchParams.get('token')!;
    expect((await call('GET', `/auth/reset/validate?token=${token}`, { token: null })).status).toBe(200);
    const cookie = await loginAs(username);
    const change = await call(
      'POST',
      '/api/admin/user/change-password',
      withSession(cookie, { body: { password: 'Brand-New-Pass-1', confirmPassword: 'Brand-New-Pass-1', oldPassword: STRONG_PASSWORD } }),
    );
    expect(change.status).toBe(200);
    await expectError(await call('GET', `/auth/reset/validate?token=${token}`, { token: null }), 401, 'InvalidTokenError');
    await expectError(
      await call('POST', '/auth/reset/password', { token: null, body: { token, password: 'Link-Password-77' } }),
      401,
      'InvalidTokenError',
    );
    await loginAs(username, 'Brand-New-Pass-1');
  });

  it('400 for any of the last 5 passwords, the current one included; the sixth-latest is allowed again', async () => {
    const user = await signedInUser(3);
    const pat = await createPersonalToken(user.cookie);
    let current = STRONG_PASSWORD;
    const change = (password: string) =>
      call('POST', '/api/admin/user/change-password', { token: pat, body: { password, confirmPassword: password, oldPassword: current } });

    const same = await expectError(await change(STRONG_PASSWORD), 400, 'ValidationError');
    expect(same).toEqual({ id: same.id, name: 'ValidationError', message: PREVIOUSLY_USED, details: [{ message: PREVIOUSLY_USED }] });
    // Refused: nothing changed, the session still works.
    expect((await call('GET', '/api/admin/user', withSession(user.cookie))).status).toBe(200);

    for (const next of ['Second-Pass-22', 'Third-Pass-303', 'Fourth-Pass-44', 'Fifth-Pass-505']) {
      expect((await change(next)).status).toBe(200);
      current = next;
    }
    // The last five are the first one and these four: each is refused.
    for (const used of [STRONG_PASSWORD, 'Second-Pass-22', 'Third-Pass-303', 'Fourth-Pass-44', 'Fifth-Pass-505']) {
      const refused = await expectError(await change(used), 400, 'ValidationError');
      expect(refused.message).toBe(PREVIOUSLY_USED);
    }
    expect((await change('Sixth-Pass-606')).status).toBe(200);
    current = 'Sixth-Pass-606';
    // Six passwords set: the first one has dropped out of the last five.
    expect(await usedPasswordRows(user.id)).toBe(5);
    expect((await change(STRONG_PASSWORD)).status).toBe(200);
  });

  it('an admin may set any strong password, a used one too (Unleash checks only the person’s own changes)', async () => {
    const user = await createUser(3);
    const response = await call('POST', `/api/admin/user-admin/${user.id}/change-password`, { body: { password: STRONG_PASSWORD } });
    expect(response.status).toBe(200);
  });

  it("401 with Unleash's message for a wrong old password; nothing changes", async () => {
    const user = await signedInUser(3);
    const body = await expectError(
      await call(
        'POST',
        '/api/admin/user/change-password',
        withSession(user.cookie, {
          body: { password: 'Brand-New-Pass-1', confirmPassword: 'Brand-New-Pass-1', oldPassword: 'Not-It-123' },
        }),
      ),
      401,
      'AuthenticationRequired',
    );
    expect(body.message).toBe(OLD_INVALID);
    await loginAs(user.username, STRONG_PASSWORD);
  });

  it('400 when the confirmation differs or the new password is weak', async () => {
    const user = await signedInUser(3);
    const mismatch = await expectError(
      await call(
        'POST',
        '/api/admin/user/change-password',
        withSession(user.cookie, {
          body: { password: 'Brand-New-Pass-1', confirmPassword: 'Other-Pass-12', oldPassword: STRONG_PASSWORD },
        }),
      ),
      400,
      'ValidationError',
    );
    expect(mismatch.details[0]!.path).toBe('/body/confirmPassword');
    await expectWeak(
      await call(
        'POST',
        '/api/admin/user/change-password',
        withSession(user.cookie, { body: { password: 'weak', confirmPassword: 'weak', oldPassword: STRONG_PASSWORD } }),
      ),
      [TOO_SHORT, UPPER, NUMBER, SPECIAL],
    );
  });

  it('403 for an admin API token: it has no password', async () => {
    await expectError(
      await call('POST', '/api/admin/user/change-password', {
        body: { password: 'Brand-New-Pass-1', confirmPassword: 'Brand-New-Pass-1', oldPassword: 'x' },
      }),
      403,
      'NoAccessError',
    );
  });
});
