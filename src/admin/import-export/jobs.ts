/**
 * Large imports: the validated chunks are stored, one Queue message per chunk, and the
 * consumer applies each chunk in one D1 batch that also marks it done — so a redelivered
 * message finds the chunk done and does nothing, and the job's progress can never disagree
 * with the data. That batch also writes the chunk's `features-imported` event, so the SDK
 * data revision and the audit log move with every change D1 sees; the batch that applies
 * the last chunk marks the job completed. A job that fails or is cancelled keeps the chunks
 * it applied and writes one more event saying so.
 */
import { sql } from 'drizzle-orm';
import type { Env } from '../../env';
import { log } from '../../log';
import { DEPENDENCIES_PER_CHUNK, type ChunkKind, type ImportContext } from './plan';
import type { ImportChunkMessage } from './queue-message';
import type { ImportStager } from './staging';
import { chunkReferenceProblems, chunkStatements } from './store/chunk';
import { prepare, rowsOf, runStatements } from './store/statements';

const IMPORT_DLQ_NAME = 'unleash-import-dlq';

/** Queue limits: 100 messages and 256 KB per sendBatch; our messages are tiny. */
const MESSAGES_PER_SEND = 100;
/** How long a waiting chunk sleeps before looking again, and how often it may do so (about an hour). */
const WAIT_SECONDS = 5;
const MAX_WAITS = 720;
/** Job statuses whose chunks are still to be applied. */
const ACTIVE = new Set(['queued', 'running']);

