/**
 * The frontend API's answer for contexts it has never seen, as a change to that path must keep
 * it (issue 44 measured one that assembles every body into a buffer shared by the isolate's
 * requests, bench/sdk/RESULTS.md): requests in flight at once each get their own body with
 * that body's ETag, and a context's ETag changes when, and only when, its answer does.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { forgetSnapshots } from '../src/sdk/client-api/snapshot';
import { forgetEarlyFrontend } from '../src/sdk/frontend-api/early';
import { ADMIN_TOKEN, createToken, envWith, fetchWith } from './support/http';
import { seedFlag } from './support/sdk-seed';

const slowTick = envWith({ SDK_REVISION_CHECK_MS: '60000' });
const everyRequestChecks = envWith({ SDK_REVISION_CHECK_MS: '0' });

interface Sent {
  status: number;
  etag: string | null;
  body: string;
}

async function sent(response: Response): Promise<Sent> {
  return { status: response.status, etag: response.headers.get('etag'), body: await response.text() };
}

/** Express's weak ETag of a body, computed here on its own: `W/"<length hex>-<base64 SHA-1, 27>"`. */
async function expressEtag(body: string): Promise<string> {
  const bytes = new TextEncoder().encode(body);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-1', bytes));
  return `W/"${bytes.byteLength.toString(16)}-${btoa(String.fromCharCode(...digest)).slice(0, 27)}"`;
}

/** Twenty flags each on for about half the users, one with variants: users' bodies differ in content and length. */
async function seedHalfFlags(prefix: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await seedFlag({
      name: `${prefix}.${String(i).padStart(2, '0')}`,
      environments: {
        development: {
          enabled: true,
          strategies: [
            {
              name: 'flexibleRollout',
              parameters: { rollout: '50', stickiness: 'default', groupId: `${prefix}.${i}` },
              variants:
                i === 0
                  ? [
                      { name: 'a', weight: 500, weightType: 'variable', stickiness: 'default' },
                      { name: 'b', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'bee' } },
                    ]
                  : [],
            },
          ],
        },
      },
    });
  }
}

function names(body: string): string[] {
  return (JSON.parse(body) as { toggles: { name: string }[] }).toggles.map((toggle) => toggle.name);
}

beforeEach(() => {
  forgetSnapshots();
  forgetEarlyFrontend();
});

describe('GET and POST /api/frontend for never-seen contexts', () => {
  it('answers requests in flight at once each with its own body and that body’s ETag', async () => {
    await seedHalfFlags('fresh.half');
    const key = await createToken({ tokenName: 'fresh-concurrent', type: 'frontend', environment: 'development' });
    const headers = { authorization: key, 'x-forwarded-for': '10.0.0.2' };
    const path = (i: number) => `/api/frontend?appName=web&sessionId=c${i}&userId=cu${i}`;
    // The key's first request goes the full way; the rest are answered before routing.
    expect((await fetchWith(slowTick, 'GET', path(0), headers)).status).toBe(200);

    const users = Array.from({ length: 40 }, (_, i) => i + 1);
    const gets = await Promise.all(users.map(async (i) => sent(await fetchWith(slowTick, 'GET', path(i), headers))));
    const posts = await Promise.all(
      users.map(async (i) => sent(await fetchWith(slowTick, 'POST', '/api/frontend', headers, { context: { userId: `pu${i}` } }))),
    );
    // The same requests one at a time, each the full way: nothing else in flight.
    for (const i of users) {
      const get = gets[i - 1]!;
      expect(get.status).toBe(200);
      expect(get.etag).toBe(await expressEtag(get.body));
      expect(get).toEqual(await sent(await fetchWith(everyRequestChecks, 'GET', path(i), headers)));
      const post = posts[i - 1]!;
      expect(post.status).toBe(200);
      expect(post.etag).toBe(await expressEtag(post.body));
      expect(post).toEqual(
        await sent(await fetchWith(everyRequestChecks, 'POST', '/api/frontend', headers, { context: { userId: `pu${i}` } })),
      );
    }
    // Users differ, in which flags are on and so in the body's length.
    expect(new Set(gets.map((get) => get.body)).size).toBeGreaterThan(20);
    expect(new Set(gets.map((get) => get.body.length)).size).toBeGreaterThan(3);
  });

  it('changes the ETag when, and only when, the context’s answer changes', async () => {
    await seedHalfFlags('etag.half');
    const key = await createToken({ tokenName: 'fresh-etag', type: 'frontend', environment: 'development' });
    const headers = { authorization: key, 'x-forwarded-for': '10.0.0.4' };
    const path = '/api/frontend?appName=web&sessionId=e1&userId=e1';
    const poll = (etag?: string) => fetchWith(everyRequestChecks, 'GET', path, etag ? { ...headers, 'if-none-match': etag } : headers);
    const first = await sent(await poll());
    expect(first.status).toBe(200);
    expect((await poll()).headers.get('etag')).toBe(first.etag);

    // A write the SDKs see (the revision moves) that leaves this answer alone: still a 304.
    const admin = { authorization: ADMIN_TOKEN };
    expect((await fetchWith(everyRequestChecks, 'POST', '/api/admin/projects/default/features', admin, { name: 'etag.off' })).status).toBe(
      201,
    );
    const unchanged = await poll(first.etag!);
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get('etag')).toBe(first.etag);
    expect(await sent(await poll())).toEqual(first);

    // A write that changes it: a new ETag, and the old one gets the new body.
    const on = '/api/admin/projects/default/features/etag.off/environments/development/on';
    expect((await fetchWith(everyRequestChecks, 'POST', on, admin)).status).toBe(200);
    const changed = await sent(await poll(first.etag!));
    expect(changed.status).toBe(200);
    expect(names(changed.body)).toContain('etag.off');
    expect(names(changed.body).filter((name) => name !== 'etag.off')).toEqual(names(first.body));
    expect(changed.etag).not.toBe(first.etag);
    expect(changed.etag).toBe(await expressEtag(changed.body));
  });
});
