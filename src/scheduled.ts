/**
 * The Worker's cron jobs (wrangler.toml `[triggers] crons`): each runs on every tick, and one
 * that fails does not keep the others from running.
 */
import type { Env } from './env';
import { log } from './log';
import { failStuckImportJobs } from './modules/import-export/jobs';

interface ScheduledJob {
  name: string;
  run(env: Env, now: number): Promise<unknown>;
}

export const SCHEDULED_JOBS: readonly ScheduledJob[] = [{ name: 'fail stuck import jobs', run: failStuckImportJobs }];

export async function scheduled(controller: ScheduledController, env: Env): Promise<void> {
  const results = await Promise.allSettled(SCHEDULED_JOBS.map((job) => job.run(env, controller.scheduledTime)));
  for (const [index, result] of results.entries()) {
    if (result.status === 'rejected') log.error('scheduled job failed', { job: SCHEDULED_JOBS[index]!.name, error: result.reason });
  }
}
