/**
 * What the cron trigger runs (wrangler.toml `[triggers]`): a list of independent jobs. Each
 * job gets the scheduled time, runs on its own (one failing is logged and does not stop the
 * others) and reports what it did. Add a job by appending it to SCHEDULED_JOBS.
 */
import { sql } from 'drizzle-orm';
import { getDb } from './db/client';
import {
  addonDeliveries,
  clientInstances,
  clientMetricsEnv,
  integrationEvents,
  loginEvents,
  loginFailures,
  metricsFlushes,
  metricsMessages,
  sessions,
  statTrafficUsage,
} from './db/schema';
import type { Env } from './env';
import { log } from './log';
import { flushOutbox } from './integrations/addons/delivery';
import { failStuckImportJobs } from './admin/import-export/jobs';
import { expireUnknownFlagReports } from './admin/unknown-flags/service';
import { staleFailures } from './identity/passwords/login-limits';
import { applyDueRequests } from './admin/change-requests/schedule';
import { announceWrite } from './sdk/push/announce';
import { IMPACT_RETENTION_MS, pruneImpactMetrics } from './sdk/impact-metrics/series';
import { trafficKeptFrom } from './admin/traffic-usage/service';

export interface ScheduledJob {
  name: string;
  /** Does the job's work for the run scheduled at `now`; returns a summary for the log. */
  run(env: Env, now: Date): Promise<Record<string, unknown>>;
}

const HOUR_MS = 60 * 60 * 1000;
/** Hourly usage counts are kept 48 hours, as Unleash keeps client_metrics_env. */
const METRICS_RETENTION_MS = 48 * HOUR_MS;
/** Client instances not seen for two days are forgotten, as Unleash does. */
const INSTANCE_RETENTION_MS = 48 * HOUR_MS;
/**
 * Ids of counted metrics messages are kept this long: a message comes back only through its
 * retries (minutes) or the dead-letter queue right after them (docs/metrics.md).
 */
export const METRICS_MESSAGE_RETENTION_MS = 6 * HOUR_MS;
/**
 * Entries kept in each integration's delivery log: the newest 100, two of the pages of 50 the
 * UI's event log loads (Unleash itself keeps only the newest 100 of the last two hours over all
 * integrations, plus the newest of each).
 */
export const INTEGRATION_LOG_KEPT = 100;
/**
 * Finished (sent or failed) delivery rows are kept a day: a message comes back only through its
 * retries and order waits (two hours at most), and one whose row is gone is dropped unsent.
 */
const DELIVERY_RETENTION_MS = 24 * HOUR_MS;
/** The login history keeps 336 hours (14 days) of sign-in attempts, as Unleash does. */
export const LOGIN_HISTORY_RETENTION_MS = 336 * HOUR_MS;
/** And never more than this many (a flood of refused attempts cannot grow it without bound). */
const LOGIN_HISTORY_KEPT = 20_000;
/** Rows deleted per statement, so that one run never holds D1 for long. */
const DELETE_CHUNK = 5_000;
/** At most this many chunks per job and run; what is left goes in the next run. */
const MAX_CHUNKS = 20;

/** Deletes the rows of `table` that `where` selects, a chunk at a time; returns how many. */
async function deleteInChunks(
  env: Env,
  table:
    | typeof clientMetricsEnv
    | typeof clientInstances
    | typeof sessions
    | typeof loginFailures
    | typeof loginEvents
    | typeof metricsMessages
    | typeof integrationEvents
    | typeof addonDeliveries
    | typeof metricsFlushes
    | typeof statTrafficUsage,
  where: ReturnType<typeof sql>,
): Promise<number> {
  const db = getDb(env);
  let deleted = 0;
  for (let chunk = 0; chunk < MAX_CHUNKS; chunk++) {
    const result = await db.run(sql`DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${where} LIMIT ${DELETE_CHUNK})`);
    const changes = result.meta.changes;
    deleted += changes;
    if (changes < DELETE_CHUNK) break;
  }
  return deleted;
}

const expireMetrics: ScheduledJob = {
  name: 'expire-metrics',
  async run(env, now) {
    const before = new Date(now.getTime() - METRICS_RETENTION_MS).toISOString();
    return { deleted: await deleteInChunks(env, clientMetricsEnv, sql`${clientMetricsEnv.timestamp} < ${before}`), before };
  },
};

const expireInstances: ScheduledJob = {
  name: 'expire-client-instances',
  async run(env, now) {
    const before = new Date(now.getTime() - INSTANCE_RETENTION_MS).toISOString();
    const seen = sql`coalesce(${clientInstances.lastSeen}, ${clientInstances.createdAt})`;
    return { deleted: await deleteInChunks(env, clientInstances, sql`${seen} < ${before}`), before };
  },
};

export const expireMetricsMessages: ScheduledJob = {
  name: 'expire-metrics-messages',
  async run(env, now) {
    const before = new Date(now.getTime() - METRICS_MESSAGE_RETENTION_MS).toISOString();
    // A flush row goes once every message it counted was received more than the retention ago.
    const flushes = await deleteInChunks(env, metricsFlushes, sql`${metricsFlushes.maxReceived} < ${before}`);
    const legacy = await deleteInChunks(env, metricsMessages, sql`${metricsMessages.processedAt} < ${before}`);
    return { deleted: flushes + legacy, before };
  },
};

/**
 * Expired sessions no longer pass (every check compares `expiresAt`), but their rows stay until
 * their user signs in again; this removes the rest.
 */
