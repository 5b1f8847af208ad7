import { describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { unique } from './support/names';
import { createFeature } from './support/admin';

describe('GET /api/admin/search/events', () => {
  it('lists a feature’s events newest first, with their actor, as {events, total}', async () => {
    const name = unique('ev');
    await createFeature(name);
    await call('POST', `/api/admin/projects/default/features/${name}/environments/development/on`);
    const response = await call('GET', `/api/admin/search/events?feature=IS:${name}`);
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['events', 'total']);
    expect(body.total).toBe(body.events.length);
    const types = body.events.map((event: { type: string }) => event.type);
    expect(types[0]).toBe('feature-environment-enabled');
    expect(types.at(-1)).toBe('feature-created');
    const created = body.events.find((event: { type: string }) => event.type === 'feature-created');
    expect(Object.keys(created)).toEqual([
      'id',
      'type',
      'createdBy',
      'createdAt',
      'createdByUserId',
      'data',
      'preData',
      'tags',
      'featureName',
      'project',
      'environment',
      'label',
      'summary',
    ]);
    expect(created).toMatchObject({
      createdBy: 'admin',
      createdByUserId: -42,
      featureName: name,
      project: 'default',
      tags: [],
      label: 'Flag created',
      summary: '**admin** triggered **feature-created**',
    });
  });

  it('filters by project, type and creator, and pages with offset and limit', async () => {
    const name = unique('evp');
    await createFeature(name);
    const typed = await bodyOf(
      await call('GET', `/api/admin/search/events?type=IS:feature-created&project=IS:default&createdBy=IS:-42&limit=1`),
    );
    expect(typed.events).toHaveLength(1);
    expect(typed.events[0]).toMatchObject({ type: 'feature-created', project: 'default', createdByUserId: -42 });
    expect(typed.total).toBeGreaterThanOrEqual(1);
    const second = await bodyOf(await call('GET', `/api/admin/search/events?type=IS:feature-created&limit=1&offset=1`));
    expect(second.events[0]?.id).not.toBe(typed.events[0].id);
    const text = await bodyOf(await call('GET', `/api/admin/search/events?query=${name}`));
    expect(text.events.some((event: { featureName: string }) => event.featureName === name)).toBe(true);
  });

  it('refuses values that do not match Unleash’s patterns with 400', async () => {
    await expectError(await call('GET', '/api/admin/search/events?feature=nope'), 400, 'ValidationError');
    await expectError(await call('GET', '/api/admin/search/events?from=2026-01-01'), 400, 'ValidationError');
    await expectError(await call('GET', '/api/admin/search/events?createdBy=IS:abc'), 400, 'ValidationError');
  });

  it('falls back to the default limit for a limit it cannot use', async () => {
    const body = await bodyOf(await call('GET', '/api/admin/search/events?limit=abc&offset=-5'));
    expect(body.events.length).toBeLessThanOrEqual(50);
  });
});

describe('GET /api/admin/events', () => {
  it('answers {version, events, totalEvents} and filters by project', async () => {
    const body = await bodyOf(await call('GET', '/api/admin/events?project=default'));
    expect(body.version).toBe(1);
    expect(body.events.every((event: { project: string }) => event.project === 'default')).toBe(true);
    expect(typeof body.totalEvents).toBe('number');
  });

  it('lists one feature’s events under /events/:featureName', async () => {
    const name = unique('evf');
    await createFeature(name);
    const body = await bodyOf(await call('GET', `/api/admin/events/${name}`));
    expect(body).toMatchObject({ version: 1, toggleName: name, totalEvents: 1 });
    expect(body.events[0]).toMatchObject({ type: 'feature-created', featureName: name });
  });
});

describe('GET /api/admin/event-creators', () => {
  it('lists everyone who acted, by id, with the admin token user by its name', async () => {
    await createFeature(unique('evc'));
    const body = await bodyOf(await call('GET', '/api/admin/event-creators'));
    expect(body).toContainEqual({ id: -42, name: 'Unleash Admin Token User' });
    expect(body.map((creator: { id: number }) => creator.id)).toEqual(
      [...body.map((creator: { id: number }) => creator.id)].sort((a, b) => a - b),
    );
  });
});
