import { describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';

describe('GET /api/admin/instance-admin/statistics/csv', () => {
  it("answers the statistics as Unleash's CSV download: a header of the keys and one row of values", async () => {
    const json = await bodyOf(await call('GET', '/api/admin/instance-admin/statistics'));
    const response = await call('GET', '/api/admin/instance-admin/statistics/csv');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toMatch(
      new RegExp(`^attachment; filename="unleash-${json.instanceId}-\\d+\\.csv"$`),
    );
    const [header, values, ...rest] = (await response.text()).split('\n');
    expect(rest).toEqual([]);
    expect(header).toBe(
      Object.keys(json)
        .map((key) => `"${key}"`)
        .join(','),
    );
    const fields = values!.match(/("([^"]|"")*"|[^,]*)(,|$)/g)!.map((field) => field.replace(/,$/, ''));
    const keys = Object.keys(json);
    const at = (key: string) => fields[keys.indexOf(key)];
    expect(at('versionOSS')).toBe('"6.10.1"');
    expect(at('versionEnterprise')).toBe('""');
    expect(at('projects')).toBe(String(json.projects));
    expect(at('SAMLenabled')).toBe('false');
    expect(at('apiTokens')).toBe(`"${JSON.stringify(json.apiTokens).replaceAll('"', '""')}"`);
    expect(at('sum')).toMatch(/^"[0-9a-f]{64}"$/);
  });

  it('needs an admin-API caller', async () => {
    await expectError(await call('GET', '/api/admin/instance-admin/statistics/csv', { token: null }), 401, 'AuthenticationRequired');
  });
});

describe('GET /api/admin/licensed-users', () => {
  it("answers the Users page's seats box: every account a seat, the current figure those active in 30 days", async () => {
    const stats = await bodyOf(await call('GET', '/api/admin/instance-admin/statistics'));
    const response = await call('GET', '/api/admin/licensed-users');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      seatCount: stats.users,
      licensedUsers: { current: stats.activeUsers.last30, history: [] },
    });
  });

  it('needs a signed-in caller', async () => {
    await expectError(await call('GET', '/api/admin/licensed-users', { token: null }), 401, 'AuthenticationRequired');
  });
});
