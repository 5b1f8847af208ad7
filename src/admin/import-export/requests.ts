/**
 * The import and export requests, past their route objects: reading an import body as a
 * stream, applying it in one batch or queueing it as a job, and the job's progress and
 * cancellation. Raw D1 (not drizzle), as the import's prepared statements are.
 */
import * as v from 'valibot';
import { UPDATE_FEATURE, hasPermission } from '../../auth/permissions';
import type { Principal } from '../../auth/principal';
import { auditEvent } from '../../db/events';
import { getDb } from '../../db/client';
import type { Env } from '../../env';
import { requireJsonContentType } from '../../http/body';
import { ApiError, notFound, validationError } from '../../http/errors';
import { splitJsonBody, type SplitJsonResult } from '../../http/json-stream';
import { parseInput } from '../../http/validation';
import { ImportCollector } from './collector';
import { exportFeatures } from './export';
import { endJob, queueJob, readJob, type JobStatus } from './jobs';
import { DEPENDENCIES_PER_CHUNK, SYNC_MAX_BYTES } from './plan';
import { ImportSchema, type ExportSchema } from './schema';
import { MESSAGES, assertPermissions, finishImport, type ImportAnalysis } from './service';
import { ImportStager } from './staging';
import { chunkStatements } from './store/chunk';
import { readCatalogue } from './store/reads';
import { prepare, runStatements } from './store/statements';

/**
 * Import bodies are read as a stream, element by element (see collector.ts and staging.ts),
 * so the Worker's memory holds a few MB whatever the body's size: 100,000 features with two
 * strategies each are ~116 MB. Cloudflare's plan may cap request bodies lower (100 MB on
 * Free and Pro): larger imports are then sent as several requests, which queue in order.
 */
const IMPORT_MAX_BODY_BYTES = 256 * 1024 * 1024;
/** The largest single element of the payload (one feature, strategy, ...) or other value. */
const IMPORT_MAX_ELEMENT_BYTES = 4 * 1024 * 1024;

/**
 * The body with its streamed arrays left empty: checked against ImportSchema, it finds every
 * problem the elements cannot show. Null-prototype objects, so that a `__proto__` key stays a
 * key, as it is in what JSON.parse returns.
 */
function skeletonOf(result: SplitJsonResult): unknown {
  if (!result.isObject) return result.value;
  const body: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [key, value] of result.top) body[key] = value;
  if (result.splitKind === 'object') {
    const data: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [key, entry] of result.split) data[key] = entry.streamed ? [] : entry.value;
    body.data = data;
  } else if (result.splitKind === 'other') {
    body.data = result.splitValue;
  }
  return body;
}

/** Reads, validates and analyses an import body, staging its elements with `stager` as they come. */
export async function readImport(request: Request, d1: D1Database, principal: Principal, stager: ImportStager): Promise<ImportAnalysis> {
  requireJsonContentType(request);
  const collector = new ImportCollector(await readCatalogue(d1), stager);
  const declared = request.headers.get('content-length');
  const result = await splitJsonBody(
    request.body,
    declared === null ? null : Number(declared),
    {
      splitKey: 'data',
      maxBytes: IMPORT_MAX_BODY_BYTES,
      maxValueBytes: IMPORT_MAX_ELEMENT_BYTES,
      onKept: (bytes) => collector.keepBytes(bytes),
    },
    (key, index, value) => collector.item(key, index, value),
  );
  const skeleton = skeletonOf(result);
  // A body that is not an object gets the same answer as any other endpoint's.
  if (!result.isObject) parseInput(ImportSchema, skeleton, '/body');
  const checked = v.safeParse(ImportSchema, skeleton);
  if (!checked.success) collector.addIssues([], checked.issues);
  if (collector.hasSchemaIssues || !checked.success) throw validationError(collector.schemaDetails());
  return finishImport(d1, principal, { project: checked.output.project, environment: checked.output.environment }, collector);
}

/**
 * Applies an import: in one batch when it is small enough and no other import into its target
 * runs (undefined), else queued as a job (its id and status, for the 202).
 */
