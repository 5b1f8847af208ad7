/**
 * `GET /api/frontend` with a context the isolate has not seen, answered before routing for a
 * frontend key the isolate trusts at a fresh revision (frontend-api/early.ts): exactly what the
 * full path answers, and never an answer it would not give any more. The Worker's own fetch
 * handler with a revision tick long enough that it never passes mid-test (the suite's default
 * of 0 ms makes every request check the revision, which sends every request the full way: the
 * reference answers below are taken so).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { forgetSnapshots } from '../src/sdk/client-api/snapshot';
import { earlyFrontendHits, forgetEarlyFrontend } from '../src/sdk/frontend-api/early';
import { ADMIN_TOKEN, createToken, envWith, fetchWith } from './support/http';
import { seedFlag } from './support/sdk-seed';

const slowTick = envWith({ SDK_REVISION_CHECK_MS: '60000' });
const everyRequestChecks = envWith({ SDK_REVISION_CHECK_MS: '0' });

async function answer(response: Response): Promise<{ status: number; headers: [string, string][]; body: string }> {
  return { status: response.status, headers: [...response.headers], body: await response.text() };
}

/** Runs a request and says whether it was answered before routing. */
async function earlyOf(run: () => Promise<Response>): Promise<{ response: Response; early: boolean }> {
  const before = earlyFrontendHits();
  const response = await run();
  return { response, early: earlyFrontendHits() === before + 1 };
}

function toggles(body: string): string[] {
  return (JSON.parse(body) as { toggles: { name: string }[] }).toggles.map((toggle) => toggle.name);
}

beforeEach(() => {
  // A snapshot from another test file may predate this file's flags; start from D1.
  forgetSnapshots();
  forgetEarlyFrontend();
});

