/**
 * What Unleash 8 added to the SDK and Edge posts: `seenTokens` on `/api/client/metrics/bulk`
 * (the keys Edge's SDKs used, marked as used) and `sdkFlavor`/`sdkFlavorVersion` on
 * applications, registrations and metrics (checked with 8.2.0's bounds, kept nowhere an API
 * shows, as 8.2.0 keeps them only in Prometheus labels).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { count } from './support/db';
import { eventually } from './support/eventually';
import { bodyOf, call, createToken, expectError } from './support/http';
import { settleMetrics } from './support/metrics';
import { unique } from './support/names';

let clientToken: string;
/** The poster's own key is marked used by each post; the footprint leaves it out. */
const clientName = unique('bulk8-client');

beforeAll(async () => {
  clientToken = await createToken({ tokenName: clientName, type: 'client', environment: 'development' });
});

async function seenAtOf(tokenName: string): Promise<string | null> {
  const answer = await bodyOf<{ tokens: { seenAt: string | null }[] }>(await call('GET', `/api/admin/api-tokens/${tokenName}`));
  expect(answer.tokens).toHaveLength(1);
  return answer.tokens[0]!.seenAt;
}

function bulk(body: Record<string, unknown>) {
  return call('POST', '/api/client/metrics/bulk', { token: clientToken, body: { applications: [], metrics: [], ...body } });
}

/** What a refused post must leave untouched. */
async function footprint() {
  return {
    instances: await count('SELECT count(*) AS n FROM client_instances'),
    usage: await count('SELECT count(*) AS n FROM client_metrics_env'),
    seen: await count('SELECT count(*) AS n FROM api_tokens WHERE seen_at IS NOT NULL AND token_name <> ?', clientName),
  };
}

describe('bulk metrics: seenTokens (Unleash 8)', () => {
  it('marks each key we hold as used, whatever its type, and ignores the others', async () => {
    const frontendName = unique('bulk8-seen-frontend');
    const frontend = await createToken({ tokenName: frontendName, type: 'frontend', environment: 'development' });
    const backendName = unique('bulk8-seen-backend');
    const backend = await createToken({ tokenName: backendName, type: 'client', environment: 'production' });
    const idleName = unique('bulk8-idle');
    await createToken({ tokenName: idleName, type: 'client', environment: 'development' });
    expect(await seenAtOf(frontendName)).toBeNull();

    const before = Date.now();
    const response = await bulk({ seenTokens: [frontend, backend, frontend, 'default:development.not-a-key', ''] });
    expect(response.status).toBe(202);
    for (const name of [frontendName, backendName]) {
      const seenAt = await eventually(async () => {
        const value = await seenAtOf(name);
        expect(value).not.toBeNull();
        return value!;
      });
      expect(Date.parse(seenAt)).toBeGreaterThanOrEqual(before - 1000);
    }
    // A key named by no one stays unseen.
    expect(await seenAtOf(idleName)).toBeNull();
  });

  it('takes an empty list, and a body without it, as before', async () => {
    expect((await bulk({ seenTokens: [] })).status).toBe(202);
    expect((await bulk({})).status).toBe(202);
  });

  it('400 when seenTokens is not a list of strings or has more than 1000 entries, with nothing written', async () => {
    const name = unique('bulk8-refused');
    const key = await createToken({ tokenName: name, type: 'frontend', environment: 'development' });
    const application = { appName: unique('bulk8-app'), environment: 'development', instanceId: 'i1', sdkVersion: 'unleash-edge:20.0.0' };
    for (const seenTokens of ['x', null, [1], { key }, Array.from({ length: 1001 }, () => key)]) {
      const before = await footprint();
      const error = await expectError(await bulk({ applications: [application], seenTokens }), 400, 'ValidationError');
      expect(error.details[0]!.path).toMatch(/^\/body\/seenTokens/);
      await settleMetrics();
      expect(await footprint()).toEqual(before);
    }
    expect(await seenAtOf(name)).toBeNull();
  });
});

