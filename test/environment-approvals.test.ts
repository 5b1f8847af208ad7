/**
 * An environment's predefined change requests (`requiredApprovals`, Unleash Enterprise): kept,
 * answered back, and switched on with that many approvals in each project the environment joins.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { unique } from './support/names';
import { count, lastEvent } from './support/db';

function envName(): string {
  return unique('envcr').replace(/[^a-zA-Z0-9~_.-]/g, '-');
}

async function ok(method: string, path: string, body?: unknown) {
  const response = await call(method, path, { body });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response;
}

async function crConfig(project: string, environment: string) {
  const config = await bodyOf<{ environment: string; changeRequestEnabled: boolean; requiredApprovals: number }[]>(
    await ok('GET', `/api/admin/projects/${project}/change-requests/config`),
  );
  return config.find((row) => row.environment === environment);
}

/** Everything a refused environment write could touch, and the event count. */
async function stored(): Promise<string> {
  const dumps = [];
  for (const table of ['environments', 'change_request_settings'])
    dumps.push((await env.DB.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all()).results);
  return JSON.stringify(dumps) + (await count('SELECT count(*) AS n FROM events'));
}

describe('an environment that predefines change requests', () => {
  it('keeps requiredApprovals, answers it in the list, the one environment and the project view, and puts it in the events', async () => {
    const name = envName();
    const created = await bodyOf(await ok('POST', '/api/admin/environments', { name, type: 'production', requiredApprovals: 3 }));
    expect(created).toEqual({ name, type: 'production', sortOrder: 9999, enabled: true, protected: false, requiredApprovals: 3 });
    expect(JSON.parse((await lastEvent('environment-created'))!.data!)).toMatchObject({ name, requiredApprovals: 3 });
    expect(await bodyOf(await ok('GET', `/api/admin/environments/${name}`))).toEqual(created);
    const { environments } = await bodyOf(await ok('GET', '/api/admin/environments'));
    expect(environments.find((e: { name: string }) => e.name === name)).toMatchObject({ requiredApprovals: 3 });
    const project = await bodyOf(await ok('GET', '/api/admin/environments/project/default'));
    expect(project.environments.find((e: { name: string }) => e.name === name)).toMatchObject({ requiredApprovals: 3 });

    // The edit form sends what it shows; absent keeps the value.
    const updated = await bodyOf(
      await ok('PUT', `/api/admin/environments/update/${name}`, { type: 'production', sortOrder: 9999, requiredApprovals: 5 }),
    );
    expect(updated.requiredApprovals).toBe(5);
    const event = await lastEvent('environment-updated');
    expect(JSON.parse(event!.data!)).toMatchObject({ requiredApprovals: 5 });
    expect(JSON.parse(event!.pre_data!)).toMatchObject({ requiredApprovals: 3 });
    expect(await bodyOf(await ok('PUT', `/api/admin/environments/update/${name}`, { type: 'test' }))).toMatchObject({
      type: 'test',
      requiredApprovals: 5,
    });
  });

  it('switches change requests on with N approvals in a project created with it, and in one that enables it', async () => {
    const name = envName();
    await ok('POST', '/api/admin/environments', { name, type: 'production', requiredApprovals: 4 });
    const created = unique('envcr-p');
    await ok('POST', '/api/admin/projects', { id: created, name: created, environments: ['development', name] });
    expect(await crConfig(created, name)).toMatchObject({ changeRequestEnabled: true, requiredApprovals: 4 });
    expect(await crConfig(created, 'development')).toMatchObject({ changeRequestEnabled: false });

    const later = unique('envcr-p');
    await ok('POST', '/api/admin/projects', { id: later, name: later, environments: ['development'] });
    expect(await crConfig(later, name)).toBeUndefined();
    await ok('POST', `/api/admin/projects/${later}/environments`, { environment: name });
    expect(await crConfig(later, name)).toMatchObject({ changeRequestEnabled: true, requiredApprovals: 4 });
  });

  it('leaves a project that already has settings for the environment as it is', async () => {
    const name = envName();
    await ok('POST', '/api/admin/environments', { name, type: 'production' });
    const project = unique('envcr-p');
    await ok('POST', '/api/admin/projects', { id: project, name: project, environments: ['development', name] });
    await ok('PUT', `/api/admin/projects/${project}/environments/${name}/change-requests/config`, {
      changeRequestsEnabled: false,
      requiredApprovals: 2,
    });
    await ok('PUT', `/api/admin/environments/update/${name}`, { requiredApprovals: 6 });
    // Existing projects are not touched by the change, nor when the environment is enabled again.
    expect(await crConfig(project, name)).toMatchObject({ changeRequestEnabled: false, requiredApprovals: 2 });
    await ok('POST', `/api/admin/projects/${project}/environments`, { environment: name });
    expect(await crConfig(project, name)).toMatchObject({ changeRequestEnabled: false, requiredApprovals: 2 });
  });

  it('cleared (null, as the edit form sends "No"), it predefines nothing for new projects and leaves existing ones alone', async () => {
    const name = envName();
    await ok('POST', '/api/admin/environments', { name, type: 'production', requiredApprovals: 2 });
    const before = unique('envcr-p');
    await ok('POST', '/api/admin/projects', { id: before, name: before, environments: [name] });
    const cleared = await bodyOf(
      await ok('PUT', `/api/admin/environments/update/${name}`, { type: 'production', requiredApprovals: null }),
    );
    expect(cleared.requiredApprovals).toBeNull();
    expect((await bodyOf(await ok('GET', `/api/admin/environments/${name}`))).requiredApprovals).toBeNull();
    const after = unique('envcr-p');
    await ok('POST', '/api/admin/projects', { id: after, name: after, environments: [name] });
    expect(await crConfig(after, name)).toMatchObject({ changeRequestEnabled: false });
    expect(await crConfig(before, name)).toMatchObject({ changeRequestEnabled: true, requiredApprovals: 2 });
  });

  it('400 ValidationError for anything but an integer 1..10 or null; nothing written', async () => {
    const name = envName();
    await ok('POST', '/api/admin/environments', { name, type: 'production', requiredApprovals: 1 });
    const before = await stored();
    for (const requiredApprovals of [0, 11, 2.5, '3', -1, true]) {
      await expectError(
        await call('POST', '/api/admin/environments', { body: { name: envName(), type: 'production', requiredApprovals } }),
        400,
        'ValidationError',
      );
      await expectError(
        await call('PUT', `/api/admin/environments/update/${name}`, { body: { requiredApprovals } }),
        400,
        'ValidationError',
      );
    }
    expect(await stored()).toBe(before);
    expect((await bodyOf(await ok('GET', `/api/admin/environments/${name}`))).requiredApprovals).toBe(1);
  });
});
