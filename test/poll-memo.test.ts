/**
 * Repeated `/api/client/features` and `/api/frontend` polls answered from the isolate's memo
 * (client-api/memo.ts):
 * the same answer the full path gives, and never one it would not give any more. The Worker's
 * own fetch handler with a revision tick long enough that the tick never passes mid-test (the
 * suite's default of 0 ms makes every request check, so no memo would ever answer).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../src/env';
import { memoStats } from '../src/sdk/client-api/memo';
import { forgetSnapshots } from '../src/sdk/client-api/snapshot';
import { ADMIN_TOKEN, createToken, envWith, fetchWith } from './support/http';
import { seedFlag, seedSegment } from './support/sdk-seed';

const slowTick = envWith({ SDK_REVISION_CHECK_MS: '60000' });

function send(method: string, path: string, headers: Record<string, string>, body?: unknown, workerEnv: Env = slowTick): Promise<Response> {
  return fetchWith(workerEnv, method, path, headers, body);
}

async function answer(response: Response): Promise<{ status: number; headers: [string, string][]; body: string }> {
  return { status: response.status, headers: [...response.headers], body: await response.text() };
}

/** Runs a request and says whether the memo answered it. */
async function hitOf(run: () => Promise<Response>): Promise<{ response: Response; memo: boolean }> {
  const before = memoStats().hits;
  const response = await run();
  return { response, memo: memoStats().hits === before + 1 };
}

/** Revokes a key the memo answers for: the very next poll takes the full path and is refused. */
async function expectRevokedAtOnce(path: string, key: string): Promise<void> {
  expect((await hitOf(() => send('GET', path, { authorization: key }))).memo).toBe(true);
  expect((await send('DELETE', `/api/admin/api-tokens/${encodeURIComponent(key)}`, { authorization: ADMIN_TOKEN })).status).toBe(200);
  const revoked = await hitOf(() => send('GET', path, { authorization: key }));
  expect(revoked.memo).toBe(false);
  expect(revoked.response.status).toBe(401);
}

function names(body: string): string[] {
  return (JSON.parse(body) as { features: { name: string }[] }).features.map((feature) => feature.name);
}

beforeEach(() => {
  // A snapshot from another test file may predate this file's flags; start from D1.
  forgetSnapshots();
});

