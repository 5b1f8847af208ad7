/** D1 sessions: writes answer with a bookmark, and a request that sends it back reads its own writes. */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { withD1Session } from '../src/db/sessions';
import { seedFlag } from './support/sdk-seed';
import type { Env } from '../src/env';
import { bodyOf, call, createToken, envWith, fetchWith } from './support/http';

describe('x-d1-bookmark', () => {
  it('comes back on an admin write, and a later read that sends it sees the write', async () => {
    const created = await call('POST', '/api/admin/projects/default/features', { body: { name: 'bookmark.flag' } });
    expect(created.status).toBe(201);
    const bookmark = created.headers.get('x-d1-bookmark');
    expect(bookmark).toMatch(/^[0-9a-f]+(-[0-9a-f]+)*$/i);

    const client = await createToken({ tokenName: 'bookmark-client', type: 'backend', environment: 'development' });
    const features = await call('GET', '/api/client/features', { token: client, headers: { 'x-d1-bookmark': bookmark! } });
    expect(features.status).toBe(200);
    expect((await bodyOf(features)).features.map((feature: { name: string }) => feature.name)).toContain('bookmark.flag');
    const search = await call('GET', '/api/admin/search/features?query=bookmark.flag', { headers: { 'x-d1-bookmark': bookmark! } });
    expect((await bodyOf(search)).features.map((feature: { name: string }) => feature.name)).toEqual(['bookmark.flag']);
  });

  it('moves forward with each write and is not sent on reads', async () => {
    const first = await call('POST', '/api/admin/projects/default/features', { body: { name: 'bookmark.one' } });
    const second = await call('POST', '/api/admin/projects/default/features', { body: { name: 'bookmark.two' } });
    expect(second.headers.get('x-d1-bookmark')! > first.headers.get('x-d1-bookmark')!).toBe(true);
    const read = await call('GET', '/api/admin/projects/default/features/bookmark.one');
    expect(read.status).toBe(200);
    expect(read.headers.get('x-d1-bookmark')).toBeNull();
  });

  it('ignores a malformed bookmark instead of failing the request', async () => {
    const client = await createToken({ tokenName: 'bookmark-bad', type: 'client', environment: 'development' });
    for (const bad of ['not a bookmark', 'x'.repeat(500), '0000-zzzz']) {
      expect((await call('GET', '/api/client/features', { token: client, headers: { 'x-d1-bookmark': bad } })).status).toBe(200);
    }
  });

  it('gives SDK and search reads a replica session and other admin reads the primary', () => {
    const seen: (string | undefined)[] = [];
    const primary = {
      ...(env as unknown as Env).DB,
      withSession(start?: string) {
        seen.push(start);
        return (env as unknown as Env).DB.withSession(start);
      },
    } as D1Database;
    const bindings: Env = { ...(env as unknown as Env), DB: primary };
    const sessions = [
      withD1Session(bindings, new Request('http://x/api/client/features')),
      withD1Session(bindings, new Request('http://x/api/frontend')),
      withD1Session(bindings, new Request('http://x/api/admin/search/features')),
      withD1Session(bindings, new Request('http://x/api/admin/projects', { method: 'POST' })),
    ];
    // A session opens on the first statement, not before: most SDK requests never reach D1.
    expect(seen).toEqual([]);
    for (const session of sessions) session.env.DB.prepare('SELECT 1');
    const plain = withD1Session(bindings, new Request('http://x/api/admin/projects'));
    expect(plain.env.DB).toBe(primary);
    expect(seen.slice(0, 3).every((start) => start === 'first-unconstrained' || /^[0-9a-f-]+$/i.test(start ?? ''))).toBe(true);
    expect(seen[3]).toBe('first-primary');
  });

  it("makes an SDK read within the revision tick read the revision again, to include another isolate's write", async () => {
    const slowTick = envWith({ SDK_REVISION_CHECK_MS: '60000' });
    const client = await createToken({ tokenName: 'bookmark-tick', type: 'backend', environment: 'development' });
    const names = async (headers: Record<string, string> = {}) => {
      const response = await fetchWith(slowTick, 'GET', '/api/client/features?namePrefix=bookmark.tick', {
        authorization: client,
        ...headers,
      });
      return ((await response.json()) as { features: { name: string }[] }).features.map((feature) => feature.name);
    };
    expect(await names()).toEqual([]);
    // Written straight into D1, as another isolate's write would be; its bookmark from a session.
    await seedFlag({ name: 'bookmark.tick', environments: { development: { enabled: true } } });
    const session = (env as unknown as Env).DB.withSession('first-primary');
    await session.prepare('SELECT 1').first();
    const bookmark = session.getBookmark();
    expect(bookmark).not.toBeNull();
    // Within the tick, without the bookmark: the revision this isolate knows (the control).
    expect(await names()).toEqual([]);
    expect(await names({ 'x-d1-bookmark': bookmark! })).toEqual(['bookmark.tick']);
  });
});