export interface JobStatus {
  id: string;
  status: string;
  project: string;
  environment: string;
  totalChunks: number;
  doneChunks: number;
  totalFeatures: number;
  errors: { message: string; chunk?: number }[];
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export function jobLocation(id: string): string {
  return `/api/admin/features-batch/import/jobs/${id}`;
}

/**
 * Turns a validated, staged import into a queued job: its dependencies (JSON texts) become
 * chunks of their own, every chunk gets its status row, the job its context, and each chunk
 * one message.
 */
export async function queueJob(
  env: Env,
  d1: D1Database,
  stager: ImportStager,
  context: ImportContext,
  dependencies: string[],
  totalFeatures: number,
): Promise<string> {
  const id = await stager.stageAll();
  const featureChunks = stager.featureCounts();
  const chunks: [number, ChunkKind, number][] = featureChunks.map((count, index) => [index, 'features', count]);
  for (let from = 0; from < dependencies.length; from += DEPENDENCIES_PER_CHUNK) {
    const index = chunks.length;
    await stager.stageExtraChunk(index, 'dependencies', dependencies.slice(from, from + DEPENDENCIES_PER_CHUNK));
    chunks.push([index, 'dependencies', 0]);
  }
  const now = new Date().toISOString();
  await runStatements(d1, [
    prepare(
      d1,
      sql`INSERT INTO import_job_chunks (job_id, chunk_index, payload, feature_count)
      SELECT ${id}, value->>0, json_object('kind', value->>1), value->>2 FROM json_each(${JSON.stringify(chunks)}) WHERE true`,
    ),
    // Only now does the job count for ordering: one that died while staging stays invisible
    // instead of holding up later imports, and jobs are applied in the order they were queued.
    prepare(
      d1,
      sql`UPDATE import_jobs SET status = 'queued', queued_at = ${now}, project = ${context.project}, environment = ${context.environment},
      total_chunks = ${chunks.length}, total_features = ${totalFeatures}, context = ${JSON.stringify(context)} WHERE id = ${id}`,
    ),
  ]);
  try {
    for (let i = 0; i < chunks.length; i += MESSAGES_PER_SEND) {
      const messages = chunks.slice(i, i + MESSAGES_PER_SEND).map(([chunkIndex]) => ({ body: { jobId: id, chunkIndex } }));
      await env.IMPORT_QUEUE.sendBatch(messages);
    }
  } catch (error) {
    // Chunks that were never enqueued would leave the job queued forever: say so instead.
    await markFailed(d1, id, [{ message: `The import could not be queued: ${describe(error)}` }]);
    throw error;
  }
  return id;
}

export async function readJob(d1: D1Database, id: string): Promise<JobStatus | null> {
  const row = await d1
    .prepare(
      `SELECT id, status, project, environment, total_chunks, done_chunks, total_features, errors, created_at, started_at, finished_at
       FROM import_jobs WHERE id = ?`,
    )
    .bind(id)
    .first<{
      id: string;
      status: string;
      project: string;
      environment: string;
      total_chunks: number;
      done_chunks: number;
      total_features: number;
      errors: string;
      created_at: string;
      started_at: string | null;
      finished_at: string | null;
    }>();
  if (!row) return null;
  return {
    id: row.id,
    status: row.status,
    project: row.project,
    environment: row.environment,
    totalChunks: row.total_chunks,
    doneChunks: row.done_chunks,
    totalFeatures: row.total_features,
    errors: JSON.parse(row.errors) as JobStatus['errors'],
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}

/** A job that is over without being completed: `failed` (by the consumer or the watchdog) or `cancelled` (by a user). */
export type EndedStatus = 'failed' | 'cancelled';

/**
 * Ends a queued or running job: its pending chunks are skipped and their staged rows
 * deleted. Chunks applied before stay applied (each wrote its own event), and one more event
 * records how the job ended and what it had changed, so the audit log and the SDK data
 * revision (the highest event id) agree with what D1 holds. True when this call ended the job.
 */
export async function endJob(
  d1: D1Database,
  jobId: string,
  status: EndedStatus,
  add: { message: string; chunk?: number }[],
  actor?: { actorName: string; userId: number },
): Promise<boolean> {
  const job = await readJob(d1, jobId);
  if (!job) return false;
  const errors = [...job.errors.filter((error) => !add.some((added) => added.chunk !== undefined && added.chunk === error.chunk)), ...add];
  const now = new Date().toISOString();
  const reason = add.map((error) => error.message).join(' ');
  const active = sql`(id = ${jobId} AND status IN ('queued', 'running'))`;
  const results = await runStatements(d1, [
    // Read before the update below: only the call that ends the job writes the event.
    prepare(
      d1,
      sql`INSERT INTO events (type, created_at, created_by, created_by_user_id, project, environment, data)
      SELECT ${status === 'failed' ? 'features-import-failed' : 'features-import-cancelled'}, ${now},
        coalesce(${actor?.actorName ?? null}, created_by), coalesce(${actor?.userId ?? null}, created_by_user_id), project, environment,
        json_object('jobId', id, 'appliedChunks', done_chunks, 'chunks', total_chunks,
          'appliedFeatures', (SELECT coalesce(sum(feature_count), 0) FROM import_job_chunks WHERE job_id = ${jobId} AND status = 'done'),
          'reason', ${reason})
      FROM import_jobs WHERE ${active}`,
    ),
    // A job that already failed still collects the errors of chunks that fail after it.
    prepare(
      d1,
      sql`UPDATE import_jobs SET errors = ${JSON.stringify(errors)},
      status = CASE WHEN status = 'failed' THEN status ELSE ${status} END, finished_at = coalesce(finished_at, ${now})
      WHERE ${active} OR (id = ${jobId} AND status = 'failed' AND ${status} = 'failed')`,
    ),
    prepare(
      d1,
      sql`UPDATE import_job_chunks SET status = 'skipped' WHERE job_id = ${jobId} AND status = 'pending'
      AND EXISTS (SELECT 1 FROM import_jobs WHERE id = ${jobId} AND status IN ('failed', 'cancelled'))`,
    ),
    // An ended job's chunks are never applied: their staged rows would only take up space.
    prepare(
      d1,
      sql`DELETE FROM import_job_parts WHERE job_id = ${jobId} AND EXISTS (SELECT 1 FROM import_jobs WHERE id = ${jobId} AND status IN ('failed', 'cancelled'))`,
    ),
  ]);
  return (results[0]?.meta.changes ?? 0) > 0;
}

async function markFailed(d1: D1Database, jobId: string, add: { message: string; chunk?: number }[]): Promise<void> {
  await endJob(d1, jobId, 'failed', add);
}

/** Keeps the latest error of a chunk on the job while it is still being retried. */
async function recordAttemptError(d1: D1Database, jobId: string, chunk: number, message: string): Promise<void> {
  const job = await readJob(d1, jobId);
  if (!job) return;
  const errors = [...job.errors.filter((error) => error.chunk !== chunk), { message, chunk }];
  await runStatements(d1, [
    prepare(d1, sql`UPDATE import_jobs SET errors = ${JSON.stringify(errors)} WHERE id = ${jobId}`),
    prepare(d1, sql`UPDATE import_job_chunks SET attempts = attempts + 1 WHERE job_id = ${jobId} AND chunk_index = ${chunk}`),
  ]);
}

type JobRow = { id: string; status: string; created_by: string; created_by_user_id: number | null; context: string | null };

interface ChunkState {
  job: { id: string; status: string; createdBy: string; createdByUserId: number | null; context: ImportContext | null } | undefined;
  chunk: { status: string; kind: ChunkKind } | undefined;
  /** Is a job into the same project/environment that was queued before this one still queued or running? */
  earlierActive: boolean;
  /** Feature chunks of this job not yet done (dependency chunks wait for them). */
  pendingFeatureChunks: number;
}

async function readChunkState(d1: D1Database, message: ImportChunkMessage): Promise<ChunkState> {
  const results = await runStatements(d1, [
    prepare(d1, sql`SELECT id, status, created_by, created_by_user_id, context FROM import_jobs WHERE id = ${message.jobId}`),
    prepare(
      d1,
      sql`SELECT status, payload->>'kind' AS kind FROM import_job_chunks WHERE job_id = ${message.jobId} AND chunk_index = ${message.chunkIndex}`,
    ),
    prepare(
      d1,
      sql`SELECT count(*) AS n FROM import_jobs e, import_jobs j
      WHERE j.id = ${message.jobId} AND e.project = j.project AND e.environment = j.environment AND e.status IN ('queued', 'running')
        AND (e.queued_at < j.queued_at OR (e.queued_at = j.queued_at AND e.rowid < j.rowid))`,
    ),
    prepare(
      d1,
      sql`SELECT count(*) AS n FROM import_job_chunks
      WHERE job_id = ${message.jobId} AND status <> 'done' AND payload->>'kind' = 'features'`,
    ),
  ]);
  const job = rowsOf<JobRow>(results[0])[0];
  const chunks = rowsOf<{ status: string; kind: ChunkKind }>(results[1]);
  const earlier = rowsOf<{ n: number }>(results[2]);
  const pending = rowsOf<{ n: number }>(results[3]);
  return {
    job: job
      ? {
          id: job.id,
          status: job.status,
          createdBy: job.created_by,
          createdByUserId: job.created_by_user_id,
          context: job.context ? (JSON.parse(job.context) as ImportContext) : null,
        }
      : undefined,
    chunk: chunks[0],
    earlierActive: (earlier[0]?.n ?? 0) > 0,
    pendingFeatureChunks: pending[0]?.n ?? 0,
  };
}

/**
 * The first statement of a chunk's batch: a job cancelled or failed since the consumer read
 * its state must not change anything more. D1 cannot branch inside a batch, so this makes the
 * whole batch fail instead (json() of a text that is not JSON raises an error); the
 * redelivered message then finds the job over and is acknowledged.
 */
export function activeJobGuard(d1: D1Database, jobId: string): D1PreparedStatement {
  return prepare(
    d1,
    sql`SELECT CASE WHEN EXISTS (SELECT 1 FROM import_jobs WHERE id = ${jobId} AND status IN ('queued', 'running'))
    THEN 1 ELSE json(${`import job ${jobId} is no longer active`}) END`,
  );
}

/**
 * Applies one chunk, or decides it must wait: then it is put back with a delay, unless
 * `mayDefer`, when the caller gets another chance to run it once the rest of the batch is
 * done. Throws when the write failed (the message is retried).
 */
async function processChunk(
  env: Env,
  d1: D1Database,
  message: Message<ImportChunkMessage>,
  mayDefer: boolean,
): Promise<'done' | 'deferred'> {
  const body = message.body;
  const state = await readChunkState(d1, body);
  const context = state.job?.context;
  if (!state.job || !context || !state.chunk || state.chunk.status !== 'pending' || !ACTIVE.has(state.job.status)) return 'done';

  const kind = state.chunk.kind;
  const mustWait = state.earlierActive || (kind === 'dependencies' && state.pendingFeatureChunks > 0);
  if (mustWait && mayDefer) return 'deferred';
  if (mustWait) {
    const waits = (body.waits ?? 0) + 1;
    if (waits > MAX_WAITS) {
      await markFailed(d1, body.jobId, [
        { message: `Chunk ${body.chunkIndex} waited too long for earlier work to finish.`, chunk: body.chunkIndex },
      ]);
      return 'done';
    }
    await env.IMPORT_QUEUE.send({ ...body, waits }, { delaySeconds: WAIT_SECONDS });
    return 'done';
  }

  const { jobId, chunkIndex } = body;
  // What the job was validated against may have changed while it waited: a segment or a
  // parent deleted, a feature moved to another project. Such a chunk can never apply (or
  // would write into another project): the job fails with the reason instead of retrying.
  const problems = await chunkReferenceProblems(d1, context, { jobId, chunkIndex });
  if (problems.length > 0) {
    await markFailed(d1, jobId, [{ message: `Chunk ${chunkIndex} cannot be applied: ${problems.join(' ')}`, chunk: chunkIndex }]);
    await prepare(
      d1,
      sql`UPDATE import_job_chunks SET status = 'failed' WHERE job_id = ${jobId} AND chunk_index = ${chunkIndex} AND status <> 'done'`,
    ).run();
    return 'done';
  }

  const now = new Date().toISOString();
  const writer = { userId: state.job.createdByUserId ?? 0, actorName: state.job.createdBy, now };
  await runStatements(d1, [
    activeJobGuard(d1, jobId),
    prepare(
      d1,
      sql`UPDATE import_jobs SET status = 'running', started_at = coalesce(started_at, ${now}) WHERE id = ${jobId} AND status = 'queued'`,
    ),
    ...chunkStatements(d1, context, writer, { jobId, chunkIndex }),
    // Once applied, the rows are not needed any more; the chunk keeps its counts.
    prepare(d1, sql`DELETE FROM import_job_parts WHERE job_id = ${jobId} AND chunk_index = ${chunkIndex}`),
    prepare(
      d1,
      sql`UPDATE import_job_chunks SET status = 'done', applied_at = ${now}, attempts = attempts + 1
      WHERE job_id = ${jobId} AND chunk_index = ${chunkIndex}`,
    ),
    prepare(
      d1,
      sql`UPDATE import_jobs SET done_chunks = (SELECT count(*) FROM import_job_chunks WHERE job_id = ${jobId} AND status = 'done'),
      errors = (SELECT coalesce(json_group_array(json(e.value)), '[]') FROM json_each(import_jobs.errors) e WHERE e.value->>'chunk' IS NOT ${chunkIndex})
      WHERE id = ${jobId}`,
    ),
    // Every applied chunk writes its event in the batch that applies it: the SDK data revision
    // (the highest event id) moves whenever D1's flags do, so no isolate keeps serving the old
    // payload under an ETag that the new rows also carry, and the audit log has every change.
    prepare(
      d1,
      sql`INSERT INTO events (type, created_at, created_by, created_by_user_id, project, environment, data)
      SELECT 'features-imported', ${now}, created_by, created_by_user_id, project, environment,
        json_object('jobId', id, 'chunk', ${chunkIndex}, 'chunks', total_chunks,
          'features', (SELECT feature_count FROM import_job_chunks WHERE job_id = ${jobId} AND chunk_index = ${chunkIndex}),
          'completed', json(CASE WHEN done_chunks = total_chunks THEN 'true' ELSE 'false' END))
      FROM import_jobs WHERE id = ${jobId}`,
    ),
    prepare(
      d1,
      sql`UPDATE import_jobs SET status = 'completed', finished_at = ${now}
      WHERE id = ${jobId} AND status = 'running' AND done_chunks = total_chunks`,
    ),
  ]);
  return 'done';
}

export function backoffSeconds(attempts: number): number {
  return Math.min(60, 2 ** attempts);
}

/** The `queue` handler: import chunks from the main queue; exhausted messages from the dead-letter queue. */
export async function handleQueue(batch: MessageBatch<ImportChunkMessage>, env: Env): Promise<void> {
  const d1 = env.DB;
  const deadLetters = batch.queue === IMPORT_DLQ_NAME;
  // The messages of a batch are handled side by side: their chunks touch different
  // features, D1 applies each batch atomically, and the job's counters are computed in SQL.
  if (deadLetters) {
    await Promise.all(batch.messages.map((message) => handleDeadLetter(d1, message)));
    return;
  }
  const outcomes = await Promise.all(batch.messages.map((message) => handleChunk(env, d1, message, true)));
  // Chunks that waited for others of this batch (dependencies after features, a job after
  // the one before it) get a second look before they are put back on the queue.
  for (const [index, outcome] of outcomes.entries()) {
    if (outcome === 'deferred') await handleChunk(env, d1, batch.messages[index]!, false);
  }
}

async function handleDeadLetter(d1: D1Database, message: Message<ImportChunkMessage>): Promise<void> {
  const { jobId, chunkIndex } = message.body;
  try {
    const job = await readJob(d1, jobId);
    const last = job?.errors.find((error) => error.chunk === chunkIndex)?.message ?? 'the chunk could not be applied';
    await markFailed(d1, jobId, [{ message: `Chunk ${chunkIndex} was not applied after all retries: ${last}`, chunk: chunkIndex }]);
    await prepare(
      d1,
      sql`UPDATE import_job_chunks SET status = 'failed' WHERE job_id = ${jobId} AND chunk_index = ${chunkIndex} AND status <> 'done'
      AND EXISTS (SELECT 1 FROM import_jobs WHERE id = ${jobId} AND status = 'failed')`,
    ).run();
    message.ack();
  } catch (error) {
    log.error('import dead letter not recorded', { jobId, chunkIndex, error });
    message.retry();
  }
}

async function handleChunk(
  env: Env,
  d1: D1Database,
  message: Message<ImportChunkMessage>,
  mayDefer: boolean,
): Promise<'done' | 'deferred'> {
  const { jobId, chunkIndex } = message.body;
  try {
    if ((await processChunk(env, d1, message, mayDefer)) === 'deferred') return 'deferred';
    message.ack();
  } catch (error) {
    const reason = describe(error);
    log.warn('import chunk failed', { jobId, chunkIndex, attempts: message.attempts, error: reason });
    try {
      await recordAttemptError(d1, jobId, chunkIndex, reason);
    } catch (recordError) {
      log.error('import chunk error not recorded', { jobId, chunkIndex, error: recordError });
    }
    message.retry({ delaySeconds: backoffSeconds(message.attempts) });
  }
  return 'done';
}

/**
 * How long the job at the head of its project/environment's line may go without progress
 * (no chunk applied since it was queued, started, or the job before it ended). A chunk that
 * keeps failing reaches the dead-letter queue within a few minutes (5 retries, backoff of at
 * most a minute), so a quarter of an hour without progress means its messages are gone.
 */
export const STUCK_AFTER_MS = 15 * 60 * 1000;

/**
 * The watchdog, run by the scheduled handler: fails the jobs that can no longer finish
 * because their messages were lost (the dead-letter consumer itself failed, or a send was
 * dropped), which would otherwise stay `running` forever and make every later import into
 * their project/environment wait an hour and fail. Only the first active job of each
 * project/environment is looked at: the ones behind it are waiting, not stuck. Returns the
 * ids of the jobs it failed.
 */
export async function failStuckImportJobs(env: Env, now: Date | number = Date.now()): Promise<string[]> {
  const d1 = env.DB;
  const cutoff = new Date(new Date(now).getTime() - STUCK_AFTER_MS).toISOString();
  const stuck = await d1
    .prepare(
      `SELECT j.id FROM import_jobs j
       WHERE j.status IN ('queued', 'running')
         AND NOT EXISTS (SELECT 1 FROM import_jobs e WHERE e.project = j.project AND e.environment = j.environment AND e.status IN ('queued', 'running')
           AND (e.queued_at < j.queued_at OR (e.queued_at = j.queued_at AND e.rowid < j.rowid)))
         AND max(j.queued_at, coalesce(j.started_at, ''),
           coalesce((SELECT max(c.applied_at) FROM import_job_chunks c WHERE c.job_id = j.id), ''),
           coalesce((SELECT max(e.finished_at) FROM import_jobs e WHERE e.project = j.project AND e.environment = j.environment
             AND e.id <> j.id AND e.queued_at <= j.queued_at), '')) < ?`,
    )
    .bind(cutoff)
    .all<{ id: string }>();
  const failed: string[] = [];
  const minutes = Math.round(STUCK_AFTER_MS / 60_000);
  for (const { id } of stuck.results) {
    const message = `The import made no progress for ${minutes} minutes: its queue messages were lost, so it was stopped to let later imports into its project and environment run. Chunks applied before stay applied; import the rest again.`;
    if (await endJob(d1, id, 'failed', [{ message }])) failed.push(id);
  }
  if (failed.length > 0) log.warn('stuck import jobs failed', { jobs: failed });
  return failed;
}
