/**
 * Requests taken from Unleash 6.10.1's own end-to-end API tests (its `src/test/e2e/**` and
 * `src/lib/**\/*.e2e.test.ts`), answered as 6.10.1 answers them (measured on the 6.10.1 oracle
 * with the same requests; issue 33). Each test names the 6.10.1 test it follows.
 */
import { describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { count, lastEvent, parsedEvent, rows } from './support/db';
import { unique } from './support/names';

const EVENTS = 'SELECT count(*) AS n FROM events';

async function unchanged(table: string, run: () => Promise<void>): Promise<void> {
  const rows = await count(`SELECT count(*) AS n FROM ${table}`);
  const events = await count(EVENTS);
  await run();
  expect(await count(`SELECT count(*) AS n FROM ${table}`)).toBe(rows);
  expect(await count(EVENTS)).toBe(events);
}

function values(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `v${i}`);
}

describe('segments (admin-segment.e2e, client-segment.e2e)', () => {
  it('"should validate segments": unknown keys are dropped, but a missing name or constraints list, or an empty constraint, is a 400 with nothing written', async () => {
    await unchanged('segments', async () => {
      const missingName = await expectError(
        await call('POST', '/api/admin/segments', { body: { something: 'a' } }),
        400,
        'ValidationError',
      );
      expect(missingName.details).toContainEqual({
        path: '/body/name',
        message: 'The `/body/name` property is required. It was not present on the data you sent.',
      });
      // 6.10.1 requires `constraints` on create and update.
      const noConstraints = await expectError(
        await call('POST', '/api/admin/segments', { body: { name: unique('seg'), something: 'b' } }),
        400,
        'ValidationError',
      );
      expect(noConstraints.details).toEqual([
        { path: '/body/constraints', message: 'The `/body/constraints` property is required. It was not present on the data you sent.' },
      ]);
      await expectError(
        await call('POST', '/api/admin/segments', { body: { name: unique('seg'), constraints: 'b' } }),
        400,
        'ValidationError',
      );
      await expectError(await call('POST', '/api/admin/segments', { body: { constraints: [] } }), 400, 'ValidationError');
      await expectError(
        await call('POST', '/api/admin/segments', { body: { name: unique('seg'), constraints: [{}] } }),
        400,
        'ValidationError',
      );
    });
    const created = await call('POST', '/api/admin/segments', { body: { name: unique('seg'), description: '', constraints: [] } });
    expect(created.status).toBe(201);
    const { id } = await bodyOf(created);
    await unchanged('segments', async () => {
      const update = await expectError(
        await call('PUT', `/api/admin/segments/${id}`, { body: { name: unique('seg') } }),
        400,
        'ValidationError',
      );
      expect(update.details[0]?.path).toBe('/body/constraints');
    });
  });

  it('"should validate segment constraint values limit" (one constraint and several): over 1000 values in all is a 400 in 6.10.1\'s words, nothing written', async () => {
    const limit = 'Segments may not have more than 1000 values';
    await unchanged('segments', async () => {
      const several = await expectError(
        await call('POST', '/api/admin/segments', {
          body: {
            name: unique('seg'),
            constraints: [
              { contextName: 'userId', operator: 'IN', values: values(1000) },
              { contextName: 'userId', operator: 'IN', values: values(1) },
            ],
          },
        }),
        400,
        'BadDataError',
      );
      expect(several.message).toBe(`Request validation failed: your request body or params contain invalid data: ${limit}`);
      expect(several.details).toEqual([{ message: limit }]);
    });
    const exactly = await call('POST', '/api/admin/segments', {
      body: {
        name: unique('seg'),
        constraints: [
          { contextName: 'userId', operator: 'IN', values: values(600) },
          { contextName: 'appName', operator: 'IN', values: values(400) },
        ],
      },
    });
    expect(exactly.status).toBe(201);
    const { id, name } = await bodyOf(exactly);
    await unchanged('segments', async () => {
      const update = await expectError(
        await call('PUT', `/api/admin/segments/${id}`, {
          body: {
            name,
            constraints: [
              { contextName: 'userId', operator: 'IN', values: values(600) },
              { contextName: 'appName', operator: 'IN', values: values(401) },
            ],
          },
        }),
        400,
        'BadDataError',
      );
      expect(update.details).toEqual([{ message: limit }]);
    });
  });
});

