/**
 * SDK metrics off the request path: a post is validated and queued; the metrics Queue's
 * consumer merges batches of posts into D1, counting each message once whatever the Queue
 * redelivers, and loses nothing when a flush fails.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import * as v from 'valibot';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../src/index';
import type { Env } from '../src/env';
import { metricsBody, metricsBodySchema, quickMetricsBody } from '../src/sdk/client-api/schema';
import { usageInFlight } from '../src/sdk/client-api/usage-inflight';
import type { UsageMessage } from '../src/sdk/client-api/usage-message';
import { METRICS_DLQ_NAME, METRICS_QUEUE_NAME } from '../src/sdk/client-api/usage-queue';
import { expireMetricsMessages, METRICS_MESSAGE_RETENTION_MS } from '../src/scheduled';
import { count, rows } from './support/db';
import { call, createToken, envWith, expectError } from './support/http';
import { captureLogs } from './support/logs';
import { settleMetrics } from './support/metrics';
import { seedFlag } from './support/sdk-seed';

const HOUR = '2026-11-20T10:00:00.000Z';
let clientToken: string;
let frontendToken: string;

beforeAll(async () => {
  for (const name of ['mq.a', 'mq.b', 'mq.c', 'mq.dup', 'mq.fail', 'mq.lost', 'mq.dead', 'mq.refused', 'mq.split']) {
    await seedFlag({ name, environments: { development: { enabled: true }, production: { enabled: true } } });
  }
  clientToken = await createToken({ tokenName: 'mq-client', type: 'client', environment: 'development' });
  frontendToken = await createToken({ tokenName: 'mq-frontend', type: 'frontend', environment: 'development' });
});

function report(
  appName: string,
  instanceId: string,
  toggles: Record<string, { yes: number; no: number; variants?: Record<string, number> }>,
) {
  const stop = '2026-11-20T10:30:00.000Z';
  return { appName, instanceId, bucket: { start: stop, stop, toggles } };
}

async function cells(appName: string) {
  return rows<{ feature_name: string; yes: number; no: number; variants: string }>(
    'SELECT feature_name, yes, no, variants FROM client_metrics_env WHERE app_name = ? ORDER BY feature_name',
    appName,
  );
}

function message(appName: string, counts: Array<[string, number, number]>, instanceId = 'i-1'): UsageMessage {
  return {
    id: crypto.randomUUID(),
    environment: 'development',
    receivedAt: new Date().toISOString(),
    counts: counts.map(([name, yes, no]) => [name, appName, HOUR, yes, no, {}]),
    instances: [{ appName, instanceId, sdkVersion: 'unleash-node-sdk:6.1.0', clientIp: '10.0.0.1' }],
  };
}

/** How many message ids the flush rows hold (of `messages`, or all). */
async function countedIds(messages?: UsageMessage[]) {
  const query = 'SELECT count(*) AS n FROM metrics_flushes f, json_each(f.message_ids) j';
  if (!messages) return count(query);
  return count(`${query} WHERE j.value IN (SELECT value FROM json_each(?))`, JSON.stringify(messages.map((m) => m.id)));
}

