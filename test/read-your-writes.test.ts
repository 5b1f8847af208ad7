/**
 * Read-your-writes on the SDK APIs with the revision check at its default (1 s): the Worker's
 * own fetch handler with the interval binding removed, in this one isolate.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createToken, envWith, fetchWith } from './support/http';
import { seedFlag } from './support/sdk-seed';

const defaultTick = envWith({ SDK_REVISION_CHECK_MS: undefined });

function send(method: string, path: string, token: string, body?: unknown): Promise<Response> {
  return fetchWith(defaultTick, method, path, { authorization: token }, body);
}

async function clientFlagNames(token: string): Promise<string[]> {
  const response = await send('GET', '/api/client/features', token);
  expect(response.status).toBe(200);
  return ((await response.json()) as { features: { name: string }[] }).features.map((feature) => feature.name);
}

let allProjects: string;

beforeAll(async () => {
  allProjects = await createToken({ tokenName: 'ryw-all', type: 'backend', environment: 'development' });
});

describe('read-your-writes within an isolate (default revision tick)', () => {
  it('shows a flag created in a new project in the very next /api/client/features', async () => {
    expect(await clientFlagNames(allProjects)).not.toContain('ryw.new-project-flag');
    expect((await send('POST', '/api/admin/projects', ADMIN_TOKEN, { id: 'ryw-project', name: 'RYW' })).status).toBe(201);
    const created = await send('POST', '/api/admin/projects/ryw-project/features', ADMIN_TOKEN, { name: 'ryw.new-project-flag' });
    expect(created.status).toBe(201);
    expect(await clientFlagNames(allProjects)).toContain('ryw.new-project-flag');
  });

  it('shows a flag switched on in the very next /api/frontend of a frontend key', async () => {
    const frontend = await createToken({ tokenName: 'ryw-frontend', type: 'frontend', environment: 'development' });
    expect((await send('POST', '/api/admin/projects/default/features', ADMIN_TOKEN, { name: 'ryw.toggle' })).status).toBe(201);
    const before = (await (await send('GET', '/api/frontend', frontend)).json()) as { toggles: { name: string }[] };
    expect(before.toggles.map((toggle) => toggle.name)).not.toContain('ryw.toggle');
    expect((await send('POST', '/api/admin/projects/default/features/ryw.toggle/environments/development/on', ADMIN_TOKEN)).status).toBe(
      200,
    );
    const after = (await (await send('GET', '/api/frontend', frontend)).json()) as { toggles: { name: string }[] };
    expect(after.toggles.map((toggle) => toggle.name)).toContain('ryw.toggle');
  });

  it('still waits for the tick for writes that did not go through this isolate (the control)', async () => {
    await clientFlagNames(allProjects);
    // Written straight into D1, as another isolate's write would be: not seen before the tick.
    await seedFlag({ name: 'ryw.elsewhere', environments: { development: { enabled: true } } });
    expect(await clientFlagNames(allProjects)).not.toContain('ryw.elsewhere');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await clientFlagNames(allProjects)).toContain('ryw.elsewhere');
  });
});
