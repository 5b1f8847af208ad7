/**
 * What the 8.2.0 parity sweep (`scripts/parity-sweep.mjs --v8`, docs/parity.md) found and we
 * now answer as 8.2.0 does, replayed against the answers recorded from the real 8.2.0 by
 * `RECORD_ONLY=sweep-fixes scripts/record-unleash8.mjs` (test/recorded/unleash8/sweep-fixes.json).
 */
import { describe, expect, it } from 'vitest';
import recorded from './recorded/unleash8/sweep-fixes.json';
import { createFeature } from './support/admin';
import { signedInUser, withSession } from './support/auth';
import { count } from './support/db';
import { bodyOf, call, expectError } from './support/http';
import { unique } from './support/names';

const PROJECT = '/api/admin/projects/default';

/** The keys of `ours` that 8.2.0 also answers, in our order: what a key-order check compares. */
const shared = (ours: object, theirs: readonly string[]) => Object.keys(ours).filter((key) => theirs.includes(key));
/** 8.2.0's keys that we also answer, in 8.2.0's order. */
const theirsShared = (ours: object, theirs: readonly string[]) => theirs.filter((key) => key in ours);

/** A stale flag in the default project, so that health is below 100 and the debt above 0. */
async function staleFlag() {
  const name = unique('debt');
  await createFeature(name);
  const marked = await call('POST', `${PROJECT}/stale`, { body: { features: [name], stale: true } });
  expect(marked.status).toBe(202);
}

describe('technicalDebt beside health (8.x)', () => {
  it('the projects list: 8.2.0 keys, in its order, the debt 100 - health', async () => {
    await staleFlag();
    const person = await signedInUser('Admin');
    const body = await bodyOf(await call('GET', '/api/admin/projects', withSession(person.cookie)));
    const project = body.projects.find((entry: { id: string }) => entry.id === 'default');
    // Every 8.2.0 key is answered, in 8.2.0's order (`environments` etc. are 6.10.1's extra keys).
    expect(theirsShared(project, recorded.projectsItemKeys)).toEqual(recorded.projectsItemKeys);
    expect(shared(project, recorded.projectsItemKeys)).toEqual(recorded.projectsItemKeys);
    expect(project.technicalDebt === 100 - project.health).toBe(recorded.projectsDebtIsInverseHealth);
    expect(project.onboardingStatus).toMatchObject({ status: expect.any(String) });
  });

  it("the overview: 8.2.0's keys and order, no link templates; the deprecated overview stays 6.10.1's", async () => {
    const overview = await bodyOf(await call('GET', `${PROJECT}/overview`));
    expect(Object.keys(overview)).toEqual(recorded.overviewKeys);
    expect(overview.linkTemplates).toEqual(recorded.overviewLinkTemplates);
    expect(overview.technicalDebt).toBe(100 - overview.health);
    const deprecated = await bodyOf(await call('GET', PROJECT));
    expect(deprecated).not.toHaveProperty('technicalDebt');
    expect(deprecated).not.toHaveProperty('linkTemplates');
  });

  it("the health report: 8.2.0's keys and order, the debt 100 - health", async () => {
    await staleFlag();
    const report = await bodyOf(await call('GET', `${PROJECT}/health-report`));
    expect(Object.keys(report)).toEqual(recorded.healthReportKeys);
    expect(report.health).toBeLessThan(100);
    expect(report.technicalDebt === 100 - report.health).toBe(recorded.healthReportDebtIsInverseHealth);
  });

  it("insights: 8.2.0's technicalDebt object; health keeps 6.10.1's place", async () => {
    await staleFlag();
    const insights = await bodyOf(await call('GET', `${PROJECT}/insights`));
    expect(new Set(Object.keys(insights))).toEqual(new Set(recorded.insightsKeys));
    // 6.10.1's order (the UI we serve), with the new key where 8.2.0 has it relative to the others.
    expect(Object.keys(insights)).toEqual(['stats', 'featureTypeCounts', 'technicalDebt', 'health', 'leadTime', 'members']);
    expect(Object.keys(insights.technicalDebt)).toEqual(recorded.insightsTechnicalDebtKeys);
    expect(insights.health.rating).toBeLessThan(100);
    const inverse =
      insights.technicalDebt.rating === 100 - insights.health.rating &&
      insights.technicalDebt.staleCount === insights.health.staleCount &&
      insights.technicalDebt.activeCount === insights.health.activeCount;
    expect(inverse).toBe(recorded.insightsDebtIsInverseHealth);
  });

  it("status: 8.2.0's keys and order, also for a project that does not exist", async () => {
    await staleFlag();
    const status = await bodyOf(await call('GET', `${PROJECT}/status`));
    expect(Object.keys(status)).toEqual(recorded.statusKeys);
    expect(Object.keys(status.technicalDebt)).toEqual(recorded.statusTechnicalDebtKeys);
    expect(status.technicalDebt.current === 100 - status.health.current).toBe(recorded.statusDebtIsInverseHealth);
    const none = await bodyOf(await call('GET', `/api/admin/projects/${unique('none')}/status`));
    expect(Object.keys(none)).toEqual(recorded.statusKeys);
  });
});