describe('memoised /api/client/features', () => {
  it('answers a repeated poll with exactly the full path answer: 200, then 304 with the ETag', async () => {
    await seedFlag({ name: 'memo.same', environments: { development: { enabled: true } } });
    const key = await createToken({ tokenName: 'memo-same', type: 'backend', environment: 'development' });
    const path = '/api/client/features?namePrefix=memo.';
    const headers = { authorization: key, 'unleash-client-spec': '5.2.0' };

    const full = await hitOf(() => send('GET', path, headers));
    expect(full.memo).toBe(false);
    const first = await answer(full.response);
    expect(first.status).toBe(200);
    expect(names(first.body)).toContain('memo.same');

    // The kept bytes serve any number of responses whole.
    for (let i = 0; i < 3; i++) {
      const again = await hitOf(() => send('GET', path, headers));
      expect(again.memo).toBe(true);
      expect(await answer(again.response)).toEqual(first);
    }

    const etag = full.response.headers.get('etag')!;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const notModified = await hitOf(() => send('GET', path, { ...headers, 'if-none-match': ifNoneMatch }));
      expect(notModified.memo).toBe(true);
      expect(notModified.response.status).toBe(304);
      expect(notModified.response.headers.get('etag')).toBe(etag);
      expect(await notModified.response.text()).toBe('');
    }
    const stale = await hitOf(() => send('GET', path, { ...headers, 'if-none-match': '"0:0"' }));
    expect(stale.memo).toBe(true);
    expect(stale.response.status).toBe(200);
  });

  it('keeps answers apart by key, query and spec header', async () => {
    const segment = await seedSegment('memo-segment', [{ contextName: 'region', operator: 'IN', values: ['eu'] }]);
    await seedFlag({
      name: 'memo.apart',
      project: 'default',
      environments: { development: { enabled: true, strategies: [{ name: 'default', constraints: [], segments: [segment] }] } },
    });
    const key = await createToken({ tokenName: 'memo-apart', type: 'backend', environment: 'development' });
    const production = await createToken({ tokenName: 'memo-apart-prod', type: 'backend', environment: 'production' });
    const path = '/api/client/features?namePrefix=memo.apart';
    const modern = { authorization: key, 'unleash-client-spec': '5.2.0' };
    const legacy = { authorization: key };

    const modernBody = await (await send('GET', path, modern)).text();
    const legacyBody = await (await send('GET', path, legacy)).text();
    const productionBody = await (await send('GET', path, { authorization: production })).text();
    const otherQuery = await (await send('GET', '/api/client/features?namePrefix=memo.none', modern)).text();
    expect(JSON.parse(modernBody).segments).toEqual([expect.objectContaining({ id: segment })]);
    expect(JSON.parse(legacyBody).segments).toBeUndefined();
    expect(names(productionBody)).toEqual(['memo.apart']);
    expect(JSON.parse(productionBody).features[0].enabled).toBe(false);
    expect(names(otherQuery)).toEqual([]);

    for (const [headers, expected, query] of [
      [modern, modernBody, path],
      [legacy, legacyBody, path],
      [{ authorization: production }, productionBody, path],
      [modern, otherQuery, '/api/client/features?namePrefix=memo.none'],
    ] as const) {
      const repeated = await hitOf(() => send('GET', query, headers));
      expect(repeated.memo).toBe(true);
      expect(await repeated.response.text()).toBe(expected);
    }
  });

  it('keeps a bounded number of answers per key, dropping the oldest query first', async () => {
    const key = await createToken({ tokenName: 'memo-many', type: 'backend', environment: 'development' });
    const paths = Array.from({ length: 9 }, (_, i) => `/api/client/features?namePrefix=memo.many.${i}`);
    for (const path of paths) expect((await send('GET', path, { authorization: key })).status).toBe(200);
    expect((await hitOf(() => send('GET', paths[8]!, { authorization: key }))).memo).toBe(true);
    expect((await hitOf(() => send('GET', paths[1]!, { authorization: key }))).memo).toBe(true);
    // Eight per key: the first of nine went when the ninth came.
    expect((await hitOf(() => send('GET', paths[0]!, { authorization: key }))).memo).toBe(false);
  });

  it('stops answering for a key revoked in this isolate, at once', async () => {
    const key = await createToken({ tokenName: 'memo-revoked', type: 'client', environment: 'development' });
    await send('GET', '/api/client/features', { authorization: key });
    await expectRevokedAtOnce('/api/client/features', key);
  });

  it('stops answering for a key once it expires', async () => {
    const key = await createToken({
      tokenName: 'memo-expiring',
      type: 'client',
      environment: 'development',
      expiresAt: new Date(Date.now() + 1500).toISOString(),
    });
    expect((await send('GET', '/api/client/features', { authorization: key })).status).toBe(200);
    expect((await hitOf(() => send('GET', '/api/client/features', { authorization: key }))).memo).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const after = await hitOf(() => send('GET', '/api/client/features', { authorization: key }));
    expect(after.memo).toBe(false);
    expect(after.response.status).toBe(401);
  });

  it('gives way to the full path after a write in this isolate, which the next poll shows', async () => {
    const key = await createToken({ tokenName: 'memo-write', type: 'backend', environment: 'development' });
    const path = '/api/client/features?namePrefix=memo.written';
    expect(names(await (await send('GET', path, { authorization: key })).text())).toEqual([]);
    expect((await hitOf(() => send('GET', path, { authorization: key }))).memo).toBe(true);
    const created = await send('POST', '/api/admin/projects/default/features', { authorization: ADMIN_TOKEN }, { name: 'memo.written' });
    expect(created.status).toBe(201);
    const after = await hitOf(() => send('GET', path, { authorization: key }));
    expect(after.memo).toBe(false);
    expect(names(await after.response.text())).toEqual(['memo.written']);
  });

  it('leaves requests with a D1 bookmark, other paths and HEAD to the full path', async () => {
    await seedFlag({ name: 'memo.other', environments: { development: { enabled: true } } });
    const key = await createToken({ tokenName: 'memo-other', type: 'backend', environment: 'development' });
    await send('GET', '/api/client/features', { authorization: key });
    expect((await hitOf(() => send('GET', '/api/client/features', { authorization: key }))).memo).toBe(true);
    const created = await send('POST', '/api/admin/projects/default/features', { authorization: ADMIN_TOKEN }, { name: 'memo.bookmarked' });
    const bookmark = created.headers.get('x-d1-bookmark');
    expect(bookmark).not.toBeNull();
    await send('GET', '/api/client/features', { authorization: key });
    const withBookmark = await hitOf(() => send('GET', '/api/client/features', { authorization: key, 'x-d1-bookmark': bookmark! }));
    expect(withBookmark.memo).toBe(false);
    expect(names(await withBookmark.response.text())).toContain('memo.bookmarked');
    for (const run of [
      () => send('HEAD', '/api/client/features', { authorization: key }),
      () => send('GET', '/api/client/features/memo.other', { authorization: key }),
      () => send('GET', '/api/client/features/', { authorization: key }),
    ]) {
      expect((await hitOf(run)).memo).toBe(false);
    }
  });
});

