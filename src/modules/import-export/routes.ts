import type { RequestContext } from '../../auth/guard';
import { auditEvent } from '../../db/events';
import { getDb } from '../../db/client';
import { readJsonBody } from '../../http/body';
import { notFound, validationError } from '../../http/errors';
import { pathParam } from '../../http/params';
import { empty, json } from '../../http/responses';
import { parseInput } from '../../http/validation';
import { exportFeatures } from './export';
import { createJob, jobLocation, readJob } from './jobs';
import { toChunks } from './plan';
import { ExportSchema, ImportSchema } from './schema';
import { MESSAGES, analyseImport, assertPermissions } from './service';
import { chunkStatements, prepare, runStatements } from './store';

/**
 * Import bodies may be tens of MB; the default 100 kB limit is for everything else (Unleash
 * itself stops at 500 kB). The whole body is parsed and validated in memory before anything
 * is written, which holds about three times the body size at its peak (measured: 29 MB of
 * import -> ~100 MB of heap while parsing), so 24 MiB keeps a request inside the Worker's
 * 128 MB. Larger imports are sent as several requests: they queue behind each other.
 */
export const IMPORT_MAX_BODY_BYTES = 24 * 1024 * 1024;

const EXPORT_MAX_BODY_BYTES = 4 * 1024 * 1024;

export async function importFeatures({ request, env, principal }: RequestContext): Promise<Response> {
  const d1 = env.DB;
  // No variable keeps the parsed body: once analysed, only its prepared form stays in memory.
  const analysis = await analyseImport(d1, principal, parseInput(ImportSchema, await readJsonBody(request, IMPORT_MAX_BODY_BYTES), '/body'));
  assertPermissions(analysis.missingPermissions);
  if (analysis.errors.length > 0) throw validationError(analysis.errors);

  const { chunks, single } = toChunks(analysis.prepared);
  if (single && analysis.activeJob === null) {
    const writer = { userId: principal.userId, now: new Date().toISOString() };
    await runStatements(d1, [
      ...chunkStatements(d1, analysis.target, writer, { chunk: chunks[0]! }),
      prepare(d1, auditEvent(getDb(env), principal, {
        type: 'features-imported',
        project: analysis.target.project,
        environment: analysis.target.environment,
        data: { features: analysis.prepared.featureCount },
      })),
    ]);
    return empty(200);
  }
  // Too large for one batch, or another import into this target is still running: queue it.
  const id = await createJob(env, d1, principal, analysis.target, chunks, analysis.prepared.featureCount);
  const job = await readJob(d1, id);
  return json(job, 202, { location: jobLocation(id) });
}

export async function validateImport({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(ImportSchema, await readJsonBody(request, IMPORT_MAX_BODY_BYTES), '/body');
  const analysis = await analyseImport(env.DB, principal, body);
  const permissions =
    analysis.missingPermissions.length > 0 ? [{ message: MESSAGES.permissions, affectedItems: analysis.missingPermissions }] : [];
  return json({ errors: analysis.errors, warnings: analysis.warnings, permissions });
}

export async function exportData({ request, env }: RequestContext): Promise<Response> {
  // Room for the 100,000 feature names the schema allows.
  const query = parseInput(ExportSchema, await readJsonBody(request, EXPORT_MAX_BODY_BYTES), '/body');
  return json(await exportFeatures(env.DB, query));
}

export async function getJob({ request, env }: RequestContext): Promise<Response> {
  const id = pathParam(request, 'id');
  const job = id.length <= 64 ? await readJob(env.DB, id) : null;
  if (!job) throw notFound(`Could not find import job ${id.slice(0, 64)}`);
  return json(job);
}