/** Delivers `messages` to the Worker's queue handler as one batch; answers what it acked and retried. */
async function deliver(messages: UsageMessage[], { queue = METRICS_QUEUE_NAME, workerEnv = env as unknown as Env, attempts = 1 } = {}) {
  const batch = createMessageBatch<UsageMessage>(
    queue,
    messages.map((body) => ({ id: body.id, timestamp: new Date(), attempts, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, workerEnv);
  return getQueueResult(batch, ctx);
}

/** A D1 binding whose batches fail: before anything is written, or after the write committed (a lost acknowledgement). */
function failingDb(when: 'before-write' | 'after-write'): D1Database {
  const real = env.DB;
  let batches = 0;
  return new Proxy(real, {
    get(target, property, receiver) {
      if (property === 'batch') {
        return async (statements: D1PreparedStatement[]) => {
          batches++;
          // The first batch of a flush reads; the second writes.
          if (batches < 2) return target.batch(statements);
          if (when === 'before-write') throw new Error('D1_ERROR: simulated outage');
          await target.batch(statements);
          throw new Error('D1_ERROR: simulated network error after commit');
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('POST /api/client/metrics through the metrics queue', () => {
  it('answers 202 at once and counts the sum of all posts, however the queue batches them', async () => {
    const posts = Array.from({ length: 120 }, (_, i) =>
      call('POST', '/api/client/metrics', {
        token: clientToken,
        body: report('mq-sum', `instance-${i}`, {
          'mq.a': { yes: i, no: 1 },
          'mq.b': { yes: 1, no: 0, variants: { red: 1, [i % 2 === 0 ? 'blue' : 'green']: 2 } },
          ...(i % 3 === 0 ? { 'mq.c': { yes: 0, no: 3 } } : {}),
        }),
      }),
    );
    for (const response of await Promise.all(posts)) expect(response.status).toBe(202);
    await settleMetrics();
    const stored = await cells('mq-sum');
    expect(stored.map(({ feature_name, yes, no }) => ({ feature_name, yes, no }))).toEqual([
      { feature_name: 'mq.a', yes: (119 * 120) / 2, no: 120 },
      { feature_name: 'mq.b', yes: 120, no: 0 },
      { feature_name: 'mq.c', yes: 0, no: 3 * 40 },
    ]);
    expect(JSON.parse(stored[1]!.variants)).toEqual({ red: 120, blue: 120, green: 120 });
    expect(await count("SELECT count(*) AS n FROM client_instances WHERE app_name = 'mq-sum'")).toBe(120);
  });

  it('sums posts across separate batches into the same hourly cell', async () => {
    for (const part of [0, 1, 2]) {
      const result = await deliver(Array.from({ length: 10 }, (_, i) => message('mq-batches', [['mq.a', part + i, 1]], `i-${i}`)));
      expect(result.explicitAcks).toHaveLength(10);
      expect(result.retryMessages).toEqual([]);
    }
    expect((await cells('mq-batches')).map(({ yes, no }) => ({ yes, no }))).toEqual([{ yes: 3 * 45 + 10 * 3, no: 30 }]);
  });

  it('cuts a post too large for one message into parts, each counted once, and counts them all', async () => {
    const messagesBefore = await countedIds();
    // 1,500 distinct (flag, app, hour) cells with long app names: several times one message's budget.
    const apps = Array.from({ length: 1500 }, (_, i) => `mq-split-${String(i).padStart(4, '0')}-${'x'.repeat(200)}`);
    const metrics = apps.map((appName, i) => ({
      featureName: 'mq.split',
      appName,
      environment: 'development',
      timestamp: '2026-11-20T10:15:00.000Z',
      yes: i % 5,
      no: 1,
      variants: { red: 1 },
    }));
    const response = await call('POST', '/api/client/metrics/bulk', { token: clientToken, body: { applications: [], metrics } });
    expect(response.status).toBe(202);
    await settleMetrics();
    expect(await countedIds()).toBeGreaterThanOrEqual(messagesBefore + 4);
    const [sums] = await rows<{ cells: number; yes: number; no: number; red: number }>(
      `SELECT count(*) AS cells, sum(yes) AS yes, sum("no") AS "no", sum(json_extract(variants, '$.red')) AS red
       FROM client_metrics_env WHERE feature_name = 'mq.split' AND app_name LIKE 'mq-split-%'`,
    );
    expect(sums).toEqual({ cells: 1500, yes: 300 * (0 + 1 + 2 + 3 + 4), no: 1500, red: 1500 });
  });
});

describe('at-least-once delivery', () => {
  it('counts a batch delivered twice once, and a message twice in one batch once', async () => {
    const messages = [message('mq-twice', [['mq.dup', 2, 1]]), message('mq-twice', [['mq.dup', 5, 0]], 'i-2')];
    const first = await deliver(messages);
    expect([...first.explicitAcks].sort()).toEqual(messages.map((m) => m.id).sort());
    const again = await deliver(messages);
    expect([...again.explicitAcks].sort()).toEqual(messages.map((m) => m.id).sort());
    expect(again.retryMessages).toEqual([]);
    expect((await cells('mq-twice')).map(({ yes, no }) => ({ yes, no }))).toEqual([{ yes: 7, no: 1 }]);

    const doubled = message('mq-twice-in-batch', [['mq.dup', 3, 0]]);
    await deliver([doubled, doubled]);
    expect((await cells('mq-twice-in-batch')).map(({ yes }) => yes)).toEqual([3]);
  });

  it('writes nothing when the flush fails, retries every message, and counts them once when they come back', async () => {
    const messages = [message('mq-fail', [['mq.fail', 4, 0]]), message('mq-fail', [['mq.fail', 1, 1]], 'i-2')];
    const logs = captureLogs();
    const failed = await deliver(messages, { workerEnv: envWith({ DB: failingDb('before-write') }) });
    expect(failed.explicitAcks).toEqual([]);
    expect(failed.retryMessages.map((retry) => retry.msgId).sort()).toEqual(messages.map((m) => m.id).sort());
    expect(logs.entries).toMatchObject([
      {
        level: 'error',
        msg: 'metrics flush failed; its messages will be retried',
        messages: 2,
        error: { message: expect.stringContaining('simulated outage') },
      },
    ]);
    expect(await cells('mq-fail')).toEqual([]);
    expect(await count("SELECT count(*) AS n FROM client_instances WHERE app_name = 'mq-fail'")).toBe(0);
    expect(await countedIds(messages)).toBe(0);

    const retried = await deliver(messages, { attempts: 2 });
    expect(retried.explicitAcks).toHaveLength(2);
    expect((await cells('mq-fail')).map(({ yes, no }) => ({ yes, no }))).toEqual([{ yes: 5, no: 1 }]);
  });

  it('counts once when the flush committed but its acknowledgement was lost', async () => {
    const messages = [message('mq-lost', [['mq.lost', 6, 0]])];
    captureLogs();
    const failed = await deliver(messages, { workerEnv: envWith({ DB: failingDb('after-write') }) });
    expect(failed.retryMessages).toHaveLength(1);
    expect((await cells('mq-lost')).map(({ yes }) => yes)).toEqual([6]);
    const retried = await deliver(messages, { attempts: 2 });
    expect(retried.explicitAcks).toHaveLength(1);
    expect((await cells('mq-lost')).map(({ yes }) => yes)).toEqual([6]);
  });

  it('records the ids of a flush in one row, however many posts it counted', async () => {
    const flushesBefore = await count('SELECT count(*) AS n FROM metrics_flushes');
    const messages = Array.from({ length: 60 }, (_, i) => message('mq-one-row', [['mq.a', 1, 0]], `i-${i}`));
    const result = await deliver(messages);
    expect(result.explicitAcks).toHaveLength(60);
    expect(await count('SELECT count(*) AS n FROM metrics_flushes')).toBe(flushesBefore + 1);
    expect(await countedIds(messages)).toBe(60);
    expect((await cells('mq-one-row')).map(({ yes }) => yes)).toEqual([60]);
  });

  it('counts a message redelivered into another batch once, and its new batch-mates once', async () => {
    const [a, b, c] = [1, 2, 4].map((yes, i) => message('mq-rebatched', [['mq.dup', yes, 0]], `i-${i}`));
    await deliver([a!, b!]);
    const again = await deliver([b!, c!]);
    expect([...again.explicitAcks].sort()).toEqual([b!.id, c!.id].sort());
    expect((await cells('mq-rebatched')).map(({ yes }) => yes)).toEqual([1 + 2 + 4]);
    // Redelivered long after, with fresher messages: still found.
    const old = {
      ...message('mq-rebatched', [['mq.dup', 8, 0]], 'i-old'),
      receivedAt: new Date(Date.now() - 60 * 60 * 1000).toISOString(),
    };
    await deliver([old]);
    await deliver([message('mq-rebatched', [['mq.dup', 16, 0]], 'i-new'), old]);
    expect((await cells('mq-rebatched')).map(({ yes }) => yes)).toEqual([1 + 2 + 4 + 8 + 16]);
  });

  it('a flush that another one overtook (it counted a shared message after this one read) writes nothing; its retry counts the rest once', async () => {
    const shared = message('mq-overtaken', [['mq.dup', 1, 0]], 'i-shared');
    const own = message('mq-overtaken', [['mq.dup', 10, 0]], 'i-own');
    let overtaken = false;
    const racing = new Proxy(env.DB, {
      get(target, property, receiver) {
        if (property === 'batch') {
          return async (statements: D1PreparedStatement[]) => {
            // Between this flush's read and its write, another consumer counts the shared message.
            if (statements.length > 4 && !overtaken) {
              overtaken = true;
              expect((await deliver([shared])).explicitAcks).toEqual([shared.id]);
            }
            return target.batch(statements);
          };
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const logs = captureLogs();
    const first = await deliver([shared, own], { workerEnv: envWith({ DB: racing }) });
    expect(overtaken).toBe(true);
    expect(first.explicitAcks).toEqual([]);
    expect(first.retryMessages.map((retry) => retry.msgId).sort()).toEqual([shared.id, own.id].sort());
    expect(logs.messages()).toEqual(['metrics flush failed; its messages will be retried']);
    expect((await cells('mq-overtaken')).map(({ yes }) => yes)).toEqual([1]);
    expect(await countedIds([own])).toBe(0);

    const retried = await deliver([shared, own], { attempts: 2 });
    expect([...retried.explicitAcks].sort()).toEqual([shared.id, own.id].sort());
    expect((await cells('mq-overtaken')).map(({ yes }) => yes)).toEqual([11]);
  });

  it('recognises a message counted before flushes were recorded one row each (metrics_messages)', async () => {
    const counted = message('mq-legacy', [['mq.dup', 5, 0]]);
    await env.DB.prepare('INSERT INTO metrics_messages (id, processed_at) VALUES (?, ?)').bind(counted.id, new Date().toISOString()).run();
    const fresh = message('mq-legacy', [['mq.dup', 3, 0]], 'i-2');
    const result = await deliver([counted, fresh]);
    expect([...result.explicitAcks].sort()).toEqual([counted.id, fresh.id].sort());
    expect((await cells('mq-legacy')).map(({ yes }) => yes)).toEqual([3]);
  });

  it('forgets a flush once every message it counted was received more than 6 hours ago', async () => {
    const now = Date.now();
    const at = (msAgo: number) => new Date(now - msAgo).toISOString();
    const expired = { ...message('mq-expiry', [['mq.dup', 1, 0]], 'i-1'), receivedAt: at(METRICS_MESSAGE_RETENTION_MS + 60_000) };
    const mixed = { ...message('mq-expiry', [['mq.dup', 1, 0]], 'i-2'), receivedAt: at(METRICS_MESSAGE_RETENTION_MS + 60_000) };
    const recent = { ...message('mq-expiry', [['mq.dup', 1, 0]], 'i-3'), receivedAt: at(METRICS_MESSAGE_RETENTION_MS - 60_000) };
    await deliver([expired]);
    await deliver([mixed, recent]);
    expect(await countedIds([expired, mixed, recent])).toBe(3);
    await expireMetricsMessages.run(env as unknown as Env, new Date(now));
    // The second flush holds a message received within the retention: it stays, with both ids.
    expect(await countedIds([expired, mixed, recent])).toBe(2);
    expect(await countedIds([expired])).toBe(0);
  });

  it('retries a message that cannot be written until the dead-letter queue, which logs the reason; its batch-mates are counted once', async () => {
    const logs = captureLogs();
    const good = message('mq-dead', [['mq.dead', 2, 0]]);
    // An app name of null breaks client_metrics_env's NOT NULL: every merged flush with it fails.
    const poison = { ...message('mq-dead', [['mq.dead', 1, 0]], 'i-2') } as UsageMessage;
    poison.counts = [['mq.dead', null as unknown as string, HOUR, 1, 0, {}]];
    await env.METRICS_QUEUE.sendBatch([
      { body: good, contentType: 'json' },
      { body: poison, contentType: 'json' },
    ]);
    await expect
      .poll(() => logs.entries.some((entry) => entry.msg === 'metrics message dead-lettered: its counts are lost'), { timeout: 20_000 })
      .toBe(true);
    const dead = logs.entries.find((entry) => entry.msg === 'metrics message dead-lettered: its counts are lost')!;
    expect(dead).toMatchObject({ level: 'error', id: poison.id, environment: 'development', counts: 1 });
    expect(JSON.stringify(dead.error)).toContain('NOT NULL');
    expect(logs.messages()).toContain('metrics flush failed; its messages will be retried');
    await expect.poll(async () => (await cells('mq-dead')).map(({ yes }) => yes), { timeout: 20_000 }).toEqual([2]);
  });

  it('the dead-letter consumer applies a message that can be written on its own, once', async () => {
    const logs = captureLogs();
    const late = message('mq-late', [['mq.a', 9, 0]]);
    expect((await deliver([late], { queue: METRICS_DLQ_NAME })).explicitAcks).toEqual([late.id]);
    expect((await deliver([late], { queue: METRICS_DLQ_NAME })).explicitAcks).toEqual([late.id]);
    expect((await cells('mq-late')).map(({ yes }) => yes)).toEqual([9]);
    expect(logs.messages()).toEqual([
      'metrics message applied from the dead-letter queue',
      'metrics message applied from the dead-letter queue',
    ]);
  });
});

describe('refused metrics posts queue nothing', () => {
  async function refusedNothingWritten(response: Promise<Response>, status: number, name: string) {
    await expectError(await response, status, name);
    expect(usageInFlight()).toBe(0);
    await settleMetrics();
    expect(await cells('mq-refused')).toEqual([]);
    expect(await count("SELECT count(*) AS n FROM client_instances WHERE app_name = 'mq-refused'")).toBe(0);
  }
  const body = report('mq-refused', 'i-1', { 'mq.refused': { yes: 1, no: 0 } });

  it('400 for a bad body', async () => {
    await settleMetrics();
    await refusedNothingWritten(
      call('POST', '/api/client/metrics', {
        token: clientToken,
        body: { ...body, bucket: { ...body.bucket, toggles: { 'mq.refused': { yes: -1, no: 0 } } } },
      }),
      400,
      'ValidationError',
    );
    await refusedNothingWritten(
      call('POST', '/api/client/metrics', { token: clientToken, rawBody: '{"appName":' }),
      400,
      'ValidationError',
    );
    await refusedNothingWritten(
      call('POST', '/api/client/metrics/bulk', { token: clientToken, body: { applications: [{ appName: '' }], metrics: [] } }),
      400,
      'ValidationError',
    );
    await refusedNothingWritten(
      call('POST', '/api/frontend/client/metrics', { token: frontendToken, body: { bucket: {} } }),
      400,
      'ValidationError',
    );
  });

  it('401 without a key or with an unknown one, 403 for a key of the wrong kind', async () => {
    await refusedNothingWritten(call('POST', '/api/client/metrics', { token: null, body }), 401, 'AuthenticationRequired');
    await refusedNothingWritten(
      call('POST', '/api/client/metrics', { token: '*:development.unknown-key', body }),
      401,
      'AuthenticationRequired',
    );
    await refusedNothingWritten(call('POST', '/api/client/metrics', { token: frontendToken, body }), 403, 'NoAccessError');
    await refusedNothingWritten(
      call('POST', '/api/client/metrics/bulk', { token: frontendToken, body: { applications: [], metrics: [] } }),
      403,
      'NoAccessError',
    );
    await refusedNothingWritten(call('POST', '/api/frontend/client/metrics', { token: clientToken, body }), 403, 'NoAccessError');
  });
});

describe('the quick path of a metrics body', () => {
  const now = '2026-11-20T10:30:00.000Z';
  const toggles = Object.fromEntries(
    Array.from({ length: 50 }, (_, i) => [`flag.${i}`, { yes: i, no: 1, variants: i % 2 ? { red: i } : {} }]),
  );
  const typical = {
    appName: 'app',
    instanceId: 'i-1',
    sdkVersion: 'unleash-client-node:6.1.0',
    bucket: { start: now, stop: now, toggles },
  };
  const accepted: unknown[] = [
    typical,
    { ...typical, environment: 'development', connectionId: null, extra: { any: 'thing' } },
    { appName: 'app' },
    { appName: 'app', bucket: null },
    { appName: 'app', bucket: { start: '2026-11-20T11:30:00+01:00', stop: '2026-11-20 10:30', toggles: {}, more: 1 } },
    { appName: 'app', bucket: { start: now, stop: now, toggles: { a: { yes: 0, no: 2 ** 31 - 1, variants: null, other: true } } } },
  ];
  const refusedOrUnsure: unknown[] = [
    [],
    null,
    'text',
    { appName: '' },
    { appName: 7 },
    { appName: 'a'.repeat(256) },
    { appName: 'bad\u0000name' },
    { appName: 'app', instanceId: '\ud800' },
    { appName: 'app', sdkVersion: 5 },
    { appName: 'app', bucket: [] },
    { appName: 'app', bucket: { start: 'yesterday', stop: now, toggles: {} } },
    { appName: 'app', bucket: { start: now, stop: now, toggles: [] } },
    { appName: 'app', bucket: { start: now, stop: now, toggles: { a: { yes: -1, no: 0 } } } },
    { appName: 'app', bucket: { start: now, stop: now, toggles: { a: { yes: 1.5, no: 0 } } } },
    { appName: 'app', bucket: { start: now, stop: now, toggles: { a: { yes: 2 ** 31, no: 0 } } } },
    { appName: 'app', bucket: { start: now, stop: now, toggles: { a: { yes: '1', no: 0 } } } },
    { appName: 'app', bucket: { start: now, stop: now, toggles: { a: { no: 0 } } } },
    { appName: 'app', bucket: { start: now, stop: now, toggles: { a: { yes: 1, no: 0, variants: { red: -1 } } } } },
    { appName: 'app', bucket: { start: now, stop: now, toggles: { a: { yes: 1, no: 0, variants: [] } } } },
    JSON.parse(
      `{"appName":"app","bucket":{"start":"${now}","stop":"${now}","toggles":{"__proto__":{"yes":1,"no":0},"b":{"yes":1,"no":0}}}}`,
    ),
    JSON.parse(`{"appName":"app","__proto__":{"x":1}}`),
  ];

  it('answers exactly what valibot answers for the bodies it takes, and takes the usual ones', async () => {
    for (const body of accepted) {
      const quick = quickMetricsBody(body);
      expect(quick, JSON.stringify(body)).toBeDefined();
      const full = v.safeParse(metricsBodySchema, body);
      expect(full.success).toBe(true);
      expect(quick).toEqual(full.output);
    }
  });

  it('leaves everything else to valibot: the same issues, the same output', async () => {
    for (const body of refusedOrUnsure) {
      expect(quickMetricsBody(body), JSON.stringify(body)).toBeUndefined();
      const viaRoute = v.safeParse(metricsBody, body);
      const full = v.safeParse(metricsBodySchema, body);
      expect(viaRoute.success).toBe(full.success);
      if (full.success) expect(viaRoute.output).toEqual(full.output);
      else expect(viaRoute.issues?.map((i) => [i.message, v.getDotPath(i)])).toEqual(full.issues.map((i) => [i.message, v.getDotPath(i)]));
    }
    // At least the bodies above that are simply wrong are refused.
    expect(refusedOrUnsure.filter((body) => !v.safeParse(metricsBodySchema, body).success).length).toBeGreaterThanOrEqual(17);
  });
});