describe('POST /api/admin/constraints/validate (constraints.e2e)', () => {
  it('"should accept valid constraints": 204, a number `value` taken as its string, nothing written', async () => {
    await unchanged('context_fields', async () => {
      for (const body of [
        { contextName: 'environment', operator: 'NUM_EQ', value: 1 },
        { contextName: 'environment', operator: 'IN', values: ['a'] },
        { contextName: 'environment', operator: 'IN', values: [1, 2] },
      ]) {
        const response = await call('POST', '/api/admin/constraints/validate', { body });
        expect(response.status, JSON.stringify(body)).toBe(204);
        expect(await response.text()).toBe('');
      }
    });
  });

  it('"should reject invalid constraints": 400', async () => {
    for (const body of [{}, { a: 1 }, { operator: 'IN' }, { contextName: 'a' }]) {
      await expectError(await call('POST', '/api/admin/constraints/validate', { body }), 400, 'ValidationError');
    }
    // A number is a number's string: "abc" is still no number.
    const notNumber = await expectError(
      await call('POST', '/api/admin/constraints/validate', { body: { contextName: 'environment', operator: 'NUM_EQ', value: 'abc' } }),
      400,
      'ValidationError',
    );
    expect(notNumber.details).toHaveLength(1);
  });
});

describe('tag types (tag-types.e2e)', () => {
  it('"Tag type with invalid color format gets rejected" on create, update and validate, in 6.10.1\'s words; nothing written', async () => {
    const name = unique('colour');
    const pattern = 'The `/body/color` property must match pattern "^#[0-9A-Fa-f]{6}$". You sent "not-a-color".';
    await unchanged('tag_types', async () => {
      const created = await expectError(
        await call('POST', '/api/admin/tag-types', { body: { name, description: 'A tag with invalid color', color: 'not-a-color' } }),
        400,
        'ValidationError',
      );
      expect(created.details).toEqual([{ path: '/body/color', message: pattern }]);
      const validated = await expectError(
        await call('POST', '/api/admin/tag-types/validate', { body: { name, color: 'not-a-color' } }),
        400,
        'ValidationError',
      );
      expect(validated.details).toEqual([{ path: '/body/color', message: pattern }]);
      const updated = await expectError(
        await call('PUT', '/api/admin/tag-types/simple', { body: { color: '#abc' } }),
        400,
        'ValidationError',
      );
      expect(updated.details[0]?.message).toMatch(/color/);
    });
    const colored = await call('POST', '/api/admin/tag-types', { body: { name, description: 'd', icon: 'icon', color: '#FF5733' } });
    expect(colored.status).toBe(201);
    expect((await bodyOf(await call('GET', `/api/admin/tag-types/${name}`))).tagType.color).toBe('#FF5733');
  });

  it('"Numbers are coerced to strings for icons and descriptions" on update and validate', async () => {
    const name = unique('numbers');
    expect((await call('POST', '/api/admin/tag-types', { body: { name, description: 1, icon: 2 } })).status).toBe(201);
    expect((await call('PUT', `/api/admin/tag-types/${name}`, { body: { description: 15125, icon: 125 } })).status).toBe(200);
    const { tagType } = await bodyOf(await call('GET', `/api/admin/tag-types/${name}`));
    expect(tagType).toEqual({ name, description: '15125', icon: '125', color: null });
    const validated = await call('POST', '/api/admin/tag-types/validate', { body: { name: unique('v'), description: 1234, icon: 56789 } });
    expect(validated.status).toBe(200);
    const answer = await bodyOf(validated);
    expect(answer.valid).toBe(true);
    expect(answer.tagType).toMatchObject({ description: '1234', icon: '56789' });
  });

  it('"Invalid tag types gets rejected" and "Invalid tag-types get refused by validator": `"name" must be URL friendly`, nothing written', async () => {
    await unchanged('tag_types', async () => {
      for (const path of ['/api/admin/tag-types', '/api/admin/tag-types/validate']) {
        const error = await expectError(
          await call('POST', path, { body: { name: 'Something url unsafe', description: 'A fancy description', icon: 'NoIcon' } }),
          400,
          'ValidationError',
        );
        expect(error.details).toEqual([{ message: '"name" must be URL friendly. You provided "Something url unsafe".' }]);
      }
    });
  });

  it('"Can delete tag type": 200, gone, and the event has preData and no data', async () => {
    const name = unique('gone');
    expect((await call('POST', '/api/admin/tag-types', { body: { name, description: 'd' } })).status).toBe(201);
    const response = await call('DELETE', `/api/admin/tag-types/${name}`);
    expect(response.status).toBe(200);
    await expectError(await call('GET', `/api/admin/tag-types/${name}`), 404, 'NotFoundError');
    const event = parsedEvent(await lastEvent('tag-type-deleted'));
    expect(event?.preData).toMatchObject({ name });
    expect(event?.data).toBeNull();
  });
});

