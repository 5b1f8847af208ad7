import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import worker from '../src/index';
import { backoffSeconds, type JobStatus } from '../src/modules/import-export/jobs';
import { emptyRows, partText, type ImportContext, type StagedEnvironment, type StagedFeature, type StagedStrategy, type StagedTag } from '../src/modules/import-export/plan';
import type { ImportChunkMessage } from '../src/modules/import-export/queue-message';
import { bodyOf, call, expectError, UUID } from './support/http';
import { count, createProject, maxEventId, payload, rows, unique, waitForJob } from './import-helpers';

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
}

const CONTEXT: Omit<ImportContext, 'project' | 'environment'> = {
  defaultStickiness: 'default',
  segmentMap: {},
  skip: [],
  auto: { name: 'flexibleRollout', title: null, parameters: { rollout: '100', stickiness: 'default', groupId: '' }, constraints: [], variants: [] },
  tagTypes: [],
  contextFields: [],
};

/** A queued job as the import route leaves it: context, chunk rows, and each chunk's rows as one staged part. */
async function insertJob(project: string, environment: string, chunks: TestChunk[]): Promise<string> {
  const id = crypto.randomUUID();
  await env.DB.prepare(
    `INSERT INTO import_jobs (id, project, environment, status, total_chunks, total_features, created_by, created_by_user_id, queued_at, context)
     VALUES (?, ?, ?, 'queued', ?, ?, 'tester', -42, ?, ?)`,
  )
    .bind(id, project, environment, chunks.length, chunks.reduce((sum, chunk) => sum + chunk.features.length, 0), new Date().toISOString(), JSON.stringify({ ...CONTEXT, project, environment }))
    .run();
  for (const [index, chunk] of chunks.entries()) {
    const rows = { ...emptyRows(), ...Object.fromEntries(Object.entries(chunk).map(([key, items]) => [key, items.map((item: unknown) => JSON.stringify(item))])) };
    await env.DB.batch([
      env.DB.prepare("INSERT INTO import_job_chunks (job_id, chunk_index, payload, feature_count) VALUES (?, ?, json_object('kind', 'features'), ?)").bind(id, index, chunk.features.length),
      env.DB.prepare('INSERT INTO import_job_parts (job_id, chunk_index, part, payload) VALUES (?, ?, 0, jsonb(?))').bind(id, index, partText(rows)),
    ]);
  }
  return id;
}

function chunk(parts: Partial<TestChunk>): TestChunk {
  return { features: [], strategies: [], environments: [], tags: [], ...parts };
}

async function deliver(queue: string, jobId: string, chunkIndex: number, attempts = 1) {
  const batch = createMessageBatch<ImportChunkMessage>(queue, [{ id: crypto.randomUUID(), timestamp: Date.now(), attempts, body: { jobId, chunkIndex } }]);
  const ctx = createExecutionContext();
  await worker.queue!(batch, env);
  return getQueueResult(batch, ctx);
}

describe('large imports go through the queue', () => {
  it('answers 202 with a Location, applies every chunk, resolves dependencies across chunks and writes one event', async () => {
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
    expect(accepted).toMatchObject({ status: 'queued', project: 'default', environment: 'development', totalChunks: 3, doneChunks: 0, totalFeatures: 2_105, errors: [] });
    expect(accepted.id).toMatch(UUID);

    const job = await waitForJob(location);
    expect(job).toMatchObject({ id: accepted.id, status: 'completed', totalChunks: 3, doneChunks: 3, totalFeatures: 2_105, errors: [] });
    expect(job.createdAt).toMatch(ISO);
    expect(job.startedAt).toMatch(ISO);
    expect(job.finishedAt).toMatch(ISO);

    expect(await count('SELECT count(*) AS n FROM features WHERE name LIKE ?', `${prefix}-%`)).toBe(2_105);
    expect(await count('SELECT count(*) AS n FROM feature_lifecycles WHERE feature LIKE ?', `${prefix}-%`)).toBe(2_105);
    expect(await count('SELECT count(*) AS n FROM feature_environments WHERE feature_name LIKE ?', `${prefix}-%`)).toBe(4_210);
    expect(await rows('SELECT parent, child, enabled FROM dependent_features WHERE child = ?', last)).toEqual([{ parent: first, child: last, enabled: 0 }]);
    expect(await rows("SELECT enabled FROM feature_environments WHERE feature_name = ? AND environment = 'development'", last)).toEqual([{ enabled: 1 }]);
    expect(await rows('SELECT tag_value FROM feature_tag WHERE feature_name = ?', last)).toEqual([{ tag_value: 'bulk-tag' }]);
    const events = await rows<{ type: string; data: string }>('SELECT type, data FROM events WHERE id > ?', before);
    expect(events).toEqual([{ type: 'features-imported', data: JSON.stringify({ jobId: accepted.id, features: 2_105 }) }]);
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
    const firstResponse = await call('POST', IMPORT, { body: payload({ features: list.map((f) => ({ ...f, description: 'first' })) }, project) });
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
      features: [{ name, description: null, type: 'release', stale: false, impressionData: false, archived: false }],
      strategies: [
        { id: crypto.randomUUID(), featureName: name, name: 'default', title: null, parameters: {}, constraints: [], variants: [], sortOrder: 0, disabled: false, segments: [] },
      ],
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
    expect(await rows('SELECT status, done_chunks FROM import_jobs WHERE id = ?', jobId)).toEqual([{ status: 'completed', done_chunks: 1 }]);
  });

  it('retries a failing chunk with backoff, then the dead-letter queue marks the job failed with the reason', async () => {
    const good = unique('good');
    const jobId = await insertJob('default', 'development', [
      chunk({ features: [{ name: good, description: null, type: 'release', stale: false, impressionData: false, archived: false }] }),
      // A strategy for a feature that exists nowhere: the foreign key refuses it.
      chunk({
        strategies: [
          { id: crypto.randomUUID(), featureName: unique('ghost'), name: 'default', title: null, parameters: {}, constraints: [], variants: [], sortOrder: 0, disabled: false, segments: [] },
        ],
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
    expect(failed.errors).toEqual([{ message: expect.stringMatching(/^Chunk 1 was not applied after all retries: .*FOREIGN KEY constraint failed/), chunk: 1 }]);
    expect(await rows('SELECT status FROM import_job_chunks WHERE job_id = ? ORDER BY chunk_index', jobId)).toEqual([{ status: 'done' }, { status: 'failed' }]);
    // A failed job writes no completion event, and later deliveries do nothing.
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'features-imported' AND data LIKE ?", `%${jobId}%`)).toBe(0);
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