export async function importFeatures(
  env: Env,
  request: Request,
  principal: Principal,
): Promise<{ id: string; job: JobStatus } | undefined> {
  const d1 = env.DB;
  const stager = new ImportStager(d1, principal);
  let analysis: ImportAnalysis;
  try {
    analysis = await readImport(request, d1, principal, stager);
    assertPermissions(analysis.missingPermissions);
    if (analysis.errors.length > 0) throw validationError(analysis.errors);
    if (analysis.linkError) throw analysis.linkError;
  } catch (error) {
    await stager.discard();
    throw error;
  }

  const dependencies = analysis.dependencies.map((dependency) => JSON.stringify(dependency));
  const dependencyBytes = dependencies.reduce((sum, text) => sum + text.length + 1, 0);
  const fitsOneBatch =
    stager.inMemory && stager.bufferedBytes + dependencyBytes <= SYNC_MAX_BYTES && dependencies.length <= DEPENDENCIES_PER_CHUNK;
  if (fitsOneBatch && analysis.activeJob === null) {
    const rows = stager.mergedRows();
    rows.dependencies = dependencies;
    const writer = { userId: principal.userId, actorName: principal.actorName, now: new Date().toISOString() };
    await runStatements(d1, [
      ...chunkStatements(d1, analysis.context, writer, { rows }),
      prepare(
        d1,
        auditEvent(getDb(env), principal, {
          type: 'features-imported',
          project: analysis.target.project,
          environment: analysis.target.environment,
          data: { features: analysis.featureCount },
        }),
      ),
    ]);
    return undefined;
  }
  // Too large for one batch, or another import into this target is still running: queue it.
  let id: string;
  try {
    id = await queueJob(env, d1, stager, analysis.context, dependencies, analysis.featureCount);
  } catch (error) {
    await stager.discard();
    throw error;
  }
  return { id, job: await findJob(d1, id) };
}

/** What an import would do, and what stops it; nothing is kept (the elements are checked and dropped). */
export async function validateImport(env: Env, request: Request, principal: Principal) {
  const analysis = await readImport(request, env.DB, principal, new ImportStager(null, principal));
  const permissions =
    analysis.missingPermissions.length > 0 ? [{ message: MESSAGES.permissions, affectedItems: analysis.missingPermissions }] : [];
  return { errors: analysis.errors, warnings: analysis.warnings, permissions };
}

export function exportData(env: Env, query: v.InferOutput<typeof ExportSchema>) {
  return exportFeatures(env.DB, query);
}

async function findJob(d1: D1Database, id: string): Promise<JobStatus> {
  const job = id.length <= 64 ? await readJob(d1, id) : null;
  // A job still staging belongs to a request that has not been answered yet.
  if (!job || job.status === 'staging') throw notFound(`Could not find import job ${id.slice(0, 64)}`);
  return job;
}

export function getJob(env: Env, id: string): Promise<JobStatus> {
  return findJob(env.DB, id);
}

/**
 * Cancels a queued or running job (Unleash has no job API: our own). Chunks already applied
 * stay applied (each wrote its event); the rest are skipped and their staged rows deleted,
 * and the consumer acknowledges their messages without doing anything. Needs what every
 * import needs (updating feature flags) in the job's project; 409 once the job has ended.
 */
export async function cancelJob(env: Env, id: string, principal: Principal): Promise<JobStatus> {
  const d1 = env.DB;
  const job = await findJob(d1, id);
  if (!hasPermission(principal, UPDATE_FEATURE, job.project, job.environment)) assertPermissions(['Update feature flags']);
  const ended = (status: string) =>
    new ApiError(409, 'ConflictError', `Import job ${job.id} has already ended (${status}) and cannot be cancelled.`);
  if (job.status !== 'queued' && job.status !== 'running') throw ended(job.status);
  const cancelled = await endJob(d1, job.id, 'cancelled', [{ message: `Cancelled by ${principal.actorName}.` }], principal);
  const now = await readJob(d1, job.id);
  // It may have ended between the read and the update: then say how.
  if (!cancelled || now === null) throw ended(now?.status ?? job.status);
  return now;
}
