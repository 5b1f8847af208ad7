import { beforeAll, describe, expect, it } from 'vitest';
import { count } from './support/db';
import { bodyOf, call, expectError } from './support/http';
import { signInAs } from './support/users';

let person: string;

beforeAll(async () => {
  person = await signInAs('Viewer');
});

const KEYS = ['neverShow', 'feedbackId', 'given', 'userId'];

describe('POST /api/admin/feedback and PUT /api/admin/feedback/:id', () => {
  it("records a person's answer, changes it, and lists it in GET /api/admin/user", async () => {
    const created = await call('POST', '/api/admin/feedback', { token: person, body: { feedbackId: 'pnps' } });
    expect(created.status).toBe(200);
    const body = await bodyOf(created);
    expect(Object.keys(body)).toEqual(KEYS);
    expect(body).toMatchObject({ neverShow: false, feedbackId: 'pnps' });
    expect(Date.now() - Date.parse(body.given)).toBeLessThan(60_000);
    const userId = body.userId;

    const never = await bodyOf(await call('POST', '/api/admin/feedback', { token: person, body: { feedbackId: 'pnps', neverShow: true } }));
    expect(never).toMatchObject({ neverShow: true, feedbackId: 'pnps', userId });
    // A number is taken as its text, as Unleash does.
    expect(await bodyOf(await call('POST', '/api/admin/feedback', { token: person, body: { feedbackId: 5 } }))).toMatchObject({
      feedbackId: '5',
    });

    const updated = await call('PUT', '/api/admin/feedback/pnps', {
      token: person,
      body: { given: '2020-01-01T00:00:00.000Z', userId: 999 },
    });
    expect(await bodyOf(updated)).toEqual({ neverShow: false, feedbackId: 'pnps', given: '2020-01-01T00:00:00.000Z', userId });
    expect((await bodyOf(await call('PUT', '/api/admin/feedback/other', { token: person, body: {} }))).feedbackId).toBe('other');

    const me = await bodyOf(await call('GET', '/api/admin/user', { token: person }));
    expect(me.feedback.map((item: { feedbackId: string }) => item.feedbackId).sort()).toEqual(['5', 'other', 'pnps']);
    expect(me.feedback.find((item: { feedbackId: string }) => item.feedbackId === 'pnps')).toEqual({
      neverShow: false,
      feedbackId: 'pnps',
      given: '2020-01-01T00:00:00.000Z',
      userId,
    });
  });

  it('refuses bad bodies and API tokens (400), writing nothing, and caps what one person may store', async () => {
    const before = await count('SELECT count(*) AS n FROM user_feedback');
    await expectError(await call('POST', '/api/admin/feedback', { token: person, body: {} }), 400, 'ValidationError');
    await expectError(
      await call('POST', '/api/admin/feedback', { token: person, body: { feedbackId: 'x'.repeat(101) } }),
      400,
      'ValidationError',
    );
    await expectError(await call('PUT', '/api/admin/feedback/pnps', { token: person, body: { given: 'bad' } }), 400, 'ValidationError');
    await expectError(await call('PUT', '/api/admin/feedback/pnps', { token: person, body: { neverShow: 'x' } }), 400, 'ValidationError');
    await expectError(await call('POST', '/api/admin/feedback', { body: { feedbackId: 'pnps' } }), 400, 'ValidationError');
    await expectError(
      await call('POST', '/api/admin/feedback', { token: null, body: { feedbackId: 'pnps' } }),
      401,
      'AuthenticationRequired',
    );
    expect(await count('SELECT count(*) AS n FROM user_feedback')).toBe(before);

    const busy = await signInAs('Viewer');
    for (let i = 0; i < 50; i++) {
      expect((await call('POST', '/api/admin/feedback', { token: busy, body: { feedbackId: `q${i}` } })).status).toBe(200);
    }
    await expectError(
      await call('POST', '/api/admin/feedback', { token: busy, body: { feedbackId: 'one-too-many' } }),
      400,
      'ValidationError',
    );
    // Answering one already held again is fine.
    expect((await call('PUT', '/api/admin/feedback/q0', { token: busy, body: { neverShow: true } })).status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM user_feedback WHERE feedback_id = 'one-too-many'")).toBe(0);
  });
});
