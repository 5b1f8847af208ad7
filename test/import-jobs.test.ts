import { createExecutionContext, createMessageBatch, createScheduledController, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import worker from '../src/index';
import type { Env } from '../src/env';
import { STUCK_AFTER_MS, activeJobGuard, backoffSeconds, failStuckImportJobs, type JobStatus } from '../src/admin/import-export/jobs';
import { forgetSnapshots, snapshotFor } from '../src/sdk/client-api/snapshot';
import { routes as importExportRoutes } from '../src/admin/import-export/routes';
import { GrantAccess } from '../src/auth/access';
import { chunkStatements } from '../src/admin/import-export/store/chunk';
import { UPDATE_FEATURE } from '../src/auth/permissions';
import type { UserPrincipal } from '../src/auth/principal';
import type { IRequest } from 'itty-router';
import {
  emptyRows,
  partText,
  type ImportContext,
  type PreparedDependency,
  type StagedEnvironment,
  type StagedFeature,
  type StagedStrategy,
  type StagedTag,
} from '../src/admin/import-export/plan';
import type { ImportChunkMessage } from '../src/admin/import-export/queue-message';
import { bodyOf, call, expectError, UUID } from './support/http';
import { captureLogs } from './support/logs';
import { maxEventId, payload, waitForJob } from './support/import';
import { count, rows } from './support/db';
import { createProject } from './support/admin';
import { unique } from './support/names';

const IMPORT = '/api/admin/features-batch/import';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Job = JobStatus;

function features(prefix: string, n: number) {
  return Array.from({ length: n }, (_, i) => ({ name: `${prefix}-${String(i).padStart(4, '0')}` }));
}

interface TestChunk {
  features: StagedFeature[];
  strategies: StagedStrategy[];
  environments: StagedEnvironment[];
  tags: StagedTag[];
  dependencies: PreparedDependency[];
}

const CONTEXT: Omit<ImportContext, 'project' | 'environment'> = {
  defaultStickiness: 'default',
  segmentMap: {},
  skip: [],
  auto: {
    name: 'flexibleRollout',
    title: null,
    parameters: { rollout: '100', stickiness: 'default', groupId: '' },
    constraints: [],
    variants: [],
  },
  tagTypes: [],
  contextFields: [],
};

/** A queued job as the import route leaves it: context, chunk rows, and each chunk's rows as one staged part. */
async function insertJob(project: string, environment: string, chunks: TestChunk[], context: Partial<ImportContext> = {}): Promise<string> {
  const id = crypto.randomUUID();
  await env.DB.prepare(
    `INSERT INTO import_jobs (id, project, environment, status, total_chunks, total_features, created_by, created_by_user_id, queued_at, context)
     VALUES (?, ?, ?, 'queued', ?, ?, 'tester', -42, ?, ?)`,
  )
    .bind(
      id,
      project,
      environment,
      chunks.length,
      chunks.reduce((sum, chunk) => sum + chunk.features.length, 0),
      new Date().toISOString(),
      JSON.stringify({ ...CONTEXT, ...context, project, environment }),
    )
    .run();
  for (const [index, chunk] of chunks.entries()) {
    const rows = {
      ...emptyRows(),
      ...Object.fromEntries(Object.entries(chunk).map(([key, items]) => [key, items.map((item: unknown) => JSON.stringify(item))])),
    };
    const kind = chunk.dependencies.length > 0 ? 'dependencies' : 'features';
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO import_job_chunks (job_id, chunk_index, payload, feature_count) VALUES (?, ?, json_object('kind', ?), ?)",
      ).bind(id, index, kind, chunk.features.length),
      env.DB.prepare('INSERT INTO import_job_parts (job_id, chunk_index, part, payload) VALUES (?, ?, 0, jsonb(?))').bind(
        id,
        index,
        partText(rows),
      ),
    ]);
  }
  return id;
}

function chunk(parts: Partial<TestChunk>): TestChunk {
  return { features: [], strategies: [], environments: [], tags: [], dependencies: [], ...parts };
}

async function deliver(queue: string, jobId: string, chunkIndex: number, attempts = 1) {
  const batch = createMessageBatch<ImportChunkMessage>(queue, [
    { id: crypto.randomUUID(), timestamp: Date.now(), attempts, body: { jobId, chunkIndex } },
  ]);
  const ctx = createExecutionContext();
  await worker.queue!(batch, env);
  return getQueueResult(batch, ctx);
}

