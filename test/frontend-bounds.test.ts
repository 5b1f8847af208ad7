/**
 * The frontend key is public by design (it ships in web pages): what one key can make the
 * service store is bounded, and old usage data expires on the cron trigger.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../src/index';
import { FRONTEND_NEW_INSTANCES_PER_DAY } from '../src/sdk/client-api/usage';
import { runScheduledJobs, SCHEDULED_JOBS, type ScheduledJob } from '../src/scheduled';
import { call, createToken } from './support/http';
import { captureLogs } from './support/logs';
import { seedFlag, seedProject } from './support/sdk-seed';
import { count } from './support/db';
import { settleMetrics } from './support/metrics';

const HOUR = 60 * 60 * 1000;

function report(
  appName: string,
  instanceId: string,
  toggles: Record<string, { yes: number; no: number }>,
  stop = new Date().toISOString(),
) {
  return { appName, instanceId, bucket: { start: stop, stop, toggles } };
}

let scopedKey: string;

beforeAll(async () => {
  await seedProject('fb-mine');
  await seedFlag({ name: 'fb.mine', project: 'fb-mine', environments: { development: { enabled: true } } });
  await seedFlag({ name: 'fb.other', environments: { development: { enabled: true } } });
  scopedKey = await createToken({ tokenName: 'fb-scoped', type: 'frontend', environment: 'development', projects: ['fb-mine'] });
});

describe('POST /api/frontend/client/metrics with a frontend key', () => {
  it("keeps counts only for flags of the key's projects", async () => {
    const response = await call('POST', '/api/frontend/client/metrics', {
      token: scopedKey,
      body: report('fb-app', 'browser', { 'fb.mine': { yes: 1, no: 0 }, 'fb.other': { yes: 5, no: 5 } }),
    });
    expect(response.status).toBe(200);
    await settleMetrics();
    expect(await count("SELECT count(*) AS n FROM client_metrics_env WHERE app_name = 'fb-app' AND feature_name = 'fb.mine'")).toBe(1);
    expect(await count("SELECT count(*) AS n FROM client_metrics_env WHERE app_name = 'fb-app' AND feature_name = 'fb.other'")).toBe(0);
  });

  it('counts a bucket that ends far from now (a browser clock, or a forger) in the current hour', async () => {
    for (const stop of ['2001-01-01T00:00:00.000Z', '2099-12-31T23:00:00.000Z']) {
      const before = new Date().toISOString().slice(0, 13);
      expect(
        (
          await call('POST', '/api/frontend/client/metrics', {
            token: scopedKey,
            body: report('fb-clock', 'browser', { 'fb.mine': { yes: 1, no: 0 } }, stop),
          })
        ).status,
      ).toBe(200);
      await settleMetrics();
      const { results } = await env.DB.prepare("SELECT timestamp FROM client_metrics_env WHERE app_name = 'fb-clock'").all<{
        timestamp: string;
      }>();
      expect(results.map((row) => row.timestamp.slice(0, 13))).toContain(before);
      expect(results.some((row) => row.timestamp.startsWith('2001') || row.timestamp.startsWith('2099'))).toBe(false);
    }
  });

  it(`creates at most ${FRONTEND_NEW_INSTANCES_PER_DAY} new instances (app names or instance ids) a day per key; known ones keep reporting`, async () => {
    const key = await createToken({ tokenName: 'fb-quota', type: 'frontend', environment: 'development', projects: ['fb-mine'] });
    const sends = Array.from({ length: FRONTEND_NEW_INSTANCES_PER_DAY }, (_, i) =>
      call('POST', '/api/frontend/client/metrics', {
        token: key,
        body: report(`fb-quota-${i}`, 'browser', { 'fb.mine': { yes: 1, no: 0 } }),
      }),
    );
    for (const response of await Promise.all(sends)) expect(response.status).toBe(200);
    await settleMetrics();
    expect(await count("SELECT count(*) AS n FROM client_instances WHERE app_name LIKE 'fb-quota-%'")).toBe(FRONTEND_NEW_INSTANCES_PER_DAY);

    // One more new app: answered as Unleash answers (200) but nothing is stored.
    expect(
      (
        await call('POST', '/api/frontend/client/metrics', {
          token: key,
          body: report('fb-quota-extra', 'browser', { 'fb.mine': { yes: 1, no: 0 } }),
        })
      ).status,
    ).toBe(200);
    await settleMetrics();
    expect(await count("SELECT count(*) AS n FROM client_instances WHERE app_name = 'fb-quota-extra'")).toBe(0);
    expect(await count("SELECT count(*) AS n FROM client_metrics_env WHERE app_name = 'fb-quota-extra'")).toBe(0);
    // A new instance id of a known app is a new instance too.
    expect(
      (
        await call('POST', '/api/frontend/client/metrics', {
          token: key,
          body: report('fb-quota-0', 'other-browser', { 'fb.mine': { yes: 1, no: 0 } }),
        })
      ).status,
    ).toBe(200);
    await settleMetrics();
    expect(await count("SELECT count(*) AS n FROM client_instances WHERE app_name = 'fb-quota-0'")).toBe(1);

    // A known instance still counts.
    expect(
      (
        await call('POST', '/api/frontend/client/metrics', {
          token: key,
          body: report('fb-quota-0', 'browser', { 'fb.mine': { yes: 4, no: 0 } }),
        })
      ).status,
    ).toBe(200);
    await settleMetrics();
    expect(await count("SELECT sum(yes) AS n FROM client_metrics_env WHERE app_name = 'fb-quota-0'")).toBe(5);
    // Another key has its own quota.
    expect(
      (
        await call('POST', '/api/frontend/client/metrics', {
          token: scopedKey,
          body: report('fb-quota-extra', 'browser', { 'fb.mine': { yes: 1, no: 0 } }),
        })
      ).status,
    ).toBe(200);
    await settleMetrics();
    expect(await count("SELECT count(*) AS n FROM client_instances WHERE app_name = 'fb-quota-extra'")).toBe(1);
  });
});

describe('scheduled housekeeping (cron trigger)', () => {
  it("the Worker's scheduled handler expires usage counts older than 48 hours and instances unseen for 2 days", async () => {
    const now = Date.now();
    const hour = (ago: number) => new Date(Math.floor((now - ago * HOUR) / HOUR) * HOUR).toISOString();
    const at = (ago: number) => new Date(now - ago * HOUR).toISOString();
    await env.DB.batch([
      ...[1, 47, 49, 200].map((ago) =>
        env.DB.prepare(
          "INSERT INTO client_metrics_env (feature_name, app_name, environment, timestamp, yes, no) VALUES ('fb.mine', 'fb-cron', 'development', ?, 1, 0)",
        ).bind(hour(ago)),
      ),
      ...[1, 47, 49].map((ago) =>
        env.DB.prepare(
          "INSERT INTO client_instances (app_name, instance_id, environment, last_seen) VALUES ('fb-cron', ?, 'development', ?)",
        ).bind(`seen-${ago}h`, at(ago)),
      ),
    ]);

    const ctx = createExecutionContext();
    const logs = captureLogs();
    await worker.scheduled(createScheduledController({ scheduledTime: now, cron: '*/5 * * * *' }), env, ctx);
    await waitOnExecutionContext(ctx);
    // Each job logs what it did.
    expect(logs.entries.filter((entry) => entry.msg === 'scheduled job done').map((entry) => entry.job)).toEqual(
      SCHEDULED_JOBS.map((job) => job.name),
    );

    const { results: metrics } = await env.DB.prepare(
      "SELECT timestamp FROM client_metrics_env WHERE app_name = 'fb-cron' ORDER BY timestamp DESC",
    ).all<{ timestamp: string }>();
    expect(metrics.map((row) => row.timestamp)).toEqual([hour(1), hour(47)]);
    const { results: instances } = await env.DB.prepare(
      "SELECT instance_id FROM client_instances WHERE app_name = 'fb-cron' ORDER BY instance_id",
    ).all<{ instance_id: string }>();
    expect(instances.map((row) => row.instance_id)).toEqual(['seen-1h', 'seen-47h']);
  });

  it('runs every job even when one fails, and reports each', async () => {
    const failing: ScheduledJob = {
      name: 'always-fails',
      run: async () => {
        throw new Error('boom');
      },
    };
    const logs = captureLogs();
    const outcomes = await runScheduledJobs(env, new Date(), [failing, ...SCHEDULED_JOBS]);
    expect(logs.entries[0]).toMatchObject({ level: 'error', msg: 'scheduled job failed', job: 'always-fails', error: { message: 'boom' } });
    expect(logs.entries.slice(1).map((entry) => entry.msg)).toEqual(SCHEDULED_JOBS.map(() => 'scheduled job done'));
    expect(outcomes.map((outcome) => [outcome.name, outcome.ok])).toEqual([
      ['always-fails', false],
      ['apply-scheduled-change-requests', true],
      ['expire-metrics', true],
      ['expire-unknown-flags', true],
      ['expire-impact-metrics', true],
      ['expire-client-instances', true],
      ['expire-metrics-messages', true],
      ['expire-sessions', true],
      ['expire-login-failures', true],
      ['expire-login-history', true],
      ['expire-traffic-usage', true],
      ['fail-stuck-import-jobs', true],
      ['queue-integration-deliveries', true],
      ['prune-integration-deliveries', true],
    ]);
  });
});
