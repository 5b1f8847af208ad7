/** The isolate cache of the SDK payload and how often it asks D1 for the data revision. */
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import type { Env } from '../src/env';
import { currentRevision, forgetSnapshots, snapshotFor } from '../src/sdk/client-api/snapshot';
import { seedFlag } from './support/sdk-seed';

describe('SDK payload cache', () => {
  it('rebuilds after a write only once the revision check interval has passed', async () => {
    forgetSnapshots();
    const bindings = env as unknown as Env;
    const slow: Env = { ...bindings, SDK_REVISION_CHECK_MS: '60000' };
    const eager: Env = { ...bindings, SDK_REVISION_CHECK_MS: '0' };

    await seedFlag({ name: 'cache.first', environments: { development: { enabled: true } } });
    const first = await snapshotFor(slow, 'development');
    expect(first.byName.has('cache.first')).toBe(true);

    await seedFlag({ name: 'cache.second', environments: { development: { enabled: true } } });
    const within = await snapshotFor(slow, 'development');
    expect(within).toBe(first);
    expect(within.byName.has('cache.second')).toBe(false);

    const after = await snapshotFor(eager, 'development');
    expect(after.revision).toBeGreaterThan(first.revision);
    expect(after.byName.has('cache.second')).toBe(true);
    // Unchanged data: the same snapshot object is served again.
    expect(await snapshotFor(eager, 'development')).toBe(after);
  });

  it('keeps serving the snapshot it has when D1 cannot be read, and fails only without one', async () => {
    forgetSnapshots();
    const bindings = env as unknown as Env;
    await seedFlag({ name: 'outage.flag', environments: { production: { enabled: true } } });
    const good = await snapshotFor({ ...bindings, SDK_REVISION_CHECK_MS: '0' }, 'production');
    const failing = () => {
      throw new Error('D1 unavailable');
    };
    const broken = { prepare: failing, batch: failing, exec: failing, dump: failing, withSession: failing } as unknown as D1Database;
    const outage: Env = { ...bindings, DB: broken, SDK_REVISION_CHECK_MS: '0' };
    // The outage is logged as a warning: captured and checked here rather than printed.
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      expect(await snapshotFor(outage, 'production')).toBe(good);
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({ level: 'warn', msg: 'serving the cached SDK payload: D1 read failed', environment: 'production' }),
      );
    } finally {
      warn.mockRestore();
    }
    await expect(snapshotFor(outage, 'development')).rejects.toThrow('D1 unavailable');
  });

  it('never goes back to an older revision when a lagging read replica answers', async () => {
    forgetSnapshots();
    const bindings = env as unknown as Env;
    const eager: Env = { ...bindings, SDK_REVISION_CHECK_MS: '0' };
    const served = await snapshotFor(eager, 'development');
    // A replica that has not seen anything after `served`: its revision query answers the old one.
    const real = bindings.DB;
    const lagging = {
      prepare: (query: string) =>
        real.prepare(/max\("?event_id"?\)/i.test(query) && query.includes('sdk_changes') ? `select ${served.revision}` : query),
      batch: (statements: D1PreparedStatement[]) => real.batch(statements),
      exec: (query: string) => real.exec(query),
      dump: () => real.dump(),
      withSession: (start?: string) => real.withSession(start),
    } as D1Database;
    await seedFlag({ name: 'lagging.newer', environments: { development: { enabled: true } } });
    // The isolate learns of the newer revision (e.g. from the primary, or another request).
    expect(await currentRevision(eager)).toBeGreaterThan(served.revision);
    const answered = await snapshotFor({ ...bindings, DB: lagging, SDK_REVISION_CHECK_MS: '0' }, 'development');
    expect(answered).toBe(served);
    expect(await currentRevision({ ...bindings, DB: lagging, SDK_REVISION_CHECK_MS: '0' })).toBeGreaterThan(served.revision);
  });
});