describe('tags (tags.e2e)', () => {
  it('"Can validate a tag": a number value is its string, so the one problem named is the type\'s; nothing written', async () => {
    await unchanged('tags', async () => {
      const error = await expectError(
        await call('POST', '/api/admin/tags', { body: { value: 124, type: 'not url friendly' } }),
        400,
        'ValidationError',
      );
      expect(error.details).toEqual([{ message: '"type" must be URL friendly. You provided "not url friendly".' }]);
    });
    const numeric = await call('POST', '/api/admin/tags', { body: { type: 'simple', value: 4242 } });
    expect(numeric.status).toBe(201);
    expect((await bodyOf(numeric)).tag).toEqual({ type: 'simple', value: '4242' });
  });
});

describe('integrations (addon.e2e)', () => {
  const webhook = { provider: 'webhook', enabled: true, parameters: { url: 'http://example.com/hook' }, events: [] as string[] };

  async function createWebhook(description?: string | null): Promise<number> {
    const response = await call('POST', '/api/admin/addons', { body: description === undefined ? webhook : { ...webhook, description } });
    expect(response.status).toBe(201);
    return (await bodyOf(response)).id as number;
  }

  it('"updating an addon returns the new addon configuration": the answer has what was sent, secrets included as sent', async () => {
    const id = await createWebhook();
    const updatedConfig = { ...webhook, enabled: false, parameters: { url: 'http://new-url:4343' } };
    const response = await call('PUT', `/api/admin/addons/${id}`, { body: updatedConfig });
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(body).toMatchObject(updatedConfig);
    expect(Object.keys(body)).toEqual([
      'id',
      'provider',
      'enabled',
      'description',
      'parameters',
      'events',
      'projects',
      'environments',
      'createdAt',
    ]);
    // Read back, the secret is masked; sent back masked (as the UI does), it is kept and stays masked.
    expect((await bodyOf(await call('GET', `/api/admin/addons/${id}`))).parameters.url).toBe('*****');
    const kept = await bodyOf(await call('PUT', `/api/admin/addons/${id}`, { body: { ...updatedConfig, parameters: { url: '*****' } } }));
    expect(kept.parameters.url).toBe('*****');
    const [stored] = await rows<{ parameters: string }>('SELECT parameters FROM addons WHERE id = ?', id);
    expect(JSON.parse(stored!.parameters).url).toBe('http://new-url:4343');
  });

  it('"creating an addon without a description" gives null; an update without one keeps it; null or "" store ""', async () => {
    const id = await createWebhook();
    expect((await bodyOf(await call('GET', `/api/admin/addons/${id}`))).description).toBeNull();
    const described = await createWebhook('kept');
    const untouched = await bodyOf(
      await call('PUT', `/api/admin/addons/${described}`, { body: { ...webhook, parameters: { url: 'http://example.com/new' } } }),
    );
    expect(untouched.description).toBe('kept');
    for (const description of ['', null]) {
      const answer = await bodyOf(await call('PUT', `/api/admin/addons/${described}`, { body: { ...webhook, description } }));
      expect(answer.description).toBe('');
      expect((await bodyOf(await call('GET', `/api/admin/addons/${described}`))).description).toBe('');
    }
    const event = parsedEvent(await lastEvent('addon-config-updated'));
    expect((event?.data as { description?: unknown }).description).toBe('');
  });
});