describe('large imports go through the queue', () => {
  it('answers 202 with a Location, applies every chunk, resolves dependencies across chunks and writes an event per chunk', async () => {
    const prefix = unique('bulk');
    const list = features(prefix, 2_105);
    const first = list[0]!.name;
    const last = list[2_104]!.name;
    const before = await maxEventId();
    const response = await call('POST', IMPORT, {
      body: payload({
        features: list,
        featureStrategies: [{ name: 'default', featureName: last }],
        featureEnvironments: [{ name: 'development', featureName: last, enabled: true }],
        featureTags: [{ featureName: last, tagType: 'simple', tagValue: 'bulk-tag' }],
        // The child lives in the second chunk (2,000 features each), its parent in the first.
        dependencies: [{ feature: last, dependencies: [{ feature: first, enabled: false }] }],
      }),
    });
    expect(response.status).toBe(202);
    const location = response.headers.get('location')!;
    expect(location).toMatch(/^\/api\/admin\/features-batch\/import\/jobs\/[0-9a-f-]{36}$/);
    const accepted = await bodyOf<Job>(response);
    expect(Object.keys(accepted)).toEqual([
      'id',
      'status',
      'project',
      'environment',
      'totalChunks',
      'doneChunks',
      'totalFeatures',
      'errors',
      'createdAt',
      'startedAt',
      'finishedAt',
    ]);
    expect(accepted).toMatchObject({
      status: 'queued',
      project: 'default',
      environment: 'development',
      totalChunks: 3,
      doneChunks: 0,
      totalFeatures: 2_105,
      errors: [],
    });
    expect(accepted.id).toMatch(UUID);

    const job = await waitForJob(location);
    expect(job).toMatchObject({ id: accepted.id, status: 'completed', totalChunks: 3, doneChunks: 3, totalFeatures: 2_105, errors: [] });
    expect(job.createdAt).toMatch(ISO);
    expect(job.startedAt).toMatch(ISO);
    expect(job.finishedAt).toMatch(ISO);

    expect(await count('SELECT count(*) AS n FROM features WHERE name LIKE ?', `${prefix}-%`)).toBe(2_105);
    expect(await count('SELECT count(*) AS n FROM feature_lifecycles WHERE feature LIKE ?', `${prefix}-%`)).toBe(2_105);
    expect(await count('SELECT count(*) AS n FROM feature_environments WHERE feature_name LIKE ?', `${prefix}-%`)).toBe(4_210);
    expect(await rows('SELECT parent, child, enabled FROM dependent_features WHERE child = ?', last)).toEqual([
      { parent: first, child: last, enabled: 0 },
    ]);
    expect(await rows("SELECT enabled FROM feature_environments WHERE feature_name = ? AND environment = 'development'", last)).toEqual([
      { enabled: 1 },
    ]);
    expect(await rows('SELECT tag_value FROM feature_tag WHERE feature_name = ?', last)).toEqual([{ tag_value: 'bulk-tag' }]);
    // One event per applied chunk, written with it: the last one says the import is complete.
    const events = await rows<{ type: string; data: string }>('SELECT type, data FROM events WHERE id > ? ORDER BY id', before);
    expect(events.map((event) => event.type)).toEqual(['features-imported', 'features-imported', 'features-imported']);
    const data = events.map(
      (event) => JSON.parse(event.data) as { jobId: string; chunk: number; chunks: number; features: number; completed: boolean },
    );
    expect(data.map((entry) => entry.chunk).sort()).toEqual([0, 1, 2]);
    expect(data.every((entry) => entry.jobId === accepted.id && entry.chunks === 3)).toBe(true);
    expect(data.map((entry) => entry.completed)).toEqual([false, false, true]);
    expect(data.reduce((sum, entry) => sum + entry.features, 0)).toBe(2_105);
    // Applied chunks give their staged rows back.
    expect(await count("SELECT count(*) AS n FROM import_job_chunks WHERE job_id = ? AND status = 'done'", accepted.id)).toBe(3);
    expect(await count('SELECT count(*) AS n FROM import_job_parts WHERE job_id = ?', accepted.id)).toBe(0);
  });

  it('queues a second import into the same project/environment behind the first', async () => {
    const project = unique('serial');
    await createProject(project, ['development']);
    const prefix = unique('serial-f');
    const list = features(prefix, 2_001);
    const shared = list[0]!.name;
    const firstResponse = await call('POST', IMPORT, {
      body: payload({ features: list.map((f) => ({ ...f, description: 'first' })) }, project),
    });
    expect(firstResponse.status).toBe(202);
    // Small, but the first job is still queued: it becomes a job too, and waits its turn.
    const secondResponse = await call('POST', IMPORT, { body: payload({ features: [{ name: shared, description: 'second' }] }, project) });
    expect(secondResponse.status).toBe(202);
    const firstJob = await waitForJob(firstResponse.headers.get('location')!);
    const secondJob = await waitForJob(secondResponse.headers.get('location')!, 40_000);
    expect(firstJob.status).toBe('completed');
    expect(secondJob.status).toBe('completed');
    expect(secondJob.startedAt! >= firstJob.finishedAt!).toBe(true);
    expect(await rows('SELECT description FROM features WHERE name = ?', shared)).toEqual([{ description: 'second' }]);
  });

  it('GET on an unknown job answers 404', async () => {
    const error = await expectError(await call('GET', `${IMPORT}/jobs/${crypto.randomUUID()}`), 404, 'NotFoundError');
    expect(error.message).toMatch(/^Could not find import job /);
    await expectError(await call('GET', `${IMPORT}/jobs/x`, { token: null }), 401, 'AuthenticationRequired');
  });
});

