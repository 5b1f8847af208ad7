/**
 * The import body is streamed: elements are validated one by one, grouped by feature into
 * chunks whatever the arrays' order, staged in D1 once the import outgrows the synchronous
 * limit, and every staged row is deleted when the import turns out to be invalid.
 */
import { describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { footprint, waitForJob } from './support/import';
import { count, rows } from './support/db';
import { createProject } from './support/admin';
import { unique } from './support/names';

const IMPORT = '/api/admin/features-batch/import';

function names(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
}

/** A body whose keys come in the given order (JSON keeps insertion order). */
function body(project: string, data: [string, unknown][], environment = 'development'): string {
  return JSON.stringify({ project, environment, data: Object.fromEntries(data) });
}

async function stagingRows(): Promise<{ parts: number; staging: number }> {
  return {
    parts: await count('SELECT count(*) AS n FROM import_job_parts'),
    staging: await count("SELECT count(*) AS n FROM import_jobs WHERE status = 'staging'"),
  };
}

describe('streamed import bodies', () => {
  it('takes a 30 MB body with the arrays in any order, grouping each feature with its strategies, settings and tags', async () => {
    const project = unique('stream');
    await createProject(project, ['development', 'production']);
    await rows("UPDATE projects SET default_stickiness = 'sessionId' WHERE id = ?", project);
    const segmentRow = await rows<{ id: number }>('INSERT INTO segments (name) VALUES (?) RETURNING id', unique('seg'));
    const segmentName = (await rows<{ name: string }>('SELECT name FROM segments WHERE id = ?', segmentRow[0]!.id))[0]!.name;
    const list = names(unique('big'), 3_000);
    const padding = 'p'.repeat(10_000);
    const text = body(project, [
      // Tags, settings and strategies come before the features they belong to.
      ['featureTags', list.map((name, i) => ({ featureName: name, tagType: 'simple', tagValue: `t-${i % 7}` }))],
      ['featureEnvironments', list.map((name, i) => ({ name: 'development', featureName: name, enabled: i % 2 === 0 }))],
      [
        'featureStrategies',
        list.map((name, i) => ({
          name: 'flexibleRollout',
          featureName: name,
          parameters: { rollout: String(i % 100) },
          segments: i === 2_999 ? [5] : [],
        })),
      ],
      ['segments', [{ id: 5, name: segmentName }]],
      ['features', list.map((name) => ({ name, description: padding }))],
      ['tagTypes', []],
    ]);
    expect(text.length).toBeGreaterThan(30_000_000);
    const response = await call('POST', IMPORT, { rawBody: text });
    expect(response.status).toBe(202);
    const job = await waitForJob(response.headers.get('location')!);
    expect(job).toMatchObject({ status: 'completed', totalChunks: 2, doneChunks: 2, totalFeatures: 3_000, errors: [] });

    expect(await count('SELECT count(*) AS n FROM features WHERE project = ? AND length(description) = 10000', project)).toBe(3_000);
    const last = list[2_999]!;
    const strategy = await rows<{ id: string; parameters: string }>(
      "SELECT id, parameters FROM feature_strategies WHERE feature_name = ? AND environment = 'development'",
      last,
    );
    expect(strategy).toHaveLength(1);
    // The project's default stickiness fills the gap, in the place Unleash puts it.
    expect(strategy[0]!.parameters).toBe(JSON.stringify({ rollout: '99', stickiness: 'sessionId', groupId: last }));
    expect(await rows('SELECT segment_id FROM feature_strategy_segment WHERE feature_strategy_id = ?', strategy[0]!.id)).toEqual([
      { segment_id: segmentRow[0]!.id },
    ]);
    expect(await rows('SELECT tag_value FROM feature_tag WHERE feature_name = ?', last)).toEqual([{ tag_value: `t-${2_999 % 7}` }]);
    expect(
      await rows("SELECT enabled FROM feature_environments WHERE feature_name = ? AND environment = 'development'", list[2_998]!),
    ).toEqual([{ enabled: 1 }]);
    expect(
      await count(
        'SELECT count(*) AS n FROM feature_environments WHERE feature_name IN (SELECT name FROM features WHERE project = ?)',
        project,
      ),
    ).toBe(6_000);
    // Applied chunks leave nothing staged behind.
    expect(await count('SELECT count(*) AS n FROM import_job_parts WHERE job_id = ?', job.id)).toBe(0);
  });

  it('fills in the default stickiness on the synchronous path too', async () => {
    const project = unique('sticky');
    await createProject(project, ['development']);
    await rows("UPDATE projects SET default_stickiness = 'userId' WHERE id = ?", project);
    const name = unique('f');
    const response = await call('POST', IMPORT, {
      rawBody: body(project, [
        ['features', [{ name }]],
        ['featureStrategies', [{ name: 'flexibleRollout', featureName: name }]],
        ['featureEnvironments', [{ name: 'development', featureName: name, enabled: true }]],
        ['tagTypes', []],
      ]),
    });
    expect(response.status).toBe(200);
    expect(await rows('SELECT parameters FROM feature_strategies WHERE feature_name = ?', name)).toEqual([
      { parameters: JSON.stringify({ rollout: '100', stickiness: 'userId', groupId: name }) },
    ]);
  });

  it('deletes everything it staged when the last element breaks the schema', async () => {
    const list = names(unique('late-schema'), 2_500);
    const before = await footprint();
    const staged = await stagingRows();
    const features: { name: string }[] = list.map((name) => ({ name }));
    features.push({ name: 'not a url-friendly name' });
    const error = await expectError(
      await call('POST', IMPORT, {
        rawBody: body('default', [
          ['features', features],
          ['featureStrategies', []],
          ['tagTypes', []],
        ]),
      }),
      400,
      'ValidationError',
    );
    expect(error.details.map((detail: { path?: string }) => detail.path)).toEqual(['/body/data/features/2500/name']);
    expect(await stagingRows()).toEqual(staged);
    expect(await footprint()).toEqual(before);
  });

  it('deletes everything it staged when a reference check fails after the body was read', async () => {
    const list = names(unique('late-ref'), 2_500);
    const before = await footprint();
    const staged = await stagingRows();
    const error = await expectError(
      await call('POST', IMPORT, {
        rawBody: body('default', [
          ['features', list.map((name) => ({ name }))],
          ['featureStrategies', [{ name: 'no-such-strategy', featureName: list[2_499] }]],
          ['tagTypes', []],
        ]),
      }),
      400,
      'ValidationError',
    );
    expect(error.details).toEqual([
      { message: 'We detected the following custom strategy that needs to be created first:', affectedItems: ['no-such-strategy'] },
    ]);
    expect(await stagingRows()).toEqual(staged);
    expect(await footprint()).toEqual(before);
  });

  it('deletes everything it staged when the target project does not exist', async () => {
    const list = names(unique('late-404'), 2_500);
    const staged = await stagingRows();
    // The project is named last, after every element has been staged.
    const text = JSON.stringify({
      data: { features: list.map((name) => ({ name })), featureStrategies: [], tagTypes: [] },
      environment: 'development',
      project: 'no-such-project',
    });
    await expectError(await call('POST', IMPORT, { rawBody: text }), 404, 'NotFoundError');
    expect(await stagingRows()).toEqual(staged);
  });

  it('removes staging left over by a request that died more than an hour ago, and only that', async () => {
    const old = crypto.randomUUID();
    const recent = crypto.randomUUID();
    for (const [id, age] of [
      [old, 2 * 3600_000],
      [recent, 60_000],
    ] as const) {
      await rows(
        "INSERT INTO import_jobs (id, project, environment, status, total_chunks, created_by, created_at) VALUES (?, '', '', 'staging', 0, 'x', ?)",
        id,
        new Date(Date.now() - age).toISOString(),
      );
      await rows("INSERT INTO import_job_parts (job_id, chunk_index, part, payload) VALUES (?, 0, 0, jsonb('{}'))", id);
    }
    const list = names(unique('sweeper'), 2_100);
    const response = await call('POST', IMPORT, {
      rawBody: body('default', [
        ['features', list.map((name) => ({ name }))],
        ['featureStrategies', []],
        ['tagTypes', []],
      ]),
    });
    expect(response.status).toBe(202);
    await waitForJob(response.headers.get('location')!);
    expect(await rows('SELECT id FROM import_jobs WHERE id IN (?, ?)', old, recent)).toEqual([{ id: recent }]);
    expect(await rows('SELECT job_id FROM import_job_parts WHERE job_id IN (?, ?)', old, recent)).toEqual([{ job_id: recent }]);
  });

  it('lists schema problems in schema order whatever the order of the arrays, at most 1,000 of them', async () => {
    const bad = Array.from({ length: 1_100 }, (_, i) => ({ name: `bad name ${i}` }));
    const error = await expectError(
      await call('POST', IMPORT, {
        rawBody: body('default', [
          ['featureStrategies', [{ name: 'default', featureName: 'also bad' }]],
          ['features', bad],
          ['tagTypes', []],
        ]),
      }),
      400,
      'ValidationError',
    );
    expect(error.details).toHaveLength(1_001);
    expect(error.details[0]!.path).toBe('/body/data/features/0/name');
    expect(error.details[998]!.path).toBe('/body/data/features/998/name');
    // The strategy's problem came first in the body, so it is among the 1,000 kept, listed after the features' ones.
    expect(error.details[999]!.path).toBe('/body/data/featureStrategies/0/featureName');
    expect(error.details[1_000]).toEqual({ message: '101 more problems were found and are not listed.' });
  });

  it('takes constructor and __proto__ as plain (unknown) keys of the body and of data', async () => {
    const rest = '"features":[],"featureStrategies":[],"tagTypes":[]';
    const cases: [string, string][] = [
      [`{"project":"default","environment":"development","data":{${rest},"constructor":[1]}}`, '/body/data/constructor'],
      [`{"project":"default","environment":"development","data":{${rest},"__proto__":[1]}}`, '/body/data/__proto__'],
      [`{"project":"default","environment":"development","data":{${rest},"__proto__":{"a":1}}}`, '/body/data/__proto__'],
      [`{"project":"default","environment":"development","__proto__":{"x":1},"data":{${rest}}}`, '/body/__proto__'],
    ];
    for (const [rawBody, path] of cases) {
      const error = await expectError(await call('POST', IMPORT, { rawBody }), 400, 'ValidationError');
      expect(error.details.map((detail: { path?: string }) => detail.path)).toEqual([path]);
    }
  });

  it('refuses a key given twice', async () => {
    const error = await expectError(
      await call('POST', IMPORT, {
        rawBody:
          '{"project":"default","environment":"development","project":"x","data":{"features":[],"featureStrategies":[],"tagTypes":[]}}',
      }),
      400,
      'ValidationError',
    );
    expect(error.details).toEqual([{ path: '/body/project', message: 'The request body has the key `/body/project` more than once.' }]);
  });

  it('answers 413 for one element over 4 MiB', async () => {
    const before = await footprint();
    const huge = await call('POST', IMPORT, {
      rawBody: body('default', [['features', [{ name: 'x', description: 'd'.repeat(4 * 1024 * 1024) }]]]),
    });
    expect(huge.status).toBe(413);
    const error = await bodyOf(huge);
    expect(error.name).toBe('PayloadTooLargeError');
    expect(error.message).toContain('`/body/data/features/0`');
    expect(await footprint()).toEqual(before);
  });
});

describe('what an import may hold in memory while its body streams in', () => {
  it('answers 413 past 250,000 distinct feature names, deleting what it staged', async () => {
    const staged = await stagingRows();
    const before = await footprint();
    // 250,001 tiny features: about 7 MB of body, far under the byte limits.
    const features = Array.from({ length: 250_001 }, (_, i) => `{"name":"n${i}"}`).join(',');
    const response = await call('POST', IMPORT, {
      rawBody: `{"project":"default","environment":"development","data":{"features":[${features}],"featureStrategies":[],"tagTypes":[]}}`,
    });
    expect(response.status).toBe(413);
    expect(await bodyOf(response)).toMatchObject({
      name: 'PayloadTooLargeError',
      message: 'An import may name at most 250000 features; send more as several imports.',
    });
    expect(await stagingRows()).toEqual(staged);
    expect(await footprint()).toEqual(before);
  }, 60_000);

  it('answers 413 when the arrays it keeps whole pass 16 MiB', async () => {
    const legalValues = Array.from({ length: 35_000 }, (_, i) => ({ value: `v-${String(i).padStart(90, '0')}` }));
    const fields = Array.from({ length: 5 }, (_, i) => ({ name: unique(`ctx${i}`), legalValues }));
    const response = await call('POST', IMPORT, {
      rawBody: body('default', [
        ['features', []],
        ['featureStrategies', []],
        ['tagTypes', []],
        ['contextFields', fields],
      ]),
    });
    expect(response.status).toBe(413);
    expect((await bodyOf(response)).message).toMatch(/take more than 16777216 bytes\.$/);
  });

  // Each value below is under the 4 MiB one-value limit; together they are over the 16 MiB
  // kept-whole cap, which they used to bypass.
  const big = 'x'.repeat(3.5 * 1024 * 1024);

  it('counts extra top-level keys, kept whole, against the 16 MiB cap', async () => {
    const before = await footprint();
    const extra = Array.from({ length: 5 }, (_, i) => `"extra${i}":"${big}"`).join(',');
    const response = await call('POST', IMPORT, {
      rawBody: `{"project":"default","environment":"development",${extra},"data":{"features":[{"name":"${unique('top')}"}],"featureStrategies":[],"tagTypes":[]}}`,
    });
    expect(response.status).toBe(413);
    expect(await bodyOf(response)).toMatchObject({
      name: 'PayloadTooLargeError',
      message: expect.stringMatching(/take more than 16777216 bytes\.$/),
    });
    expect(await footprint()).toEqual(before);
  }, 60_000);

  it('counts non-array values inside data, kept whole, against the 16 MiB cap', async () => {
    const before = await footprint();
    const extra = Array.from({ length: 5 }, (_, i) => `"other${i}":{"text":"${big}"}`).join(',');
    const response = await call('POST', IMPORT, {
      rawBody: `{"project":"default","environment":"development","data":{${extra},"features":[{"name":"${unique('data')}"}],"featureStrategies":[],"tagTypes":[]}}`,
    });
    expect(response.status).toBe(413);
    expect((await bodyOf(response)).message).toMatch(/take more than 16777216 bytes\.$/);
    expect(await footprint()).toEqual(before);
  }, 60_000);

  it('counts a feature name repeated over and over against the 16 MiB cap, deleting what it staged', async () => {
    const staged = await stagingRows();
    const before = await footprint();
    // 180,000 repetitions of a 100-character name: each is kept (to report the duplicate), ~21 MB.
    const name = unique('dup').padEnd(100, 'x');
    const features = Array(180_000).fill(`{"name":"${name}"}`).join(',');
    const response = await call('POST', IMPORT, {
      rawBody: `{"project":"default","environment":"development","data":{"features":[${features}],"featureStrategies":[],"tagTypes":[]}}`,
    });
    expect(response.status).toBe(413);
    expect((await bodyOf(response)).message).toMatch(/take more than 16777216 bytes\.$/);
    expect(await stagingRows()).toEqual(staged);
    expect(await footprint()).toEqual(before);
  }, 90_000);
});