describe('leading slashes (leading-slashes-are-stripped.e2e)', () => {
  it('"Access to //api/admin/tags are refused no matter how many leading slashes": 401, as without them', async () => {
    for (const path of ['//api/admin/tags', '////api/admin/tags', '//api/client/features', '/////api/client/features']) {
      await expectError(await call('GET', path, { token: null, redirect: 'manual' }), 401, 'AuthenticationRequired');
    }
    expect((await call('GET', '//api/admin/tags')).status).toBe(200);
  });

  it('a page path with doubled slashes, which the Worker does not serve, is sent to its clean form (307)', async () => {
    const response = await call('GET', '//projects', { token: null, redirect: 'manual' });
    expect(response.status).toBe(307);
    expect(response.headers.get('location')).toBe('http://localhost/projects');
  });
});

const FEATURES = '/api/admin/projects/default/features';

async function flag(name = unique('e2e-flag')): Promise<string> {
  const response = await call('POST', FEATURES, { body: { name } });
  expect(response.status, await response.clone().text()).toBe(201);
  return name;
}

async function strategyOn(name: string, body: Record<string, unknown> = { name: 'default', parameters: { userIds: '' } }): Promise<string> {
  const response = await call('POST', `${FEATURES}/${name}/environments/development/strategies`, { body });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await bodyOf(response)).id as string;
}