describe('the queue consumer', () => {
  it('applies a redelivered chunk only once', async () => {
    const name = unique('redeliver');
    const payloadChunk = chunk({
      features: [feature(name)],
      strategies: [strategy(name)],
      tags: [{ featureName: name, type: 'simple', value: 'once' }],
    });
    const jobId = await insertJob('default', 'development', [payloadChunk]);
    const before = await maxEventId();
    const first = await deliver('unleash-import', jobId, 0);
    expect(first.explicitAcks).toHaveLength(1);
    const snapshot = await rows('SELECT id, strategy_name FROM feature_strategies WHERE feature_name = ?', name);
    const second = await deliver('unleash-import', jobId, 0);
    expect(second.explicitAcks).toHaveLength(1);
    expect(second.retryMessages).toEqual([]);
    expect(await rows('SELECT id, strategy_name FROM feature_strategies WHERE feature_name = ?', name)).toEqual(snapshot);
    expect(snapshot).toHaveLength(1);
    expect(await count('SELECT count(*) AS n FROM feature_tag WHERE feature_name = ?', name)).toBe(1);
    expect(await count('SELECT count(*) AS n FROM events WHERE id > ?', before)).toBe(1);
    expect(await rows('SELECT status, done_chunks FROM import_jobs WHERE id = ?', jobId)).toEqual([
      { status: 'completed', done_chunks: 1 },
    ]);
  });

  it('retries a failing chunk with backoff, then the dead-letter queue marks the job failed with the reason', async () => {
    const good = unique('good');
    const tagged = unique('tagged');
    const jobId = await insertJob('default', 'development', [
      chunk({ features: [{ name: good, description: null, type: 'release', stale: false, impressionData: false, archived: false }] }),
      // A tag of a type that exists nowhere: the foreign key refuses it (a write error the
      // reference checks do not foresee).
      chunk({
        features: [{ name: tagged, description: null, type: 'release', stale: false, impressionData: false, archived: false }],
        tags: [{ featureName: tagged, type: unique('no-such-type'), value: 'x' }],
      }),
    ]);
    expect((await deliver('unleash-import', jobId, 0)).explicitAcks).toHaveLength(1);
    // The failure is logged as a warning: captured and checked here rather than printed.
    const warnings: unknown[] = [];
    const warn = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void warnings.push(...args));
    const failing = await deliver('unleash-import', jobId, 1, 3).finally(() => warn.mockRestore());
    expect(warnings).toEqual([expect.objectContaining({ level: 'warn', msg: 'import chunk failed', jobId, chunkIndex: 1, attempts: 3 })]);
    expect(failing.explicitAcks).toEqual([]);
    // (The test runtime records the retry but not its delay; backoffSeconds is checked below.)
    expect(failing.retryMessages).toEqual([{ msgId: expect.any(String) }]);
    const running = await bodyOf<Job>(await call('GET', `${IMPORT}/jobs/${jobId}`));
    expect(running).toMatchObject({ status: 'running', doneChunks: 1, totalChunks: 2 });
    expect(running.errors).toEqual([{ message: expect.stringContaining('FOREIGN KEY constraint failed'), chunk: 1 }]);

    const dead = await deliver('unleash-import-dlq', jobId, 1);
    expect(dead.explicitAcks).toHaveLength(1);
    const failed = await bodyOf<Job>(await call('GET', `${IMPORT}/jobs/${jobId}`));
    expect(failed).toMatchObject({ status: 'failed', doneChunks: 1, totalChunks: 2 });
    expect(failed.finishedAt).toMatch(ISO);
    expect(failed.errors).toEqual([
      { message: expect.stringMatching(/^Chunk 1 was not applied after all retries: .*FOREIGN KEY constraint failed/), chunk: 1 },
    ]);
    expect(await rows('SELECT status FROM import_job_chunks WHERE job_id = ? ORDER BY chunk_index', jobId)).toEqual([
      { status: 'done' },
      { status: 'failed' },
    ]);
    // The chunk that applied wrote its event; the failure writes one that says what stays applied.
    const events = await rows<{ type: string; data: string; created_by: string }>(
      'SELECT type, data, created_by FROM events WHERE data LIKE ? ORDER BY id',
      `%${jobId}%`,
    );
    expect(events.map((event) => [event.type, event.created_by])).toEqual([
      ['features-imported', 'tester'],
      ['features-import-failed', 'tester'],
    ]);
    expect(JSON.parse(events[0]!.data)).toEqual({ jobId, chunk: 0, chunks: 2, features: 1, completed: false });
    expect(JSON.parse(events[1]!.data)).toEqual({
      jobId,
      appliedChunks: 1,
      chunks: 2,
      appliedFeatures: 1,
      reason: failed.errors[0]!.message,
    });
    // Later deliveries do nothing.
    expect((await deliver('unleash-import', jobId, 1)).explicitAcks).toHaveLength(1);
    expect(await rows('SELECT status FROM import_jobs WHERE id = ?', jobId)).toEqual([{ status: 'failed' }]);
  });

  it('backs off exponentially, up to a minute', () => {
    expect([1, 2, 3, 5, 6, 10].map(backoffSeconds)).toEqual([2, 4, 8, 32, 60, 60]);
  });

  it('acknowledges messages of jobs that no longer exist', async () => {
    const result = await deliver('unleash-import', crypto.randomUUID(), 0);
    expect(result.explicitAcks).toHaveLength(1);
  });
});

