/**
 * A flag change reaches open streams at once: the isolate that made the write wakes its own
 * streams, a push from the change feed (src/sdk/push/) wakes the others, and the revision
 * tick stays the fallback.
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createToken, envWith, fetchWith } from './support/http';
import { adminOk } from './support/admin';
import { count } from './support/db';
import { eventually } from './support/eventually';
import { sseReader } from './support/sse';
import { announceChange } from '../src/sdk/push/announce';
import { listening, pushCount } from '../src/sdk/push/listen';
import type { Env } from '../src/env';

/** A tick far longer than any wait below: an event that arrives came from a wake-up, not from it. */
const SLOW_TICK = envWith({ SDK_REVISION_CHECK_MS: '600000' });

let backend: string;

function openStream(workerEnv = SLOW_TICK, headers: Record<string, string> = {}) {
  return fetchWith(workerEnv, 'GET', '/api/client/streaming', { authorization: backend, ...headers });
}

async function toggle(name: string, on: boolean): Promise<void> {
  await adminOk('POST', `/api/admin/projects/default/features/${name}/environments/development/${on ? 'on' : 'off'}`);
}

/**
 * A change committed by "another isolate": written to D1 directly, so that this isolate hears
 * of it only through a push or its tick (no local write). Answers the revision it made.
 */
