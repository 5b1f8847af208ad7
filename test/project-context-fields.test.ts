/**
 * A project's context fields (Unleash 8), replayed against the answers recorded from the real
 * 8.2.0 by `scripts/record-unleash8.mjs` (test/recorded/unleash8/project-context-fields.json).
 */
import { describe, expect, it } from 'vitest';
import recorded from './recorded/unleash8/project-context-fields.json';
import { createFeature } from './support/admin';
import { signedInUser, withSession } from './support/auth';
import { count, eventsSince, parsedEvent, rows } from './support/db';
import { bodyOf, call, expectError } from './support/http';
import { unique } from './support/names';

const BASE = '/api/admin/projects/default/context';
const RECORDED_NAME = String(recorded.steps[0]!.answer && (recorded.steps[0]!.answer as { name: string }).name);

async function maxEventId(): Promise<number> {
  const [row] = await rows<{ id: number | null }>('SELECT max(id) AS id FROM events');
  return row?.id ?? 0;
}

const fieldCount = () => count('SELECT count(*) AS n FROM context_fields');

describe('project context fields', () => {
  it('answers each operation as 8.2.0 did: statuses, bodies, key order and errors', async () => {
    const name = unique('pctx');
    const swap = (value: unknown) => JSON.parse(JSON.stringify(value ?? null).replaceAll(RECORDED_NAME, name));
    const first = await maxEventId();
    const paths: Record<string, string> = {
      create: BASE,
      'create again': BASE,
      'create a global name': BASE,
      'create, not URL friendly': BASE,
      get: `${BASE}/${name}`,
      'get a global field': `${BASE}/userId`,
      'get an unknown field': `${BASE}/${name}-none`,
      update: `${BASE}/${name}`,
      'update a global field': `${BASE}/userId`,
      'add a legal value': `${BASE}/${name}/legal-values`,
      'remove a legal value': `${BASE}/${name}/legal-values/b`,
      'add a legal value to a global field': `${BASE}/userId/legal-values`,
      strategies: `${BASE}/${name}/strategies`,
      'validate a taken name': `${BASE}/validate`,
      'validate a free name': `${BASE}/validate`,
      'read after writes': `${BASE}/${name}`,
      'delete a global field': `${BASE}/userId`,
      delete: `${BASE}/${name}`,
      'delete again': `${BASE}/${name}`,
    };
    const bodies: Record<string, unknown> = {
      create: { name, description: 'd', legalValues: [{ value: 'a' }], stickiness: true, sortOrder: 3 },
      'create again': { name },
      'create a global name': { name: 'userId' },
      'create, not URL friendly': { name: 'a b' },
      update: { name, description: 'd2', legalValues: [{ value: 'b' }] },
      'update a global field': { name: 'userId', description: 'x' },
      'add a legal value': { value: 'c', description: 'cc' },
      'add a legal value to a global field': { value: 'z' },
      'validate a taken name': { name },
      'validate a free name': { name: `${name}-free` },
    };
    for (const step of recorded.steps) {
      const before = await fieldCount();
      const response = await call(step.method, paths[step.label]!, bodies[step.label] === undefined ? {} : { body: bodies[step.label] });
      expect({ label: step.label, status: response.status }).toEqual({ label: step.label, status: step.status });
      const text = await response.text();
      const answer = text ? JSON.parse(text) : null;
      const expected = swap(step.answer);
      if (step.status >= 400) {
        expect(await fieldCount(), step.label).toBe(before);
        const { id: _id, ...rest } = answer;
        // The URL-friendly message is our schema's, the status and error name 8.2.0's.
        if (step.label === 'create, not URL friendly') expect(rest.name).toBe(expected.name);
        else expect(rest, step.label).toEqual(expected);
      } else if (expected !== null) {
        if (answer && typeof answer === 'object' && 'createdAt' in answer) {
          expect(Object.keys(answer), step.label).toEqual(Object.keys(expected));
          expect({
            ...answer,
            createdAt: '<date>',
            ...(step.label === 'get a global field' ? { sortOrder: expected.sortOrder } : {}),
          }).toEqual(step.label === 'get a global field' ? { ...expected, description: answer.description } : expected);
        } else expect(answer, step.label).toEqual(expected);
      }
      if (step.label === 'create') {
        expect(response.headers.get('location')).toBe(`context/${name}`);
        const listed = (await bodyOf(await call('GET', BASE))).find((field: { name: string }) => field.name === name);
        expect(Object.keys(listed)).toEqual(recorded.listKeys);
        const globally = (await bodyOf(await call('GET', '/api/admin/context'))).some((field: { name: string }) => field.name === name);
        expect(globally).toBe(recorded.listedGlobally);
        const global = await bodyOf(await call('GET', `/api/admin/context/${name}`));
        expect(global.project).toBe('default');
      }
    }
    const events = (await eventsSince(first)).map(parsedEvent);
    expect(events.map((event) => event!.type)).toEqual([
      'context-field-created',
      'context-field-updated',
      'context-field-updated',
      'context-field-updated',
      'context-field-deleted',
    ]);
    expect(events[0]!.data).toEqual({ name, description: 'd', legalValues: [{ value: 'a' }], stickiness: true, project: 'default' });
    expect(events[4]!.preData).toMatchObject({ name, project: 'default', legalValues: [{ value: 'c', description: 'cc' }] });
  });

  it('lists only the project’s strategies using a field, refuses unknown projects and people without the permission', async () => {
    const name = unique('pctx-used');
    expect((await call('POST', BASE, { body: { name } })).status).toBe(201);
    const flag = unique('pctx-flag');
    await createFeature(flag);
    const strategy = await call('POST', `/api/admin/projects/default/features/${flag}/environments/development/strategies`, {
      body: { name: 'default', constraints: [{ contextName: name, operator: 'IN', values: ['x'] }] },
    });
    expect(strategy.status).toBe(200);
    const used = await bodyOf(await call('GET', `${BASE}/${name}/strategies`));
    expect(used.strategies.map((entry: { featureName: string }) => entry.featureName)).toEqual([flag]);
    expect((await bodyOf(await call('GET', `/api/admin/projects/other-project/context/${name}/strategies`))).strategies).toEqual([]);
    const [listed] = (await bodyOf(await call('GET', BASE))).filter((field: { name: string }) => field.name === name);
    expect(listed).toMatchObject({ usedInFeatures: 1, usedInProjects: 1 });

    await call('POST', '/api/admin/projects', { body: { id: 'pctx-other', name: 'pctx-other' } });
    await expectError(await call('GET', `/api/admin/projects/pctx-other/context/${name}`), 404, 'NotFoundError');
    await expectError(
      await call('PUT', `/api/admin/projects/pctx-other/context/${name}`, { body: { description: 'x' } }),
      404,
      'NotFoundError',
    );

    const before = await fieldCount();
    const first = await maxEventId();
    await expectError(
      await call('POST', '/api/admin/projects/pctx-ghost/context', { body: { name: unique('pctx-g') } }),
      404,
      'NotFoundError',
    );
    const viewer = await signedInUser(3);
    const afterUser = await maxEventId();
    const session = withSession(viewer.cookie);
    for (const response of [
      await call('POST', BASE, { ...session, body: { name: unique('pctx-v') } }),
      await call('PUT', `${BASE}/${name}`, { ...session, body: { description: 'v' } }),
      await call('DELETE', `${BASE}/${name}`, session),
      await call('POST', `${BASE}/${name}/legal-values`, { ...session, body: { value: 'v' } }),
      await call('DELETE', `${BASE}/${name}/legal-values/v`, session),
    ]) {
      const error = await expectError(response, 403, 'NoAccessError');
      expect(error.message).toContain('UPDATE_PROJECT_CONTEXT');
    }
    expect((await call('GET', BASE, session)).status).toBe(200);
    expect(await fieldCount()).toBe(before);
    expect((await eventsSince(afterUser)).length).toBe(0);
    expect((await eventsSince(first)).map(parsedEvent).map((event) => event!.type)).toEqual(['user-created']);
  });
});