function feature(name: string): StagedFeature {
  return { name, description: null, type: 'release', stale: false, impressionData: false, archived: false };
}

function strategy(featureName: string, segments: number[] = []): StagedStrategy {
  return {
    id: crypto.randomUUID(),
    featureName,
    name: 'default',
    title: null,
    parameters: {},
    constraints: [],
    variants: [],
    sortOrder: 0,
    disabled: false,
    segments,
  };
}

async function jobRow(jobId: string) {
  return (
    await rows<{ status: string; done_chunks: number; errors: string }>(
      'SELECT status, done_chunks, errors FROM import_jobs WHERE id = ?',
      jobId,
    )
  )[0]!;
}

describe('what SDKs and the audit log see of a job while it runs', () => {
  it('moves the SDK data revision with every applied chunk, so a warm isolate serves what D1 holds', async () => {
    const [a, b] = [unique('rev-a'), unique('rev-b')];
    const jobId = await insertJob('default', 'development', [chunk({ features: [feature(a)] }), chunk({ features: [feature(b)] })]);
    forgetSnapshots();
    const eager: Env = { ...(env as unknown as Env), SDK_REVISION_CHECK_MS: '0' };
    const warm = await snapshotFor(eager, 'development');
    expect(warm.byName.has(a)).toBe(false);

    await deliver('unleash-import', jobId, 0);
    const afterFirst = await snapshotFor(eager, 'development');
    expect(afterFirst.revision).toBeGreaterThan(warm.revision);
    expect(afterFirst.byName.has(a)).toBe(true);
    expect(afterFirst.byName.has(b)).toBe(false);
    // The ETag the client API sends is built from the revision: a cold isolate (which reads
    // D1 afresh) and this warm one now agree on both.
    forgetSnapshots();
    expect((await snapshotFor(eager, 'development')).revision).toBe(afterFirst.revision);

    await deliver('unleash-import', jobId, 1);
    const afterSecond = await snapshotFor(eager, 'development');
    expect(afterSecond.revision).toBeGreaterThan(afterFirst.revision);
    expect(afterSecond.byName.has(b)).toBe(true);
  });
});