describe('400s of validate and export are BadDataError (6.10.1 and 8.2.0)', () => {
  const features = () => count('SELECT count(*) AS n FROM features');

  it('validate without data: 8.2.0 body, nothing written', async () => {
    const before = await features();
    const response = await call('POST', '/api/admin/features-batch/validate', {
      body: { project: 'default', environment: 'development' },
    });
    const body = await expectError(response, recorded.validateWithoutData.status, 'BadDataError');
    const { id: _id, ...rest } = body;
    expect(rest).toEqual(recorded.validateWithoutData.body);
    expect(await features()).toBe(before);
  });

  it('export with a bad body: 8.2.0 name and message (the details name our schema paths)', async () => {
    const response = await call('POST', '/api/admin/features-batch/export', { body: { features: 'x', environment: 'development' } });
    const body = await expectError(response, recorded.exportBadFeatures.status, 'BadDataError');
    expect(body.message).toBe(recorded.exportBadFeatures.body.message);
    expect(body.details[0]).toEqual(recorded.exportBadFeatures.body.details[0]);
  });

  it("the import itself keeps the seed's ValidationError", async () => {
    const response = await call('POST', '/api/admin/features-batch/import', {
      body: { project: 'default', environment: 'development' },
    });
    const body = await expectError(response, 400, 'ValidationError');
    expect(body.details).toEqual(recorded.validateWithoutData.body.details);
  });
});

describe('GET /ready', () => {
  it("8.2.0's answer, without a key", async () => {
    const response = await call('GET', '/ready', { token: null });
    expect(response.status).toBe(recorded.ready.status);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await bodyOf(response)).toEqual(recorded.ready.body);
  });
});

describe('instance statistics (8.x keys)', () => {
  /** `YYYY-MM` of the month `back` months before the one `at` falls in. */
  const month = (at: Date, back: number) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - back, 1)).toISOString().slice(0, 7);

  it("8.2.0's keys in its order, backend keys counted apart, the Enterprise figures 0", async () => {
    const before = await bodyOf(await call('GET', '/api/admin/instance-admin/statistics'));
    await call('POST', '/api/admin/api-tokens', {
      body: { tokenName: unique('be'), type: 'backend', environment: 'development', projects: ['*'] },
    });
    const stats = await bodyOf(await call('GET', '/api/admin/instance-admin/statistics'));
    expect(Object.keys(stats)).toEqual(recorded.statisticsKeys);
    expect(Object.keys(stats.apiTokens).sort()).toEqual(recorded.statisticsApiTokenTypes);
    expect(stats.apiTokens.backend).toBe(before.apiTokens.backend + 1);
    expect(stats.apiTokens.client).toBe(before.apiTokens.client);
    expect({
      releasePlans: stats.releasePlans,
      readOnlyUsers: stats.readOnlyUsers,
      edgeInstanceUsage: [...new Set(Object.values(stats.edgeInstanceUsage))],
    }).toEqual(recorded.statisticsOpenSourceZeros);
    expect(stats.releaseTemplates).toBe(0);
  });

  it('edgeInstanceUsage: this month and the eleven before, newest first, as 8.2.0 keyed them when recorded', async () => {
    const stats = await bodyOf(await call('GET', '/api/admin/instance-admin/statistics'));
    const recordedAt = new Date(recorded.recordedAt);
    expect(recorded.statisticsEdgeInstanceMonths).toEqual(Array.from({ length: 12 }, (_, back) => month(recordedAt, back)));
    const now = new Date();
    expect(Object.keys(stats.edgeInstanceUsage)).toEqual(Array.from({ length: 12 }, (_, back) => month(now, back)));
  });

  it("the CSV download's header is 8.2.0's", async () => {
    const response = await call('GET', '/api/admin/instance-admin/statistics/csv');
    expect(response.status).toBe(200);
    expect((await response.text()).split('\n')[0]).toBe(recorded.statisticsCsvHeader);
  });
});
