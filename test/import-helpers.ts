/** Builders and D1 readers shared by the import/export tests. */
import { env } from 'cloudflare:workers';
import type { JobStatus } from '../src/modules/import-export/jobs';
import { bodyOf, call } from './support/http';

let counter = 0;
/** A name unique within the test file (storage is shared by the tests of a file). */
export function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}-${Math.random().toString(36).slice(2, 7)}`;
}

export interface Payload {
  project: string;
  environment: string;
  data: Record<string, unknown>;
}

export function payload(data: Record<string, unknown>, project = 'default', environment = 'development'): Payload {
  return { project, environment, data: { features: [], featureStrategies: [], tagTypes: [], ...data } };
}

/** A second project with the given environments attached, written straight into D1. */
export async function createProject(id: string, environments: string[] = ['development', 'production']): Promise<void> {
  await env.DB.prepare('INSERT INTO projects (id, name) VALUES (?, ?)').bind(id, id).run();
  for (const environment of environments) {
    await env.DB.prepare('INSERT INTO project_environments (project_id, environment_name) VALUES (?, ?)').bind(id, environment).run();
  }
}

export async function rows<T = Record<string, unknown>>(query: string, ...params: unknown[]): Promise<T[]> {
  return (
    await env.DB.prepare(query)
      .bind(...params)
      .all<T>()
  ).results;
}

export async function count(query: string, ...params: unknown[]): Promise<number> {
  const result = await env.DB.prepare(query)
    .bind(...params)
    .first<{ n: number }>();
  return result?.n ?? 0;
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
