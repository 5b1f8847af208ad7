/**
 * The project-create dialog of Unleash Enterprise sends `changeRequestEnvironments`
 * (`[{name, requiredApprovals}]`): the project starts with change requests on there, written in
 * the create's own batch, and read back by `GET …/change-requests/config`. An unknown
 * environment is Unleash's 400 BadDataError, with nothing created.
 */
import { describe, expect, it } from 'vitest';
import { adminOk } from './support/admin';
import { count, lastEvent, parsedEvent } from './support/db';
import { bodyOf, call, expectError } from './support/http';
import { unique } from './support/names';

const configOf = async (project: string) => bodyOf(await call('GET', `/api/admin/projects/${project}/change-requests/config`));
const created = (project: string) => count('SELECT count(*) AS n FROM projects WHERE id = ?', project);
const settingsOf = (project: string) => count('SELECT count(*) AS n FROM change_request_settings WHERE project = ?', project);
const createdEvents = (project: string) =>
  count("SELECT count(*) AS n FROM events WHERE type = 'project-created' AND project = ?", project);

describe('POST /api/admin/projects with changeRequestEnvironments', () => {
  it('switches change requests on where chosen, with the approvals asked for (clamped to 1–10), in the create', async () => {
    const id = unique('crgaps-pc');
    const response = await adminOk('POST', '/api/admin/projects', {
      id,
      name: id,
      environments: ['development', 'production'],
      changeRequestEnvironments: [{ name: 'production', requiredApprovals: 2 }],
    });
    expect(response.status).toBe(201);
    expect(await configOf(id)).toEqual([
      { environment: 'development', type: 'development', changeRequestEnabled: false, requiredApprovals: 1 },
      { environment: 'production', type: 'production', changeRequestEnabled: true, requiredApprovals: 2 },
    ]);
    expect(parsedEvent(await lastEvent('project-created'))?.data).toMatchObject({
      id,
      environments: ['development', 'production'],
      changeRequestEnvironments: [{ name: 'production', requiredApprovals: 2 }],
    });

    const clamped = unique('crgaps-pc');
    await adminOk('POST', '/api/admin/projects', {
      id: clamped,
      name: clamped,
      environments: ['development', 'production'],
      changeRequestEnvironments: [{ name: 'development', requiredApprovals: 40 }, { name: 'production' }],
    });
    const config = await configOf(clamped);
    expect(config.map((row: { requiredApprovals: number }) => row.requiredApprovals)).toEqual([10, 1]);
    expect(config.every((row: { changeRequestEnabled: boolean }) => row.changeRequestEnabled)).toBe(true);
  });

  it('keeps an environment’s predefined approvals over the dialog’s count', async () => {
    const environment = unique('crgaps-env');
    await adminOk('POST', '/api/admin/environments', { name: environment, type: 'production', requiredApprovals: 3 });
    const id = unique('crgaps-pc');
    await adminOk('POST', '/api/admin/projects', {
      id,
      name: id,
      environments: ['development', environment],
      changeRequestEnvironments: [{ name: environment, requiredApprovals: 1 }],
    });
    expect((await configOf(id)).find((row: { environment: string }) => row.environment === environment)).toMatchObject({
      changeRequestEnabled: true,
      requiredApprovals: 3,
    });
  });

  it('refuses an unknown environment with Unleash’s BadDataError, creating nothing', async () => {
    const id = unique('crgaps-pc');
    const body = {
      id,
      name: id,
      environments: ['production'],
      changeRequestEnvironments: [{ name: 'production' }, { name: 'crgaps-nowhere', requiredApprovals: 2 }],
    };
    const error = await expectError(await call('POST', '/api/admin/projects', { body }), 400, 'BadDataError');
    expect(error.message).toBe(
      "Request validation failed: your request body or params contain invalid data: These environments do not exist: 'crgaps-nowhere'.",
    );
    expect(error.details).toEqual([{ message: "These environments do not exist: 'crgaps-nowhere'." }]);
    expect(await created(id)).toBe(0);
    expect(await settingsOf(id)).toBe(0);
    expect(await createdEvents(id)).toBe(0);
  });

  it('refuses an environment the project does not get, and a bad body, creating nothing', async () => {
    const id = unique('crgaps-pc');
    const outside = { id, name: id, environments: ['development'], changeRequestEnvironments: [{ name: 'production' }] };
    const error = await expectError(await call('POST', '/api/admin/projects', { body: outside }), 400, 'BadDataError');
    expect(error.message).toContain("not among the project's environments: 'production'");
    const notInteger = { id, name: id, changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1.5 }] };
    await expectError(await call('POST', '/api/admin/projects', { body: notInteger }), 400, 'ValidationError');
    expect(await created(id)).toBe(0);
    expect(await settingsOf(id)).toBe(0);
    expect(await createdEvents(id)).toBe(0);
  });
});
