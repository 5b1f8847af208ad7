/**
 * Unknown flags (Unleash 7.0+): metrics for names that are not flags are recorded per name,
 * application and environment, from backend and frontend keys, and listed for a day.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { expireUnknownFlags } from '../src/scheduled';
import { createFeature } from './support/admin';
import { count } from './support/db';
import { bodyOf, call, createToken } from './support/http';
import { settleMetrics } from './support/metrics';
import { unique } from './support/names';

interface UnknownFlag {
  name: string;
  lastSeenAt: string;
  lastEventAt: string | null;
  reports: { appName: string; environments: { environment: string; seenAt: string }[] }[];
}

async function unknownFlags(): Promise<UnknownFlag[]> {
  const response = await call('GET', '/api/admin/metrics/unknown-flags');
  expect(response.status).toBe(200);
  const body = await bodyOf<{ unknownFlags: UnknownFlag[] }>(response);
  expect(Object.keys(body)).toEqual(['unknownFlags']);
  return body.unknownFlags;
}

async function report(path: string, token: string, appName: string, toggles: Record<string, { yes: number; no: number }>) {
  const now = new Date().toISOString();
  const response = await call('POST', path, { token, body: { appName, instanceId: 'i1', bucket: { start: now, stop: now, toggles } } });
  expect(response.status).toBeLessThan(300);
}

describe('GET /api/admin/metrics/unknown-flags', () => {
  it('lists names SDKs counted that are not flags, by application and environment, in 8.x’s shape', async () => {
    const known = unique('uf-known');
    await createFeature(known);
    const ghost = unique('uf-ghost');
    const deleted = unique('uf-deleted');
    await createFeature(deleted);
    expect((await call('DELETE', `/api/admin/projects/default/features/${deleted}`)).status).toBe(202);
    expect((await call('DELETE', `/api/admin/archive/${deleted}`)).status).toBe(200);
    const backend = await createToken({ tokenName: unique('uf-backend'), type: 'backend', environment: 'development', projects: ['*'] });
    const production = await createToken({ tokenName: unique('uf-prod'), type: 'client', environment: 'production', projects: ['*'] });
    const frontend = await createToken({ tokenName: unique('uf-front'), type: 'frontend', environment: 'development', projects: ['*'] });
    const before = await count('SELECT count(*) AS n FROM unknown_flags');

    await report('/api/client/metrics', backend, 'uf-app', {
      [ghost]: { yes: 1, no: 0 },
      [known]: { yes: 1, no: 1 },
      [deleted]: { yes: 1, no: 0 },
    });
    await report('/api/client/metrics', production, 'uf-app', { [ghost]: { yes: 0, no: 2 } });
    await report('/api/frontend/client/metrics', frontend, 'uf-web', { [ghost]: { yes: 2, no: 0 } });
    // Nothing counted: not a report.
    await report('/api/client/metrics', backend, 'uf-app', { [unique('uf-silent')]: { yes: 0, no: 0 } });
    await settleMetrics();

    const listed = await unknownFlags();
    const names = listed.map((flag) => flag.name);
    expect(names).toEqual([...names].sort());
    expect(names).not.toContain(known);
    const entry = listed.find((flag) => flag.name === ghost)!;
    expect(Object.keys(entry)).toEqual(['name', 'lastSeenAt', 'lastEventAt', 'reports']);
    expect(entry.lastEventAt).toBeNull();
    expect(entry.reports).toEqual([
      {
        appName: 'uf-app',
        environments: [
          { environment: 'development', seenAt: expect.any(String) },
          { environment: 'production', seenAt: expect.any(String) },
        ],
      },
      { appName: 'uf-web', environments: [{ environment: 'development', seenAt: expect.any(String) }] },
    ]);
    expect(entry.lastSeenAt).toBe(entry.reports.flatMap((r) => r.environments.map((e) => e.seenAt)).reduce((a, b) => (a > b ? a : b)));
    // A deleted flag's name is unknown again, and its last event says when it went.
    const gone = listed.find((flag) => flag.name === deleted)!;
    expect(gone.lastEventAt).toEqual(expect.any(String));
    expect(await count('SELECT count(*) AS n FROM unknown_flags')).toBe(before + 4);

    // Creating the flag takes it off the list; reports older than a day go.
    await createFeature(ghost);
    expect((await unknownFlags()).map((flag) => flag.name)).not.toContain(ghost);
    await env.DB.prepare("UPDATE unknown_flags SET seen_at = '2000-01-01T00:00:00.000Z' WHERE name = ?").bind(deleted).run();
    expect((await unknownFlags()).map((flag) => flag.name)).not.toContain(deleted);
    await expireUnknownFlags.run(env, new Date());
    expect(await count('SELECT count(*) AS n FROM unknown_flags WHERE name = ?', deleted)).toBe(0);
  });

  it('takes at most 50 unknown names from one frontend post, and needs an admin-API caller', async () => {
    const frontend = await createToken({ tokenName: unique('uf-front2'), type: 'frontend', environment: 'development', projects: ['*'] });
    const prefix = unique('uf-many');
    const toggles = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`${prefix}-${i}`, { yes: 1, no: 0 }]));
    await report('/api/frontend/client/metrics', frontend, 'uf-web2', toggles);
    await settleMetrics();
    expect(await count("SELECT count(*) AS n FROM unknown_flags WHERE app_name = 'uf-web2'")).toBe(50);
    expect((await call('GET', '/api/admin/metrics/unknown-flags', { token: frontend })).status).toBe(403);
    expect((await call('GET', '/api/admin/metrics/unknown-flags', { token: null })).status).toBe(401);
  });
});
