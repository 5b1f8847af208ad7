/**
 * The data revision read shared by the concurrent requests of an isolate (client-api/snapshot.ts
 * `currentRevision`): when the tick passes, the requests in flight share one D1 read instead
 * of each making its own, but never one that began before a write of this isolate finished
 * (read-your-writes, src/db/coherence.ts rule 2).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { noteLocalWrite } from '../src/db/coherence';
import { currentRevision, forgetSnapshots, revisionReadCount } from '../src/sdk/client-api/snapshot';
import { ADMIN_TOKEN, createToken, envWith, fetchWith } from './support/http';

const defaultTick = envWith({ SDK_REVISION_CHECK_MS: undefined });

function toggleNames(body: unknown): string[] {
  return (body as { toggles: { name: string }[] }).toggles.map((toggle) => toggle.name);
}

beforeEach(() => {
  forgetSnapshots();
});

describe('the shared revision read', () => {
  it('is one D1 read for requests that ask at the same time', async () => {
    const before = revisionReadCount();
    const revisions = await Promise.all(Array.from({ length: 8 }, () => currentRevision(defaultTick)));
    expect(revisionReadCount() - before).toBe(1);
    expect(new Set(revisions).size).toBe(1);
    // Fresh now: the next request reads nothing.
    expect(await currentRevision(defaultTick)).toBe(revisions[0]);
    expect(revisionReadCount() - before).toBe(1);
  });

  it('is not shared past a write of this isolate: a request after the write reads again', async () => {
    const before = revisionReadCount();
    const first = currentRevision(defaultTick);
    const joined = currentRevision(defaultTick);
    expect(revisionReadCount() - before).toBe(1);
    // A write finishes in this isolate while that read is under way.
    noteLocalWrite();
    const afterWrite = currentRevision(defaultTick);
    expect(revisionReadCount() - before).toBe(2);
    // Requests after the write share the read begun after it.
    const joinedAfterWrite = currentRevision(defaultTick);
    expect(revisionReadCount() - before).toBe(2);
    const [a, b, c, d] = await Promise.all([first, joined, afterWrite, joinedAfterWrite]);
    expect(b).toBe(a);
    expect(d).toBe(c);
    expect(c).toBeGreaterThanOrEqual(a);
  });

  it('lets the writing isolate see its write at once while another read is under way', async () => {
    const frontend = await createToken({ tokenName: 'single-flight-frontend', type: 'frontend', environment: 'development' });
    const get = async () => (await fetchWith(defaultTick, 'GET', '/api/frontend', { authorization: frontend })).json();
    expect(
      (await fetchWith(defaultTick, 'POST', '/api/admin/projects/default/features', { authorization: ADMIN_TOKEN }, { name: 'sf.toggle' }))
        .status,
    ).toBe(201);
    expect(toggleNames(await get())).not.toContain('sf.toggle');

    forgetSnapshots();
    // A read under way (another request's), begun before the write below.
    const pending = currentRevision(defaultTick);
    const switched = await fetchWith(defaultTick, 'POST', '/api/admin/projects/default/features/sf.toggle/environments/development/on', {
      authorization: ADMIN_TOKEN,
    });
    expect(switched.status).toBe(200);
    const [after] = await Promise.all([get(), pending]);
    expect(toggleNames(after)).toContain('sf.toggle');
  });
});