export const expireSessions: ScheduledJob = {
  name: 'expire-sessions',
  async run(env, now) {
    const before = now.toISOString();
    return { deleted: await deleteInChunks(env, sessions, sql`${sessions.expiresAt} <= ${before}`), before };
  },
};

/** Wrong passwords older than the sign-in limits' longest window (an hour) count for nothing. */
export const expireLoginFailures: ScheduledJob = {
  name: 'expire-login-failures',
  async run(env, now) {
    return { deleted: await deleteInChunks(env, loginFailures, staleFailures(now)) };
  },
};

/** Sign-in attempts older than the retention, and any beyond the newest LOGIN_HISTORY_KEPT. */
export const expireLoginHistory: ScheduledJob = {
  name: 'expire-login-history',
  async run(env, now) {
    const before = new Date(now.getTime() - LOGIN_HISTORY_RETENTION_MS).toISOString();
    const old = await deleteInChunks(env, loginEvents, sql`${loginEvents.createdAt} < ${before}`);
    const kept = sql`(SELECT coalesce(max(id), 0) FROM ${loginEvents}) - ${LOGIN_HISTORY_KEPT}`;
    const beyond = await deleteInChunks(env, loginEvents, sql`${loginEvents.id} <= ${kept}`);
    return { deleted: old + beyond, before };
  },
};

/** Data-usage counts of days older than the page can show (src/admin/traffic-usage/service.ts). */
export const expireTrafficUsage: ScheduledJob = {
  name: 'expire-traffic-usage',
  async run(env, now) {
    const before = trafficKeptFrom(now);
    return { deleted: await deleteInChunks(env, statTrafficUsage, sql`${statTrafficUsage.day} < ${before}`), before };
  },
};

/** Import jobs that made no progress for too long are failed with a reason (see jobs.ts). */
const failStuckImports: ScheduledJob = {
  name: 'fail-stuck-import-jobs',
  async run(env, now) {
    return { failed: await failStuckImportJobs(env, now) };
  },
};

/**
 * Integration deliveries not yet on their Queue (the request that wrote their events could not
 * hand them over, or they come from an import): handed over now.
 */
const queueIntegrationDeliveries: ScheduledJob = {
  name: 'queue-integration-deliveries',
  async run(env) {
    return { queued: await flushOutbox(env) };
  },
};

/**
 * The integrations' delivery log and delivery records would grow with every event: each log
 * keeps its newest INTEGRATION_LOG_KEPT entries, and finished deliveries go after a day.
 * Deliveries still pending or being sent are never touched.
 */
export const pruneIntegrationDeliveries: ScheduledJob = {
  name: 'prune-integration-deliveries',
  async run(env, now) {
    const before = new Date(now.getTime() - DELIVERY_RETENTION_MS).toISOString();
    // An entry goes when it is older than its integration's INTEGRATION_LOG_KEPT-th newest (an index seek per row).
    const kept = sql`(SELECT n.id FROM integration_events n WHERE n.integration_id = integration_events.integration_id
      ORDER BY n.id DESC LIMIT 1 OFFSET ${INTEGRATION_LOG_KEPT - 1})`;
    const logEntries = await deleteInChunks(env, integrationEvents, sql`integration_events.id < ${kept}`);
    const deliveries = await deleteInChunks(
      env,
      addonDeliveries,
      sql`${addonDeliveries.status} IN ('sent', 'failed') AND ${addonDeliveries.createdAt} < ${before}`,
    );
    return { logEntries, deliveries, before };
  },
};

/** Unknown-flag reports are shown and kept for 24 hours, as Unleash 8 keeps them. */
export const expireUnknownFlags: ScheduledJob = {
  name: 'expire-unknown-flags',
  run: (env, now) => expireUnknownFlagReports(getDb(env), now),
};

/** Impact metric series not updated for a week, and the metrics left without any (docs/metrics.md). */
export const expireImpactMetrics: ScheduledJob = {
  name: 'expire-impact-metrics',
  run: (env, now) => pruneImpactMetrics(getDb(env), new Date(now.getTime() - IMPACT_RETENTION_MS).toISOString()),
};

/** Scheduled change requests whose time has come are applied; SDK streams hear of it at once. */
const applyScheduledChangeRequests: ScheduledJob = {
  name: 'apply-scheduled-change-requests',
  async run(env, now) {
    const outcome = await applyDueRequests(getDb(env), now);
    if (outcome.applied > 0) await announceWrite(env);
    return outcome;
  },
};

export const SCHEDULED_JOBS: readonly ScheduledJob[] = [
  applyScheduledChangeRequests,
  expireMetrics,
  expireUnknownFlags,
  expireImpactMetrics,
  expireInstances,
  expireMetricsMessages,
  expireSessions,
  expireLoginFailures,
  expireLoginHistory,
  expireTrafficUsage,
  failStuckImports,
  queueIntegrationDeliveries,
  pruneIntegrationDeliveries,
];

export interface JobOutcome {
  name: string;
  ok: boolean;
  summary?: Record<string, unknown>;
}

/** Runs every job for the run scheduled at `now`; never throws. */
export async function runScheduledJobs(env: Env, now: Date, jobs: readonly ScheduledJob[] = SCHEDULED_JOBS): Promise<JobOutcome[]> {
  const outcomes: JobOutcome[] = [];
  for (const job of jobs) {
    try {
      const summary = await job.run(env, now);
      log.info('scheduled job done', { job: job.name, ...summary });
      outcomes.push({ name: job.name, ok: true, summary });
    } catch (error) {
      log.error('scheduled job failed', { job: job.name, error });
      outcomes.push({ name: job.name, ok: false });
    }
  }
  return outcomes;
}