describe('sdkFlavor and sdkFlavorVersion (Unleash 8)', () => {
  const now = () => new Date().toISOString();

  it('are accepted on bulk applications, registrations and metrics; instances answer as before', async () => {
    const appName = unique('bulk8-flavoured');
    const flavour = { sdkFlavor: 'unleash-openfeature-node-provider', sdkFlavorVersion: '1.0.1' };
    const bulkAnswer = await bulk({
      applications: [{ appName, environment: 'development', instanceId: 'edge-sdk', sdkVersion: 'unleash-client-node:6.1.0', ...flavour }],
    });
    expect(bulkAnswer.status).toBe(202);
    const registered = await call('POST', '/api/client/register', {
      token: clientToken,
      body: { appName, instanceId: 'direct', strategies: ['default'], started: now(), interval: 10, ...flavour },
    });
    expect(registered.status).toBe(202);
    const metrics = await call('POST', '/api/client/metrics', {
      token: clientToken,
      body: { appName, instanceId: 'direct', bucket: { start: now(), stop: now(), toggles: {} }, ...flavour, sdkFlavor: null },
    });
    expect(metrics.status).toBe(202);

    await settleMetrics();
    const instances = await eventually(async () => {
      const answer = await bodyOf<{ instances: Record<string, unknown>[] }>(
        await call('GET', `/api/admin/metrics/instances/${appName}/environment/development`),
      );
      expect(answer.instances.map((instance) => instance.instanceId).sort()).toEqual(['direct', 'edge-sdk']);
      return answer.instances;
    });
    // 8.2.0's instance keys, with no flavour: it shows flavours in no API answer.
    for (const instance of instances) expect(Object.keys(instance)).toEqual(['instanceId', 'clientIp', 'sdkVersion', 'lastSeen']);
  });

  it("400 for a flavour longer than 8.2.0's bounds (256 and 32 characters), with nothing written", async () => {
    const appName = unique('bulk8-too-long');
    const cases: [string, unknown, string][] = [
      [
        '/api/client/metrics/bulk',
        {
          applications: [{ appName, environment: 'development', instanceId: 'i1', sdkFlavor: 'x'.repeat(257) }],
          metrics: [],
        },
        '/body/applications/0/sdkFlavor',
      ],
      [
        '/api/client/metrics/bulk',
        {
          applications: [{ appName, environment: 'development', instanceId: 'i1', sdkFlavorVersion: '1'.repeat(33) }],
          metrics: [],
        },
        '/body/applications/0/sdkFlavorVersion',
      ],
      [
        '/api/client/register',
        { appName, instanceId: 'i1', strategies: [], started: now(), interval: 10, sdkFlavor: 'x'.repeat(257) },
        '/body/sdkFlavor',
      ],
      [
        '/api/client/metrics',
        { appName, instanceId: 'i1', bucket: { start: now(), stop: now(), toggles: {} }, sdkFlavorVersion: '1'.repeat(33) },
        '/body/sdkFlavorVersion',
      ],
      ['/api/client/metrics', { appName, instanceId: 'i1', sdkFlavor: 7 }, '/body/sdkFlavor'],
    ];
    for (const [path, body, detailPath] of cases) {
      const before = await footprint();
      const error = await expectError(await call('POST', path, { token: clientToken, body }), 400, 'ValidationError');
      expect(error.details.map((detail) => detail.path)).toEqual([detailPath]);
      await settleMetrics();
      expect(await footprint()).toEqual(before);
    }
    expect(await count('SELECT count(*) AS n FROM client_instances WHERE app_name = ?', appName)).toBe(0);
    // Exactly at the bounds: accepted.
    const atBounds = await call('POST', '/api/client/register', {
      token: clientToken,
      body: {
        appName,
        instanceId: 'i1',
        strategies: [],
        started: now(),
        interval: 10,
        sdkFlavor: 'x'.repeat(256),
        sdkFlavorVersion: '1'.repeat(32),
      },
    });
    expect(atBounds.status).toBe(202);
  });
});
