/** Builders and D1 readers shared by the import/export tests. */
import type { JobStatus } from '../../src/admin/import-export/jobs';
import { count } from './db';
import { bodyOf, call } from './http';

export interface Payload {
  project: string;
  environment: string;
  data: Record<string, unknown>;
}

export function payload(data: Record<string, unknown>, project = 'default', environment = 'development'): Payload {
  return { project, environment, data: { features: [], featureStrategies: [], tagTypes: [], ...data } };
}

export async function maxEventId(): Promise<number> {
  return count('SELECT coalesce(max(id), 0) AS n FROM events');
}

/** Counts of every table an import writes, to prove that nothing was written. */
export async function footprint(): Promise<Record<string, number>> {
  const tables = [
    'features',
    'feature_environments',
    'feature_strategies',
    'feature_strategy_segment',
    'feature_tag',
    'tags',
    'tag_types',
    'context_fields',
    'dependent_features',
    'feature_lifecycles',
    'events',
    'import_jobs',
    'import_job_chunks',
    'import_job_parts',
  ];
  const result: Record<string, number> = {};
  for (const table of tables) result[table] = await count(`SELECT count(*) AS n FROM ${table}`);
  return result;
}

/** Polls an import job's Location until it has completed or failed. */
export async function waitForJob(location: string, timeoutMs = 25_000): Promise<JobStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await bodyOf<JobStatus>(await call('GET', location));
    if (job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled') return job;
    if (Date.now() > deadline) throw new Error(`job still ${job.status}: ${JSON.stringify(job)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