describe('GET /api/frontend before routing', () => {
  it('answers new contexts with exactly the full path answer (body, ETag, CORS, 304)', async () => {
    await seedFlag({
      name: 'early.half',
      environments: {
        development: {
          enabled: true,
          strategies: [{ name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: 'early.half' } }],
        },
      },
    });
    await seedFlag({
      name: 'early.variant',
      impressionData: true,
      environments: {
        development: {
          enabled: true,
          strategies: [
            {
              name: 'flexibleRollout',
              parameters: { rollout: '100', stickiness: 'default', groupId: 'early.variant' },
              variants: [
                { name: 'a', weight: 500, weightType: 'variable', stickiness: 'default' },
                { name: 'b', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'bee' } },
              ],
            },
          ],
        },
      },
    });
    const key = await createToken({ tokenName: 'early-same', type: 'frontend', environment: 'development' });
    const headers = { authorization: key, origin: 'https://app.example', 'x-forwarded-for': '10.0.0.1' };
    const path = (i: number) => `/api/frontend?appName=web&sessionId=s${i}&userId=u${i}&properties[region]=eu`;

    // The first request of a key goes the full way.
    const first = await earlyOf(() => fetchWith(slowTick, 'GET', path(0), headers));
    expect(first.early).toBe(false);
    expect(first.response.status).toBe(200);

    const seen = new Set<string>();
    for (let i = 1; i <= 12; i++) {
      const early = await earlyOf(() => fetchWith(slowTick, 'GET', path(i), headers));
      expect(early.early).toBe(true);
      const got = await answer(early.response);
      const full = await earlyOf(() => fetchWith(everyRequestChecks, 'GET', path(i), headers));
      expect(full.early).toBe(false);
      expect(got).toEqual(await answer(full.response));
      expect(got.status).toBe(200);
      expect(new Headers(got.headers).get('access-control-allow-origin')).toBe('*');
      expect(toggles(got.body)).toContain('early.variant');
      seen.add(got.body);

      // A 304 for the ETag the SDK has, as the full path gives it.
      const etag = early.response.headers.get('etag')!;
      const notModified = await earlyOf(() => fetchWith(slowTick, 'GET', path(i + 100), { ...headers, 'if-none-match': etag }));
      const fullNotModified = await fetchWith(everyRequestChecks, 'GET', path(i + 100), { ...headers, 'if-none-match': etag });
      expect(notModified.early).toBe(true);
      expect(await answer(notModified.response)).toEqual(await answer(fullNotModified));
    }
    // Users differ: the rollout and the variants gave more than one answer.
    expect(seen.size).toBeGreaterThan(1);
  });

  it('leaves POST, other paths, bookmarks and keys it has not seen answered to the full path', async () => {
    await seedFlag({ name: 'early.post', environments: { development: { enabled: true } } });
    const key = await createToken({ tokenName: 'early-post', type: 'frontend', environment: 'development' });
    const unseen = await createToken({ tokenName: 'early-unseen', type: 'frontend', environment: 'development' });
    const backend = await createToken({ tokenName: 'early-backend', type: 'backend', environment: 'development' });
    expect((await fetchWith(slowTick, 'GET', '/api/frontend?userId=1', { authorization: key })).status).toBe(200);

    const post = await earlyOf(() => fetchWith(slowTick, 'POST', '/api/frontend', { authorization: key }, { context: { userId: '2' } }));
    expect(post.early).toBe(false);
    expect(toggles(await post.response.text())).toContain('early.post');
    const bookmark = await earlyOf(() =>
      fetchWith(slowTick, 'GET', '/api/frontend?userId=3', { authorization: key, 'x-d1-bookmark': 'x' }),
    );
    expect(bookmark.early).toBe(false);
    const features = await earlyOf(() => fetchWith(slowTick, 'GET', '/api/frontend/client/features', { authorization: key }));
    expect(features.early).toBe(false);
    expect(features.response.status).toBe(405);
    const other = await earlyOf(() => fetchWith(slowTick, 'GET', '/api/frontend?userId=4', { authorization: unseen }));
    expect(other.early).toBe(false);
    expect(other.response.status).toBe(200);
    // A backend key is refused every time, never remembered.
    for (let i = 0; i < 2; i++) {
      const refused = await earlyOf(() => fetchWith(slowTick, 'GET', `/api/frontend?userId=${i}`, { authorization: backend }));
      expect(refused.early).toBe(false);
      expect(refused.response.status).toBe(403);
    }
  });

  it('gives way to the full path after a write in this isolate, and when the key is revoked', async () => {
    const key = await createToken({ tokenName: 'early-write', type: 'frontend', environment: 'development' });
    const poll = (i: number) => fetchWith(slowTick, 'GET', `/api/frontend?sessionId=${i}&userId=${i}`, { authorization: key });
    expect((await earlyOf(() => poll(1))).early).toBe(false);
    const before = await earlyOf(() => poll(2));
    expect(before.early).toBe(true);
    expect(toggles(await before.response.text())).not.toContain('early.written');

    const created = await fetchWith(
      slowTick,
      'POST',
      '/api/admin/projects/default/features',
      { authorization: ADMIN_TOKEN },
      {
        name: 'early.written',
      },
    );
    expect(created.status).toBe(201);
    const enabled = await fetchWith(slowTick, 'POST', '/api/admin/projects/default/features/early.written/environments/development/on', {
      authorization: ADMIN_TOKEN,
    });
    expect(enabled.status).toBe(200);
    const after = await earlyOf(() => poll(3));
    expect(after.early).toBe(false);
    expect(toggles(await after.response.text())).toContain('early.written');
    const next = await earlyOf(() => poll(4));
    expect(next.early).toBe(true);
    expect(toggles(await next.response.text())).toContain('early.written');

    const revoked = await fetchWith(slowTick, 'DELETE', `/api/admin/api-tokens/${encodeURIComponent(key)}`, { authorization: ADMIN_TOKEN });
    expect(revoked.status).toBe(200);
    const refused = await earlyOf(() => poll(5));
    expect(refused.early).toBe(false);
    expect(refused.response.status).toBe(401);
  });
});
