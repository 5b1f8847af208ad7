/** A disabled environment stops serving its flags to SDKs at once: client, frontend, delta and streaming. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOk } from './support/admin';
import { bodyOf, call, createToken } from './support/http';
import { unique } from './support/names';

const FLAG = unique('envoff');
let client: string;
let frontend: string;

beforeAll(async () => {
  client = await createToken({ tokenName: 'envoff-backend', type: 'backend', environment: 'production' });
  frontend = await createToken({ tokenName: 'envoff-frontend', type: 'frontend', environment: 'production' });
  await adminOk('POST', '/api/admin/projects/default/features', { name: FLAG });
  await adminOk('POST', `/api/admin/projects/default/features/${FLAG}/environments/production/strategies`, { name: 'default' });
  await adminOk('POST', `/api/admin/projects/default/features/${FLAG}/environments/production/on`);
});

afterAll(async () => {
  await call('POST', '/api/admin/environments/production/on');
});

async function clientFlag() {
  const body = await bodyOf(await call('GET', '/api/client/features', { token: client }));
  return body.features.find((feature: { name: string }) => feature.name === FLAG);
}

async function frontendToggles(): Promise<string[]> {
  const body = await bodyOf(await call('GET', '/api/frontend', { token: frontend }));
  return body.toggles.map((toggle: { name: string }) => toggle.name);
}

async function hydration() {
  const body = await bodyOf(await call('GET', '/api/client/delta', { token: client }));
  const [event] = body.events;
  expect(event.type).toBe('hydration');
  return event.features.find((feature: { name: string }) => feature.name === FLAG);
}

async function streamedFlag() {
  const response = await call('GET', '/api/client/streaming', { token: client, headers: { accept: 'text/event-stream' } });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  let text = '';
  while (!text.includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  await reader.cancel();
  // The first event: `unleash-connected` with a hydration of the environment.
  expect(text.startsWith('event: unleash-connected\n')).toBe(true);
  const data = text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim())
    .join('');
  const events = JSON.parse(data).events as { type: string; features: { name: string; enabled: boolean }[] }[];
  return events[0]!.features.find((feature) => feature.name === FLAG);
}

describe('POST /api/admin/environments/:name/off and SDKs', () => {
  it('serves the flags of a disabled environment as disabled at once, and again as they are once it is on', async () => {
    expect(await clientFlag()).toMatchObject({ enabled: true });
    expect(await frontendToggles()).toContain(FLAG);
    expect(await hydration()).toMatchObject({ enabled: true });
    expect(await streamedFlag()).toMatchObject({ enabled: true });

    await adminOk('POST', '/api/admin/environments/production/off');
    expect(await clientFlag()).toMatchObject({ enabled: false });
    expect(await frontendToggles()).not.toContain(FLAG);
    expect(await hydration()).toMatchObject({ enabled: false });
    expect(await streamedFlag()).toMatchObject({ enabled: false });
    // Its own setting is kept: the admin API still says the flag is on there.
    const flag = await bodyOf(await call('GET', `/api/admin/projects/default/features/${FLAG}`));
    expect(flag.environments.find((environment: { name: string }) => environment.name === 'production').enabled).toBe(true);

    await adminOk('POST', '/api/admin/environments/production/on');
    expect(await clientFlag()).toMatchObject({ enabled: true });
    expect(await frontendToggles()).toContain(FLAG);
    expect(await hydration()).toMatchObject({ enabled: true });
  });
});
