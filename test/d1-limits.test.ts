/**
 * D1 binds at most 100 parameters per statement. Every multi-row insert is cut by
 * src/db/chunk.ts; each test writes exactly as many rows as fit one statement, then one more.
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { chunkedInsert, chunksOf, rowsPerStatement } from '../src/db/chunk';
import { bodyOf, call, createToken } from './support/http';
import { seedFlag, seedSegment } from './support/sdk-seed';
import { count } from './support/db';
import { settleMetrics } from './support/metrics';

const range = (n: number, name: (i: number) => string) => Array.from({ length: n }, (_, i) => name(i));

beforeAll(async () => {
  // 51 projects and 51 extra environments: enough to pass every bound below by one.
  await env.DB.batch([
    ...range(51, (i) => `lim-p${i}`).map((id) => env.DB.prepare('INSERT INTO projects (id, name) VALUES (?, ?)').bind(id, id)),
    ...range(51, (i) => `lim-e${i}`).map((name) =>
      env.DB.prepare("INSERT INTO environments (name, type) VALUES (?, 'development')").bind(name),
    ),
  ]);
});

describe('chunkedInsert', () => {
  it('fits rows to 100 parameters a statement, with room for fixed ones', () => {
    expect(rowsPerStatement(2)).toBe(50);
    expect(rowsPerStatement(4)).toBe(25);
    expect(rowsPerStatement(7)).toBe(14);
    expect(rowsPerStatement(1, 10)).toBe(90);
    expect(() => rowsPerStatement(60, 50)).toThrow();
    expect(chunkedInsert(range(51, String), 2, (run) => run.length)).toEqual([50, 1]);
    expect(chunkedInsert([], 2, (run) => run.length)).toEqual([]);
    expect(chunksOf([1, 2, 3], 2)).toEqual([[1, 2], [3]]);
  });
});

// Unleash allows 5 segments a strategy (its strategySegmentsLimit), far below one statement's
// 50 links: the limit, not D1, is what a strategy meets.
describe('a strategy with many segments (2 parameters a link)', () => {
  it("links 5 segments, and refuses a sixth with Unleash's message, writing nothing", async () => {
    const segments: number[] = [];
    for (let i = 0; i < 6; i++) segments.push(await seedSegment(`lim-seg-${i}`, []));
    const feature = 'lim.segments';
    expect((await call('POST', '/api/admin/projects/default/features', { body: { name: feature } })).status).toBe(201);
    const path = `/api/admin/projects/default/features/${feature}/environments/development/strategies`;
    const links = () => count('SELECT count(*) AS n FROM feature_strategy_segment');
    const before = await links();
    const refused = await call('POST', path, { body: { name: 'default', segments } });
    expect(refused.status).toBe(400);
    expect(await bodyOf(refused)).toMatchObject({
      name: 'BadDataError',
      message: 'Request validation failed: your request body or params contain invalid data: Strategies may not have more than 5 segments',
    });
    expect(await links()).toBe(before);
    const response = await call('POST', path, { body: { name: 'default', segments: segments.slice(0, 5) } });
    expect(response.status).toBe(200);
    const strategy = await bodyOf(response);
    expect(strategy.segments).toHaveLength(5);
    expect(await count('SELECT count(*) AS n FROM feature_strategy_segment WHERE feature_strategy_id = ?', strategy.id)).toBe(5);
  });
});

describe('a role with many permissions (4 parameters a grant)', () => {
  it.each([25, 26])('grants %i permissions', async (n) => {
    const { results } = await env.DB.prepare(
      "SELECT p.permission AS name, e.name AS environment FROM permissions p JOIN environments e ON p.type = 'environment' ORDER BY p.id, e.name LIMIT ?",
    )
      .bind(n)
      .all<{ name: string; environment: string }>();
    expect(results).toHaveLength(n);
    const response = await call('POST', '/api/admin/roles', { body: { name: `Many grants ${n}`, type: 'custom', permissions: results } });
    expect(response.status).toBe(201);
    const role = await bodyOf(response);
    expect(await count('SELECT count(*) AS n FROM role_permission WHERE role_id = ?', role.id)).toBe(n);
  });
});

describe('an API token for many projects (2 parameters a project)', () => {
  it('scopes a token to 50 projects (one full statement); 51 is refused by the schema, not by D1', async () => {
    const secret = await createToken({
      tokenName: 'lim-50',
      type: 'client',
      environment: 'development',
      projects: range(50, (i) => `lim-p${i}`),
    });
    expect(secret.startsWith('[]:development.')).toBe(true);
    expect(
      await count(
        'SELECT count(*) AS n FROM api_token_project p JOIN api_tokens t ON t.secret_hash = p.secret_hash WHERE t.token_name = ?',
        'lim-50',
      ),
    ).toBe(50);
    const refused = await call('POST', '/api/admin/api-tokens', {
      body: { tokenName: 'lim-51', type: 'client', environment: 'development', projects: range(51, (i) => `lim-p${i}`) },
    });
    expect(refused.status).toBe(400);
  });
});

describe('a project with many environments (2 parameters an attachment)', () => {
  it.each([50, 51])('attaches %i environments', async (attached) => {
    const created = await call('POST', '/api/admin/projects', {
      body: { id: `lim-env-${attached}`, name: 'Many environments', environments: range(attached, (i) => `lim-e${i}`) },
    });
    expect(created.status).toBe(201);
    expect(await count('SELECT count(*) AS n FROM project_environments WHERE project_id = ?', `lim-env-${attached}`)).toBe(attached);
  });
});

describe('a feature in a project of many environments (3 parameters a feature environment)', () => {
  it.each([33, 34])('gets all %i environments', async (n) => {
    const project = `lim-fe-${n}`;
    const environments = range(n, (i) => `lim-e${i}`);
    // Attached straight in D1, so that this test does not lean on project creation's own chunking.
    await env.DB.batch([
      env.DB.prepare('INSERT INTO projects (id, name) VALUES (?, ?)').bind(project, project),
      ...environments.map((name) =>
        env.DB.prepare('INSERT INTO project_environments (project_id, environment_name) VALUES (?, ?)').bind(project, name),
      ),
    ]);
    expect((await call('POST', `/api/admin/projects/${project}/features`, { body: { name: `lim.fe.${n}` } })).status).toBe(201);
    expect(await count('SELECT count(*) AS n FROM feature_environments WHERE feature_name = ?', `lim.fe.${n}`)).toBe(n);
  });
});

describe('client metrics for many features (7 parameters a row)', () => {
  it.each([14, 15])('stores a report of %i features', async (n) => {
    const names = range(n, (i) => `lim.metric.${n}.${i}`);
    for (const name of names) await seedFlag({ name, environments: { development: { enabled: true } } });
    const token = await createToken({ tokenName: `lim-metrics-${n}`, type: 'client', environment: 'development' });
    const stop = new Date().toISOString();
    const toggles = Object.fromEntries(names.map((name) => [name, { yes: 1, no: 0 }]));
    const response = await call('POST', '/api/client/metrics', {
      token,
      body: { appName: `lim-app-${n}`, instanceId: 'i', bucket: { start: stop, stop, toggles } },
    });
    expect(response.status).toBe(202);
    await settleMetrics();
    expect(await count('SELECT count(*) AS n FROM client_metrics_env WHERE app_name = ?', `lim-app-${n}`)).toBe(n);
  });
});