describe('cancelling a job', () => {
  it('stops a running job: applied chunks stay, the rest is skipped and its staged rows deleted, and an event says so', async () => {
    const [a, b] = [unique('cancel-a'), unique('cancel-b')];
    const jobId = await insertJob('default', 'development', [chunk({ features: [feature(a)] }), chunk({ features: [feature(b)] })]);
    await deliver('unleash-import', jobId, 0);
    const response = await call('DELETE', `${IMPORT}/jobs/${jobId}`);
    expect(response.status).toBe(200);
    const job = await bodyOf<Job>(response);
    expect(job).toMatchObject({ id: jobId, status: 'cancelled', doneChunks: 1, totalChunks: 2 });
    expect(job.finishedAt).toMatch(ISO);
    expect(job.errors).toEqual([{ message: 'Cancelled by admin.' }]);
    expect(await rows('SELECT status FROM import_job_chunks WHERE job_id = ? ORDER BY chunk_index', jobId)).toEqual([
      { status: 'done' },
      { status: 'skipped' },
    ]);
    expect(await count('SELECT count(*) AS n FROM import_job_parts WHERE job_id = ?', jobId)).toBe(0);
    const events = await rows<{ type: string; data: string }>(
      "SELECT type, data FROM events WHERE type = 'features-import-cancelled' AND data LIKE ?",
      `%${jobId}%`,
    );
    expect(events.map((event) => JSON.parse(event.data))).toEqual([
      { jobId, appliedChunks: 1, chunks: 2, appliedFeatures: 1, reason: 'Cancelled by admin.' },
    ]);

    // The skipped chunk's message is acknowledged and changes nothing.
    const later = await deliver('unleash-import', jobId, 1);
    expect(later.explicitAcks).toHaveLength(1);
    expect(later.retryMessages).toEqual([]);
    expect(await count('SELECT count(*) AS n FROM features WHERE name = ?', b)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM features WHERE name = ?', a)).toBe(1);

    // Once over, it cannot be cancelled again.
    const again = await expectError(await call('DELETE', `${IMPORT}/jobs/${jobId}`), 409, 'ConflictError');
    expect(again.message).toBe(`Import job ${jobId} has already ended (cancelled) and cannot be cancelled.`);
  });

  it('answers 404 for an unknown job, 409 for a completed one, and refuses SDK keys', async () => {
    const error = await expectError(await call('DELETE', `${IMPORT}/jobs/${crypto.randomUUID()}`), 404, 'NotFoundError');
    expect(error.message).toMatch(/^Could not find import job /);
    const jobId = await insertJob('default', 'development', [chunk({ features: [feature(unique('done'))] })]);
    await deliver('unleash-import', jobId, 0);
    await expectError(await call('DELETE', `${IMPORT}/jobs/${jobId}`), 409, 'ConflictError');
    const queued = await insertJob('default', 'development', [chunk({ features: [feature(unique('q'))] })]);
    await expectError(await call('DELETE', `${IMPORT}/jobs/${queued}`, { token: null }), 401, 'AuthenticationRequired');
    expect((await jobRow(queued)).status).toBe('queued');
    expect((await bodyOf<Job>(await call('DELETE', `${IMPORT}/jobs/${queued}`))).status).toBe('cancelled');
  });
});

describe('a chunk batch of a job that ended meanwhile', () => {
  it("fails whole, so that a cancel between the consumer's read and its write changes nothing", async () => {
    const jobId = await insertJob('default', 'development', [chunk({ features: [feature(unique('guard'))] })]);
    const write = (name: string) =>
      env.DB.prepare("INSERT INTO features (name, project, type, created_at) VALUES (?, 'default', 'release', datetime('now'))").bind(name);
    const [before, after] = [unique('guarded-before'), unique('guarded-after')];
    await env.DB.batch([activeJobGuard(env.DB, jobId), write(before)]);
    expect(await count('SELECT count(*) AS n FROM features WHERE name = ?', before)).toBe(1);
    expect((await call('DELETE', `${IMPORT}/jobs/${jobId}`)).status).toBe(200);
    await expect(env.DB.batch([activeJobGuard(env.DB, jobId), write(after)])).rejects.toThrow();
    expect(await count('SELECT count(*) AS n FROM features WHERE name = ?', after)).toBe(0);
  });
});

describe('who may cancel a job', () => {
  const cancelJob = importExportRoutes.find((declared) => declared.operationId === 'cancelImportJob')!.handler;
  /** The handler as the router calls it, for a signed-in person holding `grants`. */
  async function cancelAs(jobId: string, grants: ConstructorParameters<typeof GrantAccess>[0]) {
    const request = Object.assign(new Request(`http://localhost${IMPORT}/jobs/${jobId}`, { method: 'DELETE' }), {
      params: { id: jobId },
      query: {},
      route: '',
    }) as unknown as IRequest;
    const principal: UserPrincipal = {
      kind: 'user',
      userId: 7,
      actorName: 'dana',
      via: 'session',
      credentialId: 's',
      access: new GrantAccess(grants),
    };
    try {
      return await cancelJob({
        request,
        env: env as unknown as Env,
        ctx: createExecutionContext(),
        principal,
        params: { id: jobId },
        query: undefined,
        body: undefined,
      });
    } catch (error) {
      return error as { status: number; name: string; message: string };
    }
  }

  it("needs what an import needs, updating feature flags, in the job's project", async () => {
    const project = unique('perm');
    await createProject(project, ['development']);
    const jobId = await insertJob(project, 'development', [chunk({ features: [feature(unique('perm-f'))] })]);
    const refused = await cancelAs(jobId, [{ permission: UPDATE_FEATURE, project: 'default', environment: null }]);
    expect(refused).toMatchObject({ status: 403, name: 'NoAccessError', message: expect.stringContaining('"Update feature flags"') });
    expect((await jobRow(jobId)).status).toBe('queued');
    const allowed = await cancelAs(jobId, [{ permission: UPDATE_FEATURE, project, environment: null }]);
    expect(allowed).toBeInstanceOf(Response);
    expect(await bodyOf<Job>(allowed as Response)).toMatchObject({ status: 'cancelled', errors: [{ message: 'Cancelled by dana.' }] });
    expect(
      await rows(
        "SELECT created_by, created_by_user_id FROM events WHERE type = 'features-import-cancelled' AND data LIKE ?",
        `%${jobId}%`,
      ),
    ).toEqual([{ created_by: 'dana', created_by_user_id: 7 }]);
  });
});

describe('the watchdog for stuck jobs', () => {
  it('fails the first job of a project/environment that made no progress, with a reason, and leaves waiting and fresh jobs alone', async () => {
    const project = unique('stuck');
    await createProject(project, ['development']);
    const old = new Date(Date.now() - STUCK_AFTER_MS - 60_000).toISOString();
    const applied = unique('stuck-a');
    // Running: one chunk applied long ago, the other's message lost (the dead-letter consumer failed).
    const stuck = await insertJob(project, 'development', [
      chunk({ features: [feature(applied)] }),
      chunk({ features: [feature(unique('stuck-b'))] }),
    ]);
    await deliver('unleash-import', stuck, 0);
    await env.DB.batch([
      env.DB.prepare('UPDATE import_jobs SET queued_at = ?, started_at = ? WHERE id = ?').bind(old, old, stuck),
      env.DB.prepare('UPDATE import_job_chunks SET applied_at = ? WHERE job_id = ?').bind(old, stuck),
    ]);
    // Queued behind it, as long ago: waiting, not stuck.
    const behind = await insertJob(project, 'development', [chunk({ features: [feature(unique('behind'))] })]);
    await env.DB.prepare('UPDATE import_jobs SET queued_at = ? WHERE id = ?')
      .bind(new Date(Date.parse(old) + 1).toISOString(), behind)
      .run();
    // First in its own line, queued just now: not stuck.
    const fresh = await insertJob(project, 'production', [chunk({ features: [feature(unique('fresh'))] })]);

    const logs = captureLogs();
    expect(await failStuckImportJobs(env as unknown as Env, Date.now())).toEqual([stuck]);
    const failed = await bodyOf<Job>(await call('GET', `${IMPORT}/jobs/${stuck}`));
    expect(failed).toMatchObject({ status: 'failed', doneChunks: 1 });
    expect(failed.errors).toEqual([
      { message: expect.stringMatching(/^The import made no progress for 15 minutes: its queue messages were lost/) },
    ]);
    expect(await rows('SELECT status FROM import_job_chunks WHERE job_id = ? ORDER BY chunk_index', stuck)).toEqual([
      { status: 'done' },
      { status: 'skipped' },
    ]);
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'features-import-failed' AND data LIKE ?", `%${stuck}%`)).toBe(1);
    expect((await jobRow(behind)).status).toBe('queued');
    expect((await jobRow(fresh)).status).toBe('queued');

    // The job behind it is now first in line; the previous job just ended, so it is not stuck yet.
    expect(await failStuckImportJobs(env as unknown as Env, Date.now())).toEqual([]);
    // Nor within the quarter of an hour after that...
    expect(await failStuckImportJobs(env as unknown as Env, Date.now() + STUCK_AFTER_MS - 60_000)).toEqual([]);
    // ...but then it is, if nothing happened meanwhile.
    expect(await failStuckImportJobs(env as unknown as Env, Date.now() + STUCK_AFTER_MS + 60_000)).toEqual(
      expect.arrayContaining([behind]),
    );
    // Each watchdog run that failed a job says so, as a warning.
    expect(logs.entries.filter((entry) => entry.msg === 'stuck import jobs failed')).toEqual([
      expect.objectContaining({ level: 'warn', jobs: [stuck] }),
      expect.objectContaining({ level: 'warn', jobs: expect.arrayContaining([behind]) }),
    ]);
  });

  it('runs from the scheduled handler', async () => {
    const jobId = await insertJob('default', 'test', [chunk({ features: [feature(unique('cron'))] })]);
    const old = new Date(Date.now() - STUCK_AFTER_MS - 60_000).toISOString();
    await env.DB.prepare('UPDATE import_jobs SET queued_at = ? WHERE id = ?').bind(old, jobId).run();
    const controller = createScheduledController({ scheduledTime: Date.now(), cron: '*/5 * * * *' });
    const logs = captureLogs();
    await worker.scheduled!(controller, env);
    expect((await jobRow(jobId)).status).toBe('failed');
    expect(logs.messages()).toContain('stuck import jobs failed');
    expect(logs.entries).toContainEqual(
      expect.objectContaining({ level: 'info', msg: 'scheduled job done', job: 'fail-stuck-import-jobs' }),
    );
  });
});

describe('references that changed while a job waited', () => {
  it('fails the job, without retrying, when a segment its strategies use was deleted', async () => {
    const segment = await env.DB.prepare(
      "INSERT INTO segments (name, constraints, created_at) VALUES (?, '[]', datetime('now')) RETURNING id",
    )
      .bind(unique('seg'))
      .first<{ id: number }>();
    const name = unique('seg-user');
    const jobId = await insertJob('default', 'development', [chunk({ features: [feature(name)], strategies: [strategy(name, [7])] })], {
      segmentMap: { '7': segment!.id },
    });
    await env.DB.prepare('DELETE FROM segments WHERE id = ?').bind(segment!.id).run();
    const result = await deliver('unleash-import', jobId, 0);
    expect(result.explicitAcks).toHaveLength(1);
    expect(result.retryMessages).toEqual([]);
    const job = await jobRow(jobId);
    expect(job.status).toBe('failed');
    expect(JSON.parse(job.errors)).toEqual([
      { message: `Chunk 0 cannot be applied: these segments were deleted (ids): ${segment!.id}.`, chunk: 0 },
    ]);
    expect(await count('SELECT count(*) AS n FROM features WHERE name = ?', name)).toBe(0);
  });

  it('fails the job when a parent of its dependencies was deleted', async () => {
    const [parent, child] = [unique('parent'), unique('child')];
    const jobId = await insertJob('default', 'development', [
      chunk({ features: [feature(parent), feature(child)] }),
      chunk({ dependencies: [{ parent, child, enabled: true, variants: [] }] }),
    ]);
    await deliver('unleash-import', jobId, 0);
    await env.DB.prepare('DELETE FROM features WHERE name = ?').bind(parent).run();
    const result = await deliver('unleash-import', jobId, 1);
    expect(result.retryMessages).toEqual([]);
    const job = await jobRow(jobId);
    expect(job.status).toBe('failed');
    expect(JSON.parse(job.errors)).toEqual([
      {
        message: `Chunk 1 cannot be applied: these dependencies name a feature that is no longer in project default: ${parent} -> ${child}.`,
        chunk: 1,
      },
    ]);
    expect(await rows('SELECT status FROM import_job_chunks WHERE job_id = ? ORDER BY chunk_index', jobId)).toEqual([
      { status: 'done' },
      { status: 'failed' },
    ]);
  });

  it('fails the job instead of replacing the strategies and tags of a feature that moved to another project', async () => {
    const other = unique('moved-to');
    await createProject(other, ['development']);
    const name = unique('moved');
    const jobId = await insertJob('default', 'development', [
      chunk({ features: [feature(name)], strategies: [strategy(name)], tags: [{ featureName: name, type: 'simple', value: 'imported' }] }),
    ]);
    // After the job was validated, the feature turns up in another project with a strategy of its own.
    const own = strategy(name);
    await env.DB.batch([
      env.DB.prepare("INSERT INTO features (name, project, type, created_at) VALUES (?, ?, 'release', datetime('now'))").bind(name, other),
      env.DB.prepare(
        "INSERT INTO feature_strategies (id, feature_name, project_name, environment, strategy_name, parameters, constraints, variants, sort_order, created_at) VALUES (?, ?, ?, 'development', 'default', '{}', '[]', '[]', 0, datetime('now'))",
      ).bind(own.id, name, other),
    ]);
    const result = await deliver('unleash-import', jobId, 0);
    expect(result.retryMessages).toEqual([]);
    const job = await jobRow(jobId);
    expect(job.status).toBe('failed');
    expect(JSON.parse(job.errors)[0].message).toBe(
      `Chunk 0 cannot be applied: these features are now in another project: ${name} (in project ${other}).`,
    );
    expect(await rows('SELECT id FROM feature_strategies WHERE feature_name = ?', name)).toEqual([{ id: own.id }]);
    expect(await count('SELECT count(*) AS n FROM feature_tag WHERE feature_name = ?', name)).toBe(0);
  });

  it('fails the job when a feature its strategies hang off was deleted', async () => {
    const name = unique('gone');
    await env.DB.prepare("INSERT INTO features (name, project, type, created_at) VALUES (?, 'default', 'release', datetime('now'))")
      .bind(name)
      .run();
    const jobId = await insertJob('default', 'development', [chunk({ strategies: [strategy(name)] })]);
    await env.DB.prepare('DELETE FROM features WHERE name = ?').bind(name).run();
    const result = await deliver('unleash-import', jobId, 0);
    expect(result.retryMessages).toEqual([]);
    expect(JSON.parse((await jobRow(jobId)).errors)[0].message).toBe(`Chunk 0 cannot be applied: these features were deleted: ${name}.`);
  });
});

describe('chunk statements', () => {
  it('leave a feature of another project alone even if a chunk names it (the race the re-check cannot close)', async () => {
    const other = unique('elsewhere');
    await createProject(other, ['development']);
    const name = unique('elsewhere-f');
    const own = strategy(name);
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO features (name, project, type, description, created_at) VALUES (?, ?, 'release', 'theirs', datetime('now'))",
      ).bind(name, other),
      env.DB.prepare("INSERT INTO feature_environments (feature_name, environment, enabled) VALUES (?, 'development', 0)").bind(name),
      env.DB.prepare(
        "INSERT INTO feature_strategies (id, feature_name, project_name, environment, strategy_name, parameters, constraints, variants, sort_order, created_at) VALUES (?, ?, ?, 'development', 'default', '{}', '[]', '[]', 0, datetime('now'))",
      ).bind(own.id, name, other),
      env.DB.prepare("INSERT INTO tags (type, value, created_at) VALUES ('simple', 'theirs', datetime('now')) ON CONFLICT DO NOTHING"),
      env.DB.prepare(
        "INSERT INTO feature_tag (feature_name, tag_type, tag_value, created_at) VALUES (?, 'simple', 'theirs', datetime('now'))",
      ).bind(name),
    ]);
    const staged = {
      ...emptyRows(),
      features: [JSON.stringify(feature(name))],
      strategies: [JSON.stringify(strategy(name))],
      environments: [JSON.stringify({ featureName: name, enabled: true, variants: [], autoId: crypto.randomUUID() })],
      tags: [JSON.stringify({ featureName: name, type: 'simple', value: 'ours' })],
    };
    const context: ImportContext = { ...CONTEXT, project: 'default', environment: 'development' };
    await env.DB.batch(
      chunkStatements(env.DB, context, { userId: -42, actorName: 'tester', now: new Date().toISOString() }, { rows: staged }),
    );
    expect(await rows('SELECT project, description FROM features WHERE name = ?', name)).toEqual([
      { project: other, description: 'theirs' },
    ]);
    expect(await rows('SELECT id FROM feature_strategies WHERE feature_name = ?', name)).toEqual([{ id: own.id }]);
    expect(await rows('SELECT tag_value FROM feature_tag WHERE feature_name = ?', name)).toEqual([{ tag_value: 'theirs' }]);
    expect(await rows("SELECT enabled FROM feature_environments WHERE feature_name = ? AND environment = 'development'", name)).toEqual([
      { enabled: 0 },
    ]);
  });
});
