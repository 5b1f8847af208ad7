import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { signInAs } from './support/users';
import { count, lastEvent, parsedEvent } from './support/db';

const ADDON_KEYS = ['id', 'provider', 'enabled', 'description', 'parameters', 'events', 'projects', 'environments', 'createdAt'];

function webhook(overrides: Record<string, unknown> = {}) {
  return {
    provider: 'webhook',
    enabled: true,
    description: 'deploys',
    parameters: { url: 'https://hooks.example.com/unleash', authorization: 'Bearer s3cret', customHeaders: '{"X-Team":"core"}' },
    events: ['feature-environment-enabled'],
    projects: ['default'],
    environments: ['production'],
    ...overrides,
  };
}

async function createAddon(body: Record<string, unknown> = webhook()) {
  const response = await call('POST', '/api/admin/addons', { body });
  if (response.status !== 201) throw new Error(`addon creation failed: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

describe('GET /api/admin/addons', () => {
  it('lists the providers of Unleash 6.10.1 with their parameters and events', async () => {
    const response = await call('GET', '/api/admin/addons');
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['addons', 'providers']);
    expect(body.providers.map((provider: { name: string }) => provider.name)).toEqual([
      'webhook',
      'slack',
      'slack-app',
      'teams',
      'datadog',
      'new-relic',
    ]);
    const hook = body.providers[0];
    expect(Object.keys(hook)).toEqual(['name', 'displayName', 'description', 'documentationUrl', 'howTo', 'parameters', 'events']);
    expect(hook.parameters.map((parameter: { name: string }) => parameter.name)).toEqual([
      'url',
      'contentType',
      'authorization',
      'customHeaders',
      'bodyTemplate',
    ]);
    expect(hook.events).toContain('feature-environment-enabled');
  });

  it('lists integrations with their secrets masked', async () => {
    const created = await createAddon();
    const body = await bodyOf(await call('GET', '/api/admin/addons'));
    const listed = body.addons.find((addon: { id: number }) => addon.id === created.id);
    expect(Object.keys(listed)).toEqual(ADDON_KEYS);
    expect(listed.parameters).toEqual({ url: '*****', authorization: '*****', customHeaders: '*****' });
  });

  it('401 without a credential', async () => {
    await expectError(await call('GET', '/api/admin/addons', { token: null }), 401, 'AuthenticationRequired');
  });
});

describe('POST /api/admin/addons', () => {
  it('creates an integration: 201 without createdAt, secrets as sent (6.10.1 answers the new configuration), an event without parameters', async () => {
    const response = await call('POST', '/api/admin/addons', { body: { ...webhook(), unknownKey: 1 } });
    expect(response.status).toBe(201);
    const addon = await bodyOf(response);
    expect(Object.keys(addon)).toEqual(ADDON_KEYS.slice(0, -1));
    expect(addon).toEqual({
      id: addon.id,
      provider: 'webhook',
      enabled: true,
      description: 'deploys',
      parameters: webhook().parameters,
      events: ['feature-environment-enabled'],
      projects: ['default'],
      environments: ['production'],
    });
    const event = parsedEvent(await lastEvent('addon-config-created'));
    expect(event!.data).toEqual({
      id: addon.id,
      provider: 'webhook',
      enabled: true,
      description: 'deploys',
      events: ['feature-environment-enabled'],
      projects: ['default'],
      environments: ['production'],
    });
    expect(event!.createdBy).toBe('admin');
    // Secrets are stored, never written to the audit log.
    const stored = await env.DB.prepare('SELECT parameters FROM addons WHERE id = ?').bind(addon.id).first<{ parameters: string }>();
    expect(JSON.parse(stored!.parameters).authorization).toBe('Bearer s3cret');
    expect(JSON.stringify(event)).not.toContain('s3cret');
  });

  it('defaults projects and environments to all and description to null', async () => {
    const addon = await createAddon({ provider: 'teams', enabled: false, parameters: { url: 'https://teams.example.com/x' }, events: [] });
    expect(addon).toMatchObject({ description: null, projects: [], environments: [], enabled: false });
  });

  it("creates the provider's missing tag types with it, each with Unleash's system-user event, in the same batch", async () => {
    await env.DB.prepare("DELETE FROM tag_types WHERE name IN ('datadog', 'new-relic')").run();
    const firstEvent = await count('SELECT coalesce(max(id), 0) AS n FROM events');
    const datadog = { provider: 'datadog', enabled: true, parameters: { apiKey: 'k' }, events: ['feature-created'] };
    // Refused: no tag type either.
    await expectError(await call('POST', '/api/admin/addons', { body: { ...datadog, parameters: {} } }), 400, 'ValidationError');
    expect(await count("SELECT count(*) AS n FROM tag_types WHERE name = 'datadog'")).toBe(0);

    const created = await createAddon(datadog);
    expect(await bodyOf(await call('GET', '/api/admin/tag-types/datadog'))).toEqual({
      version: 1,
      tagType: {
        name: 'datadog',
        description: 'All Datadog tags added to a specific feature are sent to datadog event stream.',
        icon: 'D',
        color: null,
      },
    });
    const { results } = await env.DB.prepare('SELECT type, created_by, created_by_user_id, data FROM events WHERE id > ? ORDER BY id')
      .bind(firstEvent)
      .all<Record<string, any>>();
    // As Unleash: the tag type's event first, written by the system user, then the integration's.
    expect(results.map((row) => ({ ...row, data: JSON.parse(row.data) }))).toEqual([
      {
        type: 'tag-type-created',
        created_by: 'unleash_system_user',
        created_by_user_id: -1337,
        data: { name: 'datadog', description: 'All Datadog tags added to a specific feature are sent to datadog event stream.', icon: 'D' },
      },
      {
        type: 'addon-config-created',
        created_by: 'admin',
        created_by_user_id: -42,
        data: expect.objectContaining({ id: created.id, provider: 'datadog' }),
      },
    ]);

    // A second one finds the tag type: no second event, and an edited tag type keeps its edits.
    await env.DB.prepare("UPDATE tag_types SET description = 'ours' WHERE name = 'datadog'").run();
    await createAddon(datadog);
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'tag-type-created' AND id > ?", firstEvent)).toBe(1);
    expect(
      (await env.DB.prepare("SELECT description FROM tag_types WHERE name = 'datadog'").first<{ description: string }>())!.description,
    ).toBe('ours');

    // A provider without tag types (webhook) creates none.
    const tagTypes = await count('SELECT count(*) AS n FROM tag_types');
    await createAddon();
    expect(await count('SELECT count(*) AS n FROM tag_types')).toBe(tagTypes);
    // New Relic's is its own.
    await createAddon({
      provider: 'new-relic',
      enabled: true,
      parameters: { url: 'https://nr.example.com/e', licenseKey: 'l' },
      events: [],
    });
    expect(await count("SELECT count(*) AS n FROM tag_types WHERE name = 'new-relic' AND icon = 'D'")).toBe(1);
  });

  it('400 for a missing field, a wrong type, an unknown provider or missing required parameters; nothing written', async () => {
    const before = await count('SELECT count(*) AS n FROM addons');
    const events = await count("SELECT count(*) AS n FROM events WHERE type LIKE 'addon-%'");
    const missing = await expectError(
      await call('POST', '/api/admin/addons', { body: { enabled: true, parameters: {}, events: [] } }),
      400,
      'ValidationError',
    );
    expect(missing.details[0]!.path).toBe('/body/provider');
    const wrongType = await expectError(
      await call('POST', '/api/admin/addons', { body: webhook({ enabled: 'x' }) }),
      400,
      'ValidationError',
    );
    expect(wrongType.details[0]!.path).toBe('/body/enabled');
    const unknown = await expectError(
      await call('POST', '/api/admin/addons', { body: webhook({ provider: 'nope' }) }),
      400,
      'ValidationError',
    );
    expect(unknown.details[0]!.message).toBe('Unknown addon provider nope');
    const required = await expectError(
      await call('POST', '/api/admin/addons', { body: webhook({ parameters: {} }) }),
      400,
      'ValidationError',
    );
    expect(required.details[0]!.message).toBe('Missing required parameters: url');
    const nested = await expectError(
      await call('POST', '/api/admin/addons', { body: webhook({ parameters: { url: { a: 1 } } }) }),
      400,
      'ValidationError',
    );
    expect(nested.details[0]!.path).toBe('/body/parameters/url');
    expect(await count('SELECT count(*) AS n FROM addons')).toBe(before);
    expect(await count("SELECT count(*) AS n FROM events WHERE type LIKE 'addon-%'")).toBe(events);
  });

  it('403 for a viewer; nothing written', async () => {
    const viewer = await signInAs(3);
    const before = await count('SELECT count(*) AS n FROM addons');
    const refused = await expectError(await call('POST', '/api/admin/addons', { token: viewer, body: webhook() }), 403, 'NoAccessError');
    expect(refused.message).toContain('CREATE_ADDON');
    expect(await count('SELECT count(*) AS n FROM addons')).toBe(before);
  });

  it('an editor may create one', async () => {
    const editor = await signInAs(2);
    expect((await call('POST', '/api/admin/addons', { token: editor, body: webhook() })).status).toBe(201);
  });
});

describe('GET /api/admin/addons/:id', () => {
  it('answers the integration with createdAt and secrets masked', async () => {
    const created = await createAddon({
      provider: 'datadog',
      enabled: true,
      parameters: { url: 'https://api.datadoghq.eu/api/v1/events', apiKey: 'dd-key', sourceTypeName: 'unleash' },
      events: ['feature-created'],
    });
    const response = await call('GET', `/api/admin/addons/${created.id}`);
    expect(response.status).toBe(200);
    const addon = await bodyOf(response);
    expect(Object.keys(addon)).toEqual(ADDON_KEYS);
    // Datadog's url is not sensitive; its API key is.
    expect(addon.parameters).toEqual({ url: 'https://api.datadoghq.eu/api/v1/events', apiKey: '*****', sourceTypeName: 'unleash' });
  });

  it('404 for an unknown or malformed id', async () => {
    const missing = await expectError(await call('GET', '/api/admin/addons/999999'), 404, 'NotFoundError');
    expect(missing.message).toBe('Could not find addon');
    await expectError(await call('GET', '/api/admin/addons/abc'), 404, 'NotFoundError');
  });
});

describe('PUT /api/admin/addons/:id', () => {
  it('replaces the integration; a masked secret keeps its value; the event has pre and post data without parameters', async () => {
    const created = await createAddon();
    const response = await call('PUT', `/api/admin/addons/${created.id}`, {
      body: {
        provider: 'webhook',
        enabled: false,
        parameters: { url: '*****', authorization: 'Bearer new', customHeaders: '{}' },
        events: ['feature-created'],
      },
    });
    expect(response.status).toBe(200);
    const addon = await bodyOf(response);
    expect(Object.keys(addon)).toEqual(ADDON_KEYS);
    // No description sent: the stored one is kept (6.10.1).
    expect(addon).toMatchObject({ enabled: false, description: 'deploys', projects: [], environments: [], events: ['feature-created'] });
    // As sent: the unchanged secret stays masked, the new ones are what the caller just sent.
    expect(addon.parameters).toEqual({ url: '*****', authorization: 'Bearer new', customHeaders: '{}' });
    expect((await bodyOf(await call('GET', `/api/admin/addons/${created.id}`))).parameters).toEqual({
      url: '*****',
      authorization: '*****',
      customHeaders: '*****',
    });
    const stored = await env.DB.prepare('SELECT parameters FROM addons WHERE id = ?').bind(created.id).first<{ parameters: string }>();
    expect(JSON.parse(stored!.parameters)).toEqual({
      url: 'https://hooks.example.com/unleash',
      authorization: 'Bearer new',
      customHeaders: '{}',
    });
    const event = parsedEvent(await lastEvent('addon-config-updated'));
    expect(event!.data).toMatchObject({ id: created.id, enabled: false, events: ['feature-created'] });
    expect(event!.preData).toMatchObject({ id: created.id, enabled: true, events: ['feature-environment-enabled'] });
    expect(event!.data.parameters).toBeUndefined();
    expect(event!.preData.parameters).toBeUndefined();
  });

  it('404 for an unknown integration, 400 for a bad body, 403 for a viewer; nothing written', async () => {
    const created = await createAddon();
    const events = await count("SELECT count(*) AS n FROM events WHERE type = 'addon-config-updated'");
    await expectError(await call('PUT', '/api/admin/addons/999999', { body: webhook() }), 404, 'NotFoundError');
    await expectError(await call('PUT', `/api/admin/addons/${created.id}`, { body: webhook({ events: 'x' }) }), 400, 'ValidationError');
    await expectError(
      await call('PUT', `/api/admin/addons/${created.id}`, { body: webhook({ provider: 'nope' }) }),
      400,
      'ValidationError',
    );
    const viewer = await signInAs(3);
    await expectError(
      await call('PUT', `/api/admin/addons/${created.id}`, { token: viewer, body: webhook({ enabled: false }) }),
      403,
      'NoAccessError',
    );
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'addon-config-updated'")).toBe(events);
    expect((await bodyOf(await call('GET', `/api/admin/addons/${created.id}`))).enabled).toBe(true);
  });
});

describe('DELETE /api/admin/addons/:id', () => {
  it('deletes the integration: 200 without a body, an event', async () => {
    const created = await createAddon();
    const response = await call('DELETE', `/api/admin/addons/${created.id}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    await expectError(await call('GET', `/api/admin/addons/${created.id}`), 404, 'NotFoundError');
    const event = parsedEvent(await lastEvent('addon-config-deleted'));
    expect(event!.preData).toMatchObject({ id: created.id, provider: 'webhook' });
    expect(event!.data).toBeNull();
  });

  it('404 for an unknown integration, 403 for a viewer; nothing written', async () => {
    const created = await createAddon();
    await expectError(await call('DELETE', '/api/admin/addons/999999'), 404, 'NotFoundError');
    const viewer = await signInAs(3);
    const events = await count("SELECT count(*) AS n FROM events WHERE type = 'addon-config-deleted'");
    await expectError(await call('DELETE', `/api/admin/addons/${created.id}`, { token: viewer }), 403, 'NoAccessError');
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'addon-config-deleted'")).toBe(events);
    expect((await call('GET', `/api/admin/addons/${created.id}`)).status).toBe(200);
  });
});

describe('GET /api/admin/addons/:id/events', () => {
  it('answers an empty log for a new integration', async () => {
    const created = await createAddon();
    const response = await call('GET', `/api/admin/addons/${created.id}/events`);
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({ integrationEvents: [] });
  });

  it('400 for a malformed id, 403 for an editor (admins only)', async () => {
    const bad = await expectError(await call('GET', '/api/admin/addons/abc/events'), 400, 'ValidationError');
    expect(bad.details[0]!.message).toBe('Invalid integration configuration id');
    const editor = await signInAs(2);
    await expectError(await call('GET', '/api/admin/addons/1/events', { token: editor }), 403, 'NoAccessError');
  });
});
