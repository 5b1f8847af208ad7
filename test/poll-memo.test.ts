/**
 * Repeated `/api/client/features` polls answered from the isolate's memo (client-api/memo.ts):
 * the same answer the full path gives, and never one it would not give any more. The Worker's
 * own fetch handler with a revision tick long enough that the tick never passes mid-test (the
 * suite's default of 0 ms makes every request check, so no memo would ever answer).
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext } from 'cloudflare:test';
import { beforeEach, describe, expect, it } from 'vitest';
import worker from '../src/index';
import type { Env } from '../src/env';
import { memoStats } from '../src/modules/client-api/memo';
import { forgetSnapshots } from '../src/modules/client-api/snapshot';
import { ADMIN_TOKEN, BASE, createToken } from './support/http';
import { seedFlag, seedSegment } from './sdk-seed';

const slowTick: Env = { ...(env as unknown as Env), SDK_REVISION_CHECK_MS: '60000' };

async function send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Response> {
  const all = body === undefined ? headers : { ...headers, 'content-type': 'application/json' };
  const request = new Request(`${BASE}${path}`, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) });
  return worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, slowTick, createExecutionContext());
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
    expect((await hitOf(() => send('GET', '/api/client/features', { authorization: key }))).memo).toBe(true);
    expect((await send('DELETE', `/api/admin/api-tokens/${encodeURIComponent(key)}`, { authorization: ADMIN_TOKEN })).status).toBe(200);
    const after = await hitOf(() => send('GET', '/api/client/features', { authorization: key }));
    expect(after.memo).toBe(false);
    expect(after.response.status).toBe(401);
  });

  it('stops answering for a key once it expires', async () => {
    const key = await createToken({ tokenName: 'memo-expiring', type: 'client', environment: 'development', expiresAt: new Date(Date.now() + 1500).toISOString() });
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