describe('flags (feature-archive.e2e, feature-toggles.e2e)', () => {
  it('"archived feature is not accessible via /features/:featureName": 404 once archived', async () => {
    const name = await flag();
    expect((await call('DELETE', `${FEATURES}/${name}`)).status).toBe(202);
    const error = await expectError(await call('GET', `${FEATURES}/${name}`), 404, 'NotFoundError');
    expect(error.message).toBe(`Could not find feature flag with name ${name}`);
    await expectError(await call('GET', `/api/admin/features/${name}`), 404, 'NotFoundError');
  });

  it('"Deleting an unarchived flag should not take effect": 200 and nothing deleted or recorded', async () => {
    const name = await flag();
    await unchanged('features', async () => {
      const response = await call('DELETE', `/api/admin/archive/${name}`);
      expect(response.status).toBe(200);
    });
    expect((await call('GET', `${FEATURES}/${name}`)).status).toBe(200);
    expect((await call('POST', '/api/admin/features/validate', { body: { name } })).status).toBe(409);
    await expectError(await call('DELETE', `/api/admin/archive/${unique('never')}`), 404, 'NotFoundError');
  });

  it('a PUT whose body names another flag is refused (400 "Cannot change name of feature flag"), nothing written', async () => {
    const name = await flag();
    await unchanged('features', async () => {
      const error = await expectError(
        await call('PUT', `${FEATURES}/${name}`, { body: { name: unique('other'), description: 'x' } }),
        400,
        'BadDataError',
      );
      expect(error.details).toEqual([{ message: 'Cannot change name of feature flag' }]);
    });
    expect((await bodyOf(await call('GET', `${FEATURES}/${name}`))).description).toBeNull();
  });

  it('a PATCH op on /project is ignored: 200 with the flag, still in its project', async () => {
    const name = await flag();
    const response = await call('PATCH', `${FEATURES}/${name}`, { body: [{ op: 'replace', path: '/project', value: 'elsewhere' }] });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toMatchObject({ name, project: 'default', archived: false });
    expect((await bodyOf(await call('GET', `${FEATURES}/${name}`))).project).toBe('default');
  });

  it('"Trying to patch variants on a feature flag should trigger an OperationDeniedError": 403, nothing written', async () => {
    const name = await flag();
    await unchanged('features', async () => {
      const error = await expectError(
        await call('PATCH', `${FEATURES}/${name}`, {
          body: [
            { op: 'add', path: '/variants/1', value: { name: 'variant', weightType: 'variable', weight: 500, stickiness: 'default' } },
          ],
        }),
        403,
        'OperationDeniedError',
      );
      expect(error.message).toBe(
        'Changing variants is done via PATCH operation to /api/admin/projects/:project/features/:feature/variants',
      );
    });
  });

  it('"PUTing an invalid variant throws 400 exception": one detail about weightType in 6.10.1\'s words', async () => {
    const name = await flag();
    const error = await expectError(
      await call('PUT', `${FEATURES}/${name}/variants`, {
        body: [{ name: 'variant', weight: 500, weightType: 'party', stickiness: 'userId' }],
      }),
      400,
      'BadDataError',
    );
    expect(error.details).toHaveLength(1);
    expect(error.details[0]?.message).toMatch(/.*weightType` property must be equal to one of the allowed values/);
  });

  it('a dependency on a parent that does not exist or is archived: 403 "No active feature … exists", nothing written', async () => {
    const child = await flag();
    const archived = await flag();
    expect((await call('DELETE', `${FEATURES}/${archived}`)).status).toBe(202);
    for (const parent of [unique('missing'), archived]) {
      await unchanged('dependent_features', async () => {
        const error = await expectError(
          await call('POST', `${FEATURES}/${child}/dependencies`, { body: { feature: parent } }),
          403,
          'InvalidOperationError',
        );
        expect(error.message).toBe(`No active feature ${parent} exists`);
      });
    }
  });
});

describe('strategies (feature-toggles.e2e, client-segment.e2e)', () => {
  it('"Trying to add a strategy configuration to environment not connected to flag should fail": 400 naming environment and project, nothing written', async () => {
    const name = await flag();
    for (const environment of ['dev', 'default']) {
      await unchanged('feature_strategies', async () => {
        const error = await expectError(
          await call('POST', `${FEATURES}/${name}/environments/${environment}/strategies`, {
            body: { name: 'default', parameters: { userId: '14' } },
          }),
          400,
          'BadDataError',
        );
        expect(error.details).toEqual([{ message: 'You have not added the current environment to the project' }]);
      });
    }
  });

  it('a strategy name that is not a defined strategy: 400 on create and on update, nothing written', async () => {
    const name = await flag();
    const id = await strategyOn(name);
    const strategy = unique('undefined-strategy');
    await unchanged('feature_strategies', async () => {
      const created = await expectError(
        await call('POST', `${FEATURES}/${name}/environments/development/strategies`, { body: { name: strategy } }),
        400,
        'BadDataError',
      );
      expect(created.details).toEqual([{ message: `Could not find strategy type with name ${strategy}` }]);
      const updated = await expectError(
        await call('PUT', `${FEATURES}/${name}/environments/development/strategies/${id}`, { body: { name: strategy, parameters: {} } }),
        400,
        'BadDataError',
      );
      expect(updated.details).toEqual([{ message: `Could not find strategy type with name ${strategy}` }]);
    });
    expect((await bodyOf(await call('GET', `${FEATURES}/${name}/environments/development/strategies/${id}`))).name).toBe('default');
  });

  it('"Can NOT delete strategy with wrong projectId" and "update strategy on feature flag cannot use wrong projectId": 403, nothing written', async () => {
    const name = await flag();
    const id = await strategyOn(name);
    const message = 'You can not change the projectId for an activation strategy.';
    await unchanged('feature_strategies', async () => {
      const updated = await expectError(
        await call('PUT', `/api/admin/projects/invalidId/features/${name}/environments/development/strategies/${id}`, {
          body: { name: 'default', parameters: { userIds: '1234' } },
        }),
        403,
        'InvalidOperationError',
      );
      expect(updated.message).toBe(message);
      const deleted = await expectError(
        await call('DELETE', `/api/admin/projects/wrongId/features/${name}/environments/development/strategies/${id}`),
        403,
        'InvalidOperationError',
      );
      expect(deleted.message).toBe(message);
    });
    expect((await bodyOf(await call('GET', `${FEATURES}/${name}/environments/development/strategies/${id}`))).parameters).toEqual({
      userIds: '',
    });
    // Adding through the wrong project is still a 404, as 6.10.1 ("add strategy cannot use wrong projectId").
    await expectError(
      await call('POST', `/api/admin/projects/invalidId/features/${name}/environments/development/strategies`, {
        body: { name: 'default' },
      }),
      404,
      'NotFoundError',
    );
  });

  it('"should NOT limit the length of parameter values": 200', async () => {
    const name = await flag();
    await strategyOn(name, { name: 'default', parameters: { foo: 'x'.repeat(101) } });
  });
});
