import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { loginAs, postUser, STRONG_PASSWORD } from './support/auth';

const INVALID = { name: 'InvalidTokenError', message: 'Token was not valid' };

async function newUser(rootRole = 3) {
  const email = `reset-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const body = await postUser({ email, name: 'Reset Person', rootRole });
  const token = new URL(body.inviteLink).searchParams.get('token')!;
  return { id: body.id as number, email, token };
}

function validate(token: string) {
  return call('GET', `/auth/reset/validate?token=${encodeURIComponent(token)}`, { token: null });
}

function setPassword(token: string, password: string) {
  return call('POST', '/auth/reset/password', { token: null, body: { token, password } });
}

async function passwordHashOf(id: number) {
  return (await env.DB.prepare('SELECT password_hash AS hash FROM users WHERE id = ?').bind(id).first<{ hash: string | null }>())!.hash;
}

describe('GET /auth/reset/validate', () => {
  it("answers who a new user's link is for, in Unleash's tokenUserSchema", async () => {
    const user = await newUser(3);
    const response = await validate(user.token);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['token', 'createdBy', 'email', 'name', 'id', 'role']);
    expect(body).toMatchObject({ token: user.token, createdBy: 'admin', email: user.email, name: 'Reset Person', id: user.id });
    expect(body.role).toMatchObject({ id: 3, type: 'root', name: 'Viewer' });
  });

  it('stores only the hash of the secret', async () => {
    const user = await newUser();
    const rows = await env.DB.prepare('SELECT secret_hash FROM reset_tokens WHERE user_id = ?')
      .bind(user.id)
      .all<{ secret_hash: string }>();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0]!.secret_hash).not.toContain(user.token);
    expect(rows.results[0]!.secret_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('401 InvalidTokenError for an unknown, empty or expired token', async () => {
    const user = await newUser();
    for (const token of ['nope', '', 'x'.repeat(300)]) {
      expect(await expectError(await validate(token), 401, INVALID.name)).toMatchObject({ message: INVALID.message });
    }
    await env.DB.prepare('UPDATE reset_tokens SET expires_at = ? WHERE user_id = ?')
      .bind(new Date(Date.now() - 1000).toISOString(), user.id)
      .run();
    await expectError(await validate(user.token), 401, INVALID.name);
  });
});

describe('POST /auth/reset/password', () => {
  it('sets the password once: the person can then sign in, and the link is spent', async () => {
    const user = await newUser();
    const response = await setPassword(user.token, STRONG_PASSWORD);
    expect(response.status).toBe(200);
    expect(await loginAs(user.email)).toMatch(/^unleash-session=/);
    await expectError(await setPassword(user.token, 'An-other-Str0ng-one'), 401, INVALID.name);
    await expectError(await validate(user.token), 401, INVALID.name);
  });

  it('refuses a weak password with the password rule, and writes nothing', async () => {
    const user = await newUser();
    const body = await expectError(await setPassword(user.token, 'weak'), 400, 'ValidationError');
    expect((body.details[0] as { validationErrors?: string[] } | undefined)?.validationErrors).toContain(
      'The password must be at least 10 characters long.',
    );
    expect(await passwordHashOf(user.id)).toBeNull();
    expect((await validate(user.token)).status).toBe(200);
  });

  it('401 for an unknown token, and nothing written', async () => {
    const user = await newUser();
    await expectError(await setPassword('not-a-token', STRONG_PASSWORD), 401, INVALID.name);
    expect(await passwordHashOf(user.id)).toBeNull();
  });

  it("refuses one of the person's last 5 passwords (Unleash's PasswordPreviouslyUsedError); the link stays usable", async () => {
    const email = `reset-used-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const created = await bodyOf(await call('POST', '/api/admin/user-admin', { body: { email, password: STRONG_PASSWORD, rootRole: 3 } }));
    const token = new URL(created.inviteLink).searchParams.get('token')!;
    const before = await passwordHashOf(created.id);
    const body = await expectError(await setPassword(token, STRONG_PASSWORD), 400, 'ValidationError');
    expect(body.message).toBe("You've previously used this password. Please use a new password.");
    expect(await passwordHashOf(created.id)).toBe(before);
    expect((await setPassword(token, 'Another-Str0ng-one')).status).toBe(200);
    await loginAs(email, 'Another-Str0ng-one');
  });

  it('two requests racing with one token: exactly one sets the password', async () => {
    const user = await newUser();
    const answers = await Promise.all([setPassword(user.token, 'First-Str0ng-pass'), setPassword(user.token, 'Second-Str0ng-pass')]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401]);
  });
});