function toggles(body: string): string[] {
  return (JSON.parse(body) as { toggles: { name: string }[] }).toggles.map((toggle) => toggle.name);
}

describe('memoised /api/frontend', () => {
  it('answers a repeated poll with exactly the full path answer, CORS included: 200, then 304', async () => {
    await seedFlag({ name: 'fmemo.same', environments: { development: { enabled: true } } });
    const key = await createToken({ tokenName: 'fmemo-same', type: 'frontend', environment: 'development' });
    // Made first: a token created later would be a write, which sends the next polls the full way.
    const other = await createToken({ tokenName: 'fmemo-same-2', type: 'frontend', environment: 'development' });
    const path = '/api/frontend?appName=web&sessionId=41&userId=7';
    const headers = { authorization: key, origin: 'https://app.example', 'x-forwarded-for': '10.0.0.1' };

    const full = await hitOf(() => send('GET', path, headers));
    expect(full.memo).toBe(false);
    const first = await answer(full.response);
    expect(first.status).toBe(200);
    expect(toggles(first.body)).toContain('fmemo.same');
    expect(first.headers).toEqual(
      expect.arrayContaining([
        ['access-control-allow-origin', '*'],
        ['access-control-expose-headers', 'ETag'],
        ['cache-control', 'no-cache'],
      ]),
    );
    // Kept once it has come twice: a request seen once is not worth keeping.
    const second = await hitOf(() => send('GET', path, headers));
    expect(second.memo).toBe(false);
    expect(await answer(second.response)).toEqual(first);

    for (let i = 0; i < 2; i++) {
      const again = await hitOf(() => send('GET', path, headers));
      expect(again.memo).toBe(true);
      expect(await answer(again.response)).toEqual(first);
    }

    // The 304 the memo gives is the one the full path gives (a second key takes that path).
    const etag = full.response.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"/);
    const fullNotModified = await hitOf(() => send('GET', path, { ...headers, authorization: other, 'if-none-match': etag }));
    expect(fullNotModified.memo).toBe(false);
    const expected = await answer(fullNotModified.response);
    expect(expected.status).toBe(304);
    for (const ifNoneMatch of [etag, `W/"other", ${etag}`]) {
      const notModified = await hitOf(() => send('GET', path, { ...headers, 'if-none-match': ifNoneMatch }));
      expect(notModified.memo).toBe(true);
      expect(await answer(notModified.response)).toEqual(expected);
    }
    const stale = await hitOf(() => send('GET', path, { ...headers, 'if-none-match': 'W/"0-0"' }));
    expect(stale.memo).toBe(true);
    expect(stale.response.status).toBe(200);
  });

  it('keeps answers apart by query, caller address and Origin', async () => {
    await seedFlag({
      name: 'fmemo.office',
      environments: { development: { enabled: true, strategies: [{ name: 'remoteAddress', parameters: { IPs: '10.1.1.1' } }] } },
    });
    await seedFlag({
      name: 'fmemo.user',
      environments: { development: { enabled: true, strategies: [{ name: 'userWithId', parameters: { userIds: 'alice' } }] } },
    });
    const key = await createToken({ tokenName: 'fmemo-apart', type: 'frontend', environment: 'development' });
    const restricted: Env = { ...slowTick, FRONTEND_API_ORIGINS: 'https://app.example' };
    const alice = '/api/frontend?sessionId=1&userId=alice';
    const bob = '/api/frontend?sessionId=1&userId=bob';
    const office = { authorization: key, 'x-forwarded-for': '10.1.1.1', origin: 'https://app.example' };
    const home = { authorization: key, 'x-forwarded-for': '192.0.2.9', origin: 'https://app.example' };
    const elsewhere = { authorization: key, 'x-forwarded-for': '10.1.1.1', origin: 'https://evil.example' };

    const cases = [
      [alice, office, ['fmemo.office', 'fmemo.user']],
      [bob, office, ['fmemo.office']],
      [alice, home, ['fmemo.user']],
      [alice, elsewhere, ['fmemo.office', 'fmemo.user']],
    ] as const;
    const firsts = [];
    for (const [path, headers, expected] of cases) {
      const full = await answer(await send('GET', path, headers, undefined, restricted));
      expect(
        toggles(full.body)
          .filter((name) => name === 'fmemo.office' || name === 'fmemo.user')
          .sort(),
      ).toEqual(expected);
      expect(await answer(await send('GET', path, headers, undefined, restricted))).toEqual(full);
      firsts.push(full);
    }
    // An allowed origin is reflected; another gets no Allow-Origin at all.
    expect(new Headers(firsts[0]!.headers).get('access-control-allow-origin')).toBe('https://app.example');
    expect(new Headers(firsts[3]!.headers).get('access-control-allow-origin')).toBeNull();
    for (const [index, [path, headers]] of cases.entries()) {
      const repeated = await hitOf(() => send('GET', path, headers, undefined, restricted));
      expect(repeated.memo).toBe(true);
      expect(await answer(repeated.response)).toEqual(firsts[index]);
    }
  });

  it('leaves polls without a sessionId to the full path, whose context is then random', async () => {
    const key = await createToken({ tokenName: 'fmemo-nosession', type: 'frontend', environment: 'development' });
    for (let i = 0; i < 3; i++) {
      const poll = await hitOf(() => send('GET', '/api/frontend?userId=7', { authorization: key }));
      expect(poll.memo).toBe(false);
      expect(poll.response.status).toBe(200);
    }
  });

  it('gives way to the full path after a write in this isolate, and when the key is revoked', async () => {
    const key = await createToken({ tokenName: 'fmemo-write', type: 'frontend', environment: 'development' });
    const path = '/api/frontend?sessionId=3';
    expect(toggles(await (await send('GET', path, { authorization: key })).text())).not.toContain('fmemo.written');
    expect((await hitOf(() => send('GET', path, { authorization: key }))).memo).toBe(false);
    expect((await hitOf(() => send('GET', path, { authorization: key }))).memo).toBe(true);
    const created = await send('POST', '/api/admin/projects/default/features', { authorization: ADMIN_TOKEN }, { name: 'fmemo.written' });
    expect(created.status).toBe(201);
    const enabled = await send('POST', '/api/admin/projects/default/features/fmemo.written/environments/development/on', {
      authorization: ADMIN_TOKEN,
    });
    expect(enabled.status).toBe(200);
    const after = await hitOf(() => send('GET', path, { authorization: key }));
    expect(after.memo).toBe(false);
    expect(toggles(await after.response.text())).toContain('fmemo.written');

    expect((await hitOf(() => send('GET', path, { authorization: key }))).memo).toBe(false);
    await expectRevokedAtOnce(path, key);
  });
});
