/**
 * The client-specification files whose flags use the legacy strategies (`userWithId`,
 * `gradualRolloutUserId`, `gradualRolloutSessionId`, `gradualRolloutRandom`,
 * `remoteAddress`), loaded as a team moving from Unleash would load them: the strategies
 * Unleash 6 no longer ships are defined as custom strategies, then the flags are imported
 * through the admin API. Every test of those files is then answered by the official Node SDK
 * over the client API and by the frontend API, against the real Worker (wrangler dev).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Unleash } from 'unleash-client';
import { startWorker } from '../bench/sdk/worker.mjs';
import type { Context } from '../src/sdk/evaluation/types';
import { specFile } from './support/client-specification';
import { testWorkerPort } from './support/node-env';

const PORT = testWorkerPort(8794) + 1;
const PROJECT = 'legacy-spec';

/** The files with flags on legacy strategies (the other files are covered by client-specification*.test.ts). */
const FILES = [
  '02-user-with-id-strategy.json',
  '03-gradual-rollout-user-id-strategy.json',
  '04-gradual-rollout-session-id-strategy.json',
  '05-gradual-rollout-random-strategy.json',
  '06-remote-address-strategy.json',
  '07-multiple-strategies.json',
  '09-strategy-constraints.json',
];

/** Definitions Unleash 6 no longer seeds; a team re-creates them before importing its flags. */
const LEGACY_DEFINITIONS = [
  { name: 'gradualRolloutUserId', parameters: ['percentage', 'groupId'] },
  { name: 'gradualRolloutSessionId', parameters: ['percentage', 'groupId'] },
  { name: 'gradualRolloutRandom', parameters: ['percentage'] },
];

/**
 * Tests whose context the frontend API completes before evaluating, as Unleash's does: a
 * missing session id becomes a fresh one and a missing address the caller's (127.0.0.1 under
 * wrangler dev). The SDK answers them as the file says; the frontend API answers for the
 * completed context, which is fixed here with the reason.
 */
const COMPLETED_BY_FRONTEND: Record<string, boolean> = {
  // 100% of sessions: any fresh session id is in.
  'Feature.A4 should be disabled when no user on context': true,
  // The flag is on for 127.0.0.1, the caller's address here.
  'Feature.remoteAddress.A should not be enabled for missing remoteAddress on context': true,
};

let worker: Awaited<ReturnType<typeof startWorker>>;
let clientKey: string;
let frontendKey: string;

async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${worker.base}${path}`, {
    method,
    headers: { authorization: worker.token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function adminOk(method: string, path: string, body?: unknown, accepted: number[] = []): Promise<Response> {
  const response = await admin(method, path, body);
  if (response.status >= 300 && !accepted.includes(response.status))
    throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response;
}

function importPayload() {
  const features: { name: string; description?: string }[] = [];
  const featureStrategies: Record<string, unknown>[] = [];
  const featureEnvironments: Record<string, unknown>[] = [];
  for (const file of FILES) {
    for (const feature of specFile(file).state.features ?? []) {
      features.push({ name: feature.name, description: (feature as { description?: string }).description ?? '' });
      (feature.strategies ?? []).forEach((strategy, sortOrder) =>
        featureStrategies.push({
          name: strategy.name,
          featureName: feature.name,
          parameters: strategy.parameters ?? {},
          constraints: strategy.constraints ?? [],
          sortOrder,
        }),
      );
      featureEnvironments.push({ name: 'development', featureName: feature.name, enabled: feature.enabled });
    }
  }
  return { project: PROJECT, environment: 'development', data: { features, featureStrategies, featureEnvironments, tagTypes: [] } };
}

beforeAll(async () => {
  worker = await startWorker({ port: PORT });
  for (const { name, parameters } of LEGACY_DEFINITIONS) {
    await adminOk('POST', '/api/admin/strategies', {
      name,
      description: `${name} (legacy)`,
      parameters: parameters.map((parameter) => ({
        name: parameter,
        type: parameter === 'percentage' ? 'percentage' : 'string',
        description: '',
        required: false,
      })),
    });
  }
  for (const field of ['country', 'remoteAddress']) await adminOk('POST', '/api/admin/context', { name: field }, [409]);
  await adminOk('POST', '/api/admin/projects', { id: PROJECT, name: PROJECT, environments: ['development'] });
  await adminOk('POST', '/api/admin/features-batch/import', importPayload());
  const key = async (type: string) => {
    const response = await adminOk('POST', '/api/admin/api-tokens', {
      tokenName: `legacy-${type}`,
      type,
      environment: 'development',
      projects: [PROJECT],
    });
    return ((await response.json()) as { secret: string }).secret;
  };
  clientKey = await key('client');
  frontendKey = await key('frontend');
}, 120_000);

afterAll(async () => {
  await worker?.stop();
});

function waitFor(sdk: Unleash, event: string, timeoutMs = 20_000): Promise<void> {
  const emitter = sdk as unknown as { once(event: string, listener: () => void): unknown };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${event}" within ${timeoutMs} ms`)), timeoutMs);
    emitter.once(event, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

const cases = FILES.flatMap((file) => (specFile(file).tests ?? []).map((test) => ({ file, ...test })));

describe('legacy-strategy specification files, loaded through the admin API', () => {
  it('has the tests we expect to run', () => {
    expect(cases).toHaveLength(5 + 6 + 6 + 4 + 6 + 6 + 17);
    expect(Object.keys(COMPLETED_BY_FRONTEND).every((description) => cases.some((test) => test.description === description))).toBe(true);
  });

  it('serves the legacy strategies to the client API as stored', async () => {
    const response = await fetch(`${worker.base}/api/client/features`, { headers: { authorization: clientKey } });
    expect(response.status).toBe(200);
    const served = (await response.json()) as { features: { name: string; strategies: { name: string }[] }[] };
    const names = new Set(served.features.flatMap((feature) => feature.strategies.map((strategy) => strategy.name)));
    for (const legacy of ['userWithId', 'gradualRolloutUserId', 'gradualRolloutSessionId', 'gradualRolloutRandom', 'remoteAddress'])
      expect(names).toContain(legacy);
  });

  it('the official Node SDK answers every test as the specification says', async () => {
    const unleash = new Unleash({
      url: `${worker.base}/api/`,
      appName: 'legacy-spec',
      customHeaders: { Authorization: clientKey },
      refreshInterval: 60_000,
      disableMetrics: true,
      skipInstanceCountWarning: true,
    });
    try {
      await waitFor(unleash, 'synchronized');
      const answers = cases.map((test) => [
        test.file,
        test.description,
        unleash.isEnabled(test.toggleName, test.context as Parameters<Unleash['isEnabled']>[1]),
      ]);
      expect(answers).toEqual(cases.map((test) => [test.file, test.description, test.expectedResult]));
    } finally {
      unleash.destroy();
    }
  }, 60_000);

  it('the frontend API answers every test as the specification says (for the context it evaluates)', async () => {
    const answers: unknown[] = [];
    for (const test of cases) {
      const response = await fetch(`${worker.base}/api/frontend`, {
        method: 'POST',
        headers: { authorization: frontendKey, 'content-type': 'application/json' },
        body: JSON.stringify({ context: test.context satisfies Context }),
      });
      expect(response.status).toBe(200);
      const { toggles } = (await response.json()) as { toggles: { name: string }[] };
      answers.push([test.file, test.description, toggles.some((toggle) => toggle.name === test.toggleName)]);
    }
    expect(answers).toEqual(
      cases.map((test) => [test.file, test.description, COMPLETED_BY_FRONTEND[test.description] ?? test.expectedResult]),
    );
  }, 60_000);
});
