import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError } from './support/http';
import { signInAs } from './support/users';
import { refuseWriteInMaintenance } from '../src/admin/maintenance/service';
import { count } from './support/db';

let editor: string;

beforeAll(async () => {
  editor = await signInAs('Editor');
});

async function setMaintenance(enabled: boolean) {
  const response = await call('POST', '/api/admin/maintenance', { body: { enabled } });
  expect(response.status).toBe(204);
  expect(await response.text()).toBe('');
}

describe('GET and POST /api/admin/maintenance', () => {
  it('is off at first, turns on and off (204), and records setting events', async () => {
    expect(await bodyOf(await call('GET', '/api/admin/maintenance'))).toEqual({ enabled: false });
    await setMaintenance(true);
    expect(await bodyOf(await call('GET', '/api/admin/maintenance'))).toEqual({ enabled: true });
    expect((await bodyOf(await call('GET', '/api/admin/ui-config'))).maintenanceMode).toBe(true);
    const created = await env.DB.prepare("SELECT data FROM events WHERE type = 'setting-created' ORDER BY id DESC LIMIT 1").first<{
      data: string;
    }>();
    expect(JSON.parse(created!.data)).toEqual({ id: 'maintenance.mode', enabled: true });
    await setMaintenance(false);
    expect(await bodyOf(await call('GET', '/api/admin/maintenance'))).toEqual({ enabled: false });
    const updated = await env.DB.prepare(
      "SELECT data, pre_data FROM events WHERE type = 'setting-updated' ORDER BY id DESC LIMIT 1",
    ).first<{
      data: string;
      pre_data: string;
    }>();
    expect(JSON.parse(updated!.data)).toEqual({ id: 'maintenance.mode', enabled: false });
    expect(JSON.parse(updated!.pre_data)).toEqual({ enabled: true });
  });

  it('refuses a caller without the permission and a bad body, writing nothing', async () => {
    const before = await count('SELECT count(*) AS n FROM events');
    await expectError(await call('POST', '/api/admin/maintenance', { body: { enabled: true }, token: editor }), 403, 'NoAccessError');
    await expectError(await call('GET', '/api/admin/maintenance', { token: editor }), 403, 'NoAccessError');
    await expectError(await call('POST', '/api/admin/maintenance', { body: { enabled: 'yes' } }), 400, 'ValidationError');
    expect(await count('SELECT count(*) AS n FROM events')).toBe(before);
  });
});

describe('while maintenance mode is on', () => {
  it('refuses admin writes with 503 and writes nothing; reads and SDK traffic keep working', async () => {
    const clientKey = await createToken({ tokenName: 'maint-client', type: 'client', environment: 'development', projects: ['*'] });
    await setMaintenance(true);
    try {
      const before = await count('SELECT count(*) AS n FROM events');
      // Unleash answers only the message, not its usual error body.
      const refused = await call('POST', '/api/admin/projects/default/features', { body: { name: 'during-maintenance' } });
      expect(refused.status).toBe(503);
      expect(await refused.text()).toBe('{"message":"Unleash is currently in maintenance mode."}');
      const context = await call('POST', '/api/admin/context', { body: { name: 'during' } });
      expect(context.status).toBe(503);
      expect(await bodyOf(context)).toEqual({ message: 'Unleash is currently in maintenance mode.' });
      expect(await count('SELECT count(*) AS n FROM events')).toBe(before);
      expect(await count("SELECT count(*) AS n FROM features WHERE name = 'during-maintenance'")).toBe(0);
      expect((await call('GET', '/api/admin/context')).status).toBe(200);
      expect((await call('GET', '/api/client/features', { token: clientKey })).status).toBe(200);
      expect(
        (
          await call('POST', '/api/client/register', {
            token: clientKey,
            body: { appName: 'maint-app', instanceId: 'i-1', interval: 10000, started: new Date().toISOString(), strategies: [] },
          })
        ).status,
      ).toBeLessThan(300);
    } finally {
      await setMaintenance(false);
    }
    expect((await call('POST', '/api/admin/projects/default/features', { body: { name: 'after-maintenance' } })).status).toBe(201);
  });
});

describe('the maintenance guard of admin writes', () => {
  // With a tick of a minute, as in production with a longer SDK_REVISION_CHECK_MS.
  const ticking = { ...env, SDK_REVISION_CHECK_MS: '60000' };
  const switchInD1 = (enabled: boolean) =>
    env.DB.prepare(
      "INSERT INTO settings (name, content) VALUES ('maintenance.mode', ?) ON CONFLICT (name) DO UPDATE SET content = excluded.content",
    )
      .bind(JSON.stringify({ enabled }))
      .run();

  it('reads the switch once per tick, and again at once after this isolate flipped it', async () => {
    const start = Date.now();
    // Flipped through the API here: what this isolate knew of the switch is forgotten.
    await setMaintenance(false);
    await switchInD1(true);
    await expect(refuseWriteInMaintenance(ticking, 'POST', '/api/admin/context', start)).rejects.toMatchObject({ status: 503 });
    // Another isolate turns it off: this one follows within the tick, not before.
    await switchInD1(false);
    await expect(refuseWriteInMaintenance(ticking, 'POST', '/api/admin/context', start + 59_000)).rejects.toMatchObject({ status: 503 });
    await expect(refuseWriteInMaintenance(ticking, 'POST', '/api/admin/context', start + 60_000)).resolves.toBeUndefined();
    // Flipped here: the next guarded write reads it again whatever the tick.
    await switchInD1(true);
    await setMaintenance(false);
    await switchInD1(true);
    await expect(refuseWriteInMaintenance(ticking, 'POST', '/api/admin/context', start + 60_001)).rejects.toMatchObject({ status: 503 });
    // Reads and the switch itself are never guarded.
    await expect(refuseWriteInMaintenance(ticking, 'GET', '/api/admin/context', start)).resolves.toBeUndefined();
    await expect(refuseWriteInMaintenance(ticking, 'POST', '/api/admin/maintenance', start)).resolves.toBeUndefined();
    await switchInD1(false);
  });
});