async function writeElsewhere(name: string, enabled: boolean): Promise<number> {
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO feature_environments (feature_name, environment, enabled) VALUES (?1, 'development', ?2)
       ON CONFLICT (feature_name, environment) DO UPDATE SET enabled = ?2`,
    ).bind(name, enabled ? 1 : 0),
    env.DB.prepare(
      `INSERT INTO events (type, created_by, project, environment, feature_name) VALUES (?1, 'another-isolate', 'default', 'development', ?2)`,
    ).bind(enabled ? 'feature-environment-enabled' : 'feature-environment-disabled', name),
  ]);
  return count('SELECT max(event_id) AS n FROM sdk_changes');
}

type Update = { events: { type: string; feature: { name: string; enabled: boolean } }[] };

function flagsIn(data: string | undefined): [string, string, boolean][] {
  return (JSON.parse(data!) as Update).events.map((event) => [event.type, event.feature.name, event.feature.enabled]);
}

beforeAll(async () => {
  backend = await createToken({ tokenName: 'push-backend', type: 'backend', environment: 'development' });
  await adminOk('POST', '/api/admin/projects/default/features', { name: 'push.a' });
});

describe('streams wake at once', () => {
  it('a write wakes a waiting stream in the same isolate without waiting for the tick', async () => {
    const response = await openStream();
    expect(response.status).toBe(200);
    const stream = sseReader(response);
    try {
      const connected = await stream.next();
      expect(connected.event).toBe('unleash-connected');
      for (const on of [true, false, true]) {
        const written = Date.now();
        await toggle('push.a', on);
        // Well inside the 10-minute tick and the 15 s keep-alive timer.
        const updated = await stream.next(5000);
        expect(Date.now() - written).toBeLessThan(5000);
        expect(updated.event).toBe('unleash-updated');
        const delta = JSON.parse(updated.data!) as { events: { type: string; feature: { name: string; enabled: boolean } }[] };
        expect(delta.events.map((event) => [event.type, event.feature.name, event.feature.enabled])).toEqual([
          ['feature-updated', 'push.a', on],
        ]);
      }
    } finally {
      await stream.cancel();
    }
  });

  it('a change announced on the change feed wakes a stream of an isolate that did not make it, and is read from D1', async () => {
    const stream = sseReader(await openStream());
    try {
      await stream.next();
      // The stream's isolate listens to the feed (a WebSocket its stream opened).
      await eventually(async () => expect(listening()).toBe(true));
      const pushes = pushCount();
      const revision = await writeElsewhere('push.a', false);
      expect(await announceChange(env as unknown as Env, { revision })).toBe(true);
      const updated = await stream.next(5000);
      expect(updated.event).toBe('unleash-updated');
      expect(Number(updated.id)).toBe(revision);
      expect(flagsIn(updated.data)).toEqual([['feature-updated', 'push.a', false]]);
      expect(pushCount()).toBeGreaterThan(pushes);

      // A push names a revision but carries no data: one the isolate already has changes nothing.
      await announceChange(env as unknown as Env, { revision });
      await expect(stream.next(1000)).rejects.toThrow('no event in time');
    } finally {
      await stream.cancel();
    }
  });

  it('a push that arrives before its change is readable keeps the isolate reading D1 until it is, not until the tick', async () => {
    const stream = sseReader(await openStream());
    try {
      await stream.next();
      await eventually(async () => expect(listening()).toBe(true));
      // The push names the next revision, but D1 does not show it yet (a lagging replica, or
      // another process's database): the read it causes comes back without the change.
      const next = (await count('SELECT max(event_id) AS n FROM sdk_changes')) + 1;
      expect(await announceChange(env as unknown as Env, { revision: next })).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Written off again (it is off): an event all the same; the next test turns it on.
      const revision = await writeElsewhere('push.a', false);
      expect(revision).toBeGreaterThanOrEqual(next);
      // The tick is 10 minutes: only reading again for the pushed revision can bring it.
      const updated = await stream.next(2500);
      expect(Number(updated.id)).toBe(revision);
      expect(flagsIn(updated.data)).toEqual([['feature-updated', 'push.a', false]]);
    } finally {
      await stream.cancel();
    }
  });

  it('a write announces itself: the feed pushes the new revision to every listening isolate', async () => {
    const stream = sseReader(await openStream());
    try {
      await stream.next();
      await eventually(async () => expect(listening()).toBe(true));
      const pushes = pushCount();
      await toggle('push.a', true);
      expect(flagsIn((await stream.next(5000)).data)).toEqual([['feature-updated', 'push.a', true]]);
      // Its own push comes back to this isolate too (it listens): the feed heard of the write.
      await eventually(async () => expect(pushCount()).toBeGreaterThan(pushes));
    } finally {
      await stream.cancel();
    }
  });

  it('a lost push is caught by the revision tick (slowed to SDK_PUSH_FALLBACK_MS while listening)', async () => {
    const fallback = envWith({ SDK_REVISION_CHECK_MS: '100', SDK_PUSH_FALLBACK_MS: '1500' });
    const stream = sseReader(await openStream(fallback));
    try {
      await stream.next();
      await eventually(async () => expect(listening()).toBe(true));
      const revision = await writeElsewhere('push.a', false);
      // Never announced: only the tick can bring it.
      const updated = await stream.next(5000);
      expect(Number(updated.id)).toBe(revision);
      expect(flagsIn(updated.data)).toEqual([['feature-updated', 'push.a', false]]);
    } finally {
      await stream.cancel();
    }
  });
});

/**
 * The real D1, except that the next `failures` round trips made through it fail, as a read does
 * when D1 has a transient error (or, locally, SQLITE_BUSY while another process writes the
 * shared file: the cause of the writer's own late changes in bench/propagation/RESULTS.md).
 */
function flakyDatabase(database: D1Database) {
  const state = { failures: 0, failed: 0 };
  const fail = () => {
    if (state.failures === 0) return false;
    state.failures--;
    state.failed++;
    return true;
  };
  const statement = (prepared: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(prepared, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        if (property === 'bind')
          return (...args: unknown[]) => statement((value as (...a: unknown[]) => D1PreparedStatement).apply(target, args));
        if (['all', 'first', 'raw', 'run'].includes(String(property))) {
          return (...args: unknown[]) =>
            fail() ? Promise.reject(new Error('D1 is busy')) : (value as (...a: unknown[]) => unknown).apply(target, args);
        }
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
  const wrap = <T extends D1Database | D1DatabaseSession>(inner: T): T =>
    new Proxy(inner, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        if (property === 'prepare') return (query: string) => statement((target as D1Database).prepare(query));
        if (property === 'withSession') return (start?: string) => wrap((target as D1Database).withSession(start));
        if (property === 'batch') {
          return (statements: D1PreparedStatement[]) =>
            fail() ? Promise.reject(new Error('D1 is busy')) : (target as D1Database).batch(statements);
        }
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
  return { database: wrap(database), state };
}

describe('when a read fails', () => {
  it('a stream whose read after a write in its own isolate fails reads again soon, not at the tick', async () => {
    // No change feed anywhere: only the write's own wake-up, and the retry after it, can bring the change.
    const flaky = flakyDatabase(env.DB);
    const streamEnv = envWith({ DB: flaky.database, CHANGE_FEED: undefined, SDK_REVISION_CHECK_MS: '600000' });
    const writerEnv = envWith({ CHANGE_FEED: undefined });
    const stream = sseReader(await openStream(streamEnv));
    try {
      await stream.next();
      for (const on of [true, false]) {
        // The next three D1 round trips of the stream fail: its wake-up read and two retries.
        flaky.state.failures = 3;
        const failedBefore = flaky.state.failed;
        const written = await fetchWith(
          writerEnv,
          'POST',
          `/api/admin/projects/default/features/push.a/environments/development/${on ? 'on' : 'off'}`,
          {
            authorization: ADMIN_TOKEN,
          },
        );
        expect(written.status).toBe(200);
        // The tick is 10 minutes away; the retries (20, 40, 80 ms) bring it well within this.
        const updated = await stream.next(3000);
        expect(flagsIn(updated.data)).toEqual([['feature-updated', 'push.a', on]]);
        expect(flaky.state.failed - failedBefore).toBe(3);
      }
    } finally {
      await stream.cancel();
    }
  });
});

describe('revoked keys', () => {
  it("a revoked key's stream ends (at once in the isolate that revoked it), and it cannot reconnect", async () => {
    const secret = await createToken({ tokenName: 'push-revoked', type: 'backend', environment: 'development' });
    const stream = sseReader(await fetchWith(SLOW_TICK, 'GET', '/api/client/streaming', { authorization: secret }));
    await stream.next();
    await adminOk('DELETE', `/api/admin/api-tokens/${encodeURIComponent(secret)}`);
    await expect(stream.next(5000)).rejects.toThrow('stream ended');
    const again = await fetchWith(SLOW_TICK, 'GET', '/api/client/streaming', { authorization: secret });
    expect(again.status).toBe(401);
  });
});

describe('when the change feed cannot be reached', () => {
  const unreachable = {
    idFromName: (name: string) => env.CHANGE_FEED!.idFromName(name),
    get: () => ({
      fetch: () => Promise.reject(new Error('change feed down')),
      announce: () => Promise.reject(new Error('change feed down')),
    }),
  } as unknown as Env['CHANGE_FEED'];
  const withoutFeed = envWith({ CHANGE_FEED: unreachable, SDK_REVISION_CHECK_MS: '200', SDK_PUSH_FALLBACK_MS: '600000' });

  it('writes still succeed, the writing isolate still wakes its streams, and the others fall back to the tick', async () => {
    const stream = sseReader(await openStream(withoutFeed));
    try {
      await stream.next();
      expect(await announceChange(withoutFeed, { revision: 1 })).toBe(false);
      const written = await fetchWith(withoutFeed, 'POST', '/api/admin/projects/default/features/push.a/environments/development/on', {
        authorization: ADMIN_TOKEN,
      });
      expect(written.status).toBe(200);
      expect(flagsIn((await stream.next(5000)).data)).toEqual([['feature-updated', 'push.a', true]]);
      expect(listening()).toBe(false);
      // Not listening: the tick is SDK_REVISION_CHECK_MS (200 ms), not the 10-minute fallback.
      const revision = await writeElsewhere('push.a', false);
      const updated = await stream.next(5000);
      expect(Number(updated.id)).toBe(revision);
    } finally {
      await stream.cancel();
    }
  });
});
