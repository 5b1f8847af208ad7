/** GET /api/client/delta: Unleash's delta events over the sdk_changes log. */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { deltaSince, forgetChangeLog } from '../src/sdk/client-api/delta';
import { snapshotFor } from '../src/sdk/client-api/snapshot';
import type { Env } from '../src/env';
import { bodyOf, call, createToken, expectError } from './support/http';
import { adminOk, createProject } from './support/admin';
import { count } from './support/db';
import { unique } from './support/names';

interface DeltaEvent {
  eventId: number;
  type: string;
  [key: string]: unknown;
}

let backend: string;
let production: string;
let scoped: string;

const SPEC = { 'unleash-client-spec': '5.2.0' };

async function delta(token: string, etag?: string, path = '/api/client/delta') {
  const response = await call('GET', path, { token, headers: etag ? { 'if-none-match': etag } : {} });
  const body = response.status === 200 ? await bodyOf<{ events: DeltaEvent[] }>(response) : null;
  return { status: response.status, etag: response.headers.get('etag'), body, text: body === null ? await response.text() : '' };
}

const flagPath = (flag: string, project = 'default') => `/api/admin/projects/${project}/features/${flag}`;

beforeAll(async () => {
  await adminOk('POST', '/api/admin/projects', { id: 'delta-other', name: 'Delta other' });
  backend = await createToken({ tokenName: 'delta-backend', type: 'backend', environment: 'development' });
  production = await createToken({ tokenName: 'delta-prod', type: 'client', environment: 'production' });
  scoped = await createToken({ tokenName: 'delta-scoped', type: 'client', environment: 'development', projects: ['delta-other'] });
  await adminOk('POST', '/api/admin/projects/default/features', { name: 'delta.a' });
  await adminOk('POST', `${flagPath('delta.a')}/environments/development/on`);
});

describe('GET /api/client/delta', () => {
  it('needs a backend key: 401 without one, 403 for a frontend key', async () => {
    await expectError(await call('GET', '/api/client/delta', { token: null }), 401, 'AuthenticationRequired');
    const frontend = await createToken({ tokenName: 'delta-frontend', type: 'frontend', environment: 'development' });
    await expectError(await call('GET', '/api/client/delta', { token: frontend }), 403, 'NoAccessError');
  });

  it('hydrates a new client with every flag and segment at the current revision, ETag on that id', async () => {
    const first = await delta(backend);
    expect(first.status).toBe(200);
    expect(first.body!.events).toHaveLength(1);
    const [hydration] = first.body!.events;
    expect(Object.keys(hydration!)).toEqual(['eventId', 'type', 'features', 'segments']);
    expect(hydration!.type).toBe('hydration');
    expect(Number.isInteger(hydration!.eventId)).toBe(true);
    expect(hydration!.eventId).toBeLessThan(2 ** 32);
    expect(first.etag).toBe(`"${hydration!.eventId}"`);
    const full = await bodyOf(await call('GET', '/api/client/features', { token: backend, headers: SPEC }));
    expect(hydration!.eventId).toBe(full.meta.revisionId);
    expect(hydration!.features).toEqual(full.features);
    expect(hydration!.segments).toEqual(full.segments);
  });

  it('answers 304 while nothing changed, and accepts the ETag weak or bare', async () => {
    const { etag } = await delta(backend);
    for (const sent of [etag!, `W/${etag}`, etag!.replaceAll('"', '')]) {
      const again = await delta(backend, sent);
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
    }
  });

  it('sends one feature-updated per changed flag, in its current state, under its latest event id', async () => {
    const { etag } = await delta(backend);
    const before = Number(etag!.replaceAll('"', ''));
    await adminOk('POST', `${flagPath('delta.a')}/environments/development/strategies`, { name: 'default', constraints: [] });
    await adminOk('PATCH', flagPath('delta.a'), [{ op: 'replace', path: '/description', value: 'changed twice' }]);
    const next = await delta(backend, etag!);
    expect(next.status).toBe(200);
    expect(next.body!.events.map((event) => event.type)).toEqual(['feature-updated']);
    const [updated] = next.body!.events;
    expect(Object.keys(updated!)).toEqual(['eventId', 'type', 'feature']);
    expect(updated!.eventId).toBeGreaterThan(before);
    expect(next.etag).toBe(`"${updated!.eventId}"`);
    const full = await bodyOf(await call('GET', '/api/client/features/delta.a', { token: backend, headers: SPEC }));
    expect(updated!.feature).toEqual(full);
    expect((updated!.feature as { description: string }).description).toBe('changed twice');
  });

  it('sends feature-removed with the flag name and project when a flag is archived', async () => {
    await adminOk('POST', '/api/admin/projects/default/features', { name: 'delta.gone' });
    const { etag } = await delta(backend);
    await adminOk('DELETE', flagPath('delta.gone'));
    const next = await delta(backend, etag!);
    expect(next.body!.events).toEqual([
      { eventId: expect.any(Number), type: 'feature-removed', featureName: 'delta.gone', project: 'default' },
    ]);
  });

  it('sends a segment before the first flag that uses it, and segment-updated when it changes', async () => {
    const segment = await bodyOf(
      await adminOk('POST', '/api/admin/segments', {
        name: 'delta-seg',
        constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }],
      }),
    );
    const { etag } = await delta(backend);
    await adminOk('POST', `${flagPath('delta.a')}/environments/development/strategies`, { name: 'default', segments: [segment.id] });
    const added = await delta(backend, etag!);
    expect(added.body!.events.map((event) => event.type)).toEqual(['segment-updated', 'feature-updated']);
    expect(added.body!.events[0]).toEqual({
      eventId: added.body!.events[1]!.eventId,
      type: 'segment-updated',
      segment: { id: segment.id, name: 'delta-seg', constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }] },
    });
    await adminOk('PUT', `/api/admin/segments/${segment.id}`, {
      name: 'delta-seg',
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['2'] }],
    });
    const changed = await delta(backend, added.etag!);
    expect(changed.body!.events.map((event) => event.type)).toEqual(['segment-updated']);
    expect((changed.body!.events[0]!.segment as { constraints: { values: string[] }[] }).constraints[0]!.values).toEqual(['2']);
  });

  it('leaves out what the token cannot see: other projects, other environments, names outside namePrefix', async () => {
    const scopedStart = await delta(scoped);
    const productionStart = await delta(production);
    const prefixStart = await delta(backend, undefined, '/api/client/delta?namePrefix=delta.only');
    expect(prefixStart.body!.events[0]!.features).toEqual([]);
    await adminOk('POST', `${flagPath('delta.a')}/environments/development/off`);
    expect((await delta(scoped, scopedStart.etag!)).status).toBe(304);
    expect((await delta(production, productionStart.etag!)).status).toBe(304);
    expect((await delta(backend, prefixStart.etag!, '/api/client/delta?namePrefix=delta.only')).status).toBe(304);
    await adminOk('POST', '/api/admin/projects/delta-other/features', { name: 'delta.other' });
    const seen = await delta(scoped, scopedStart.etag!);
    expect(seen.body!.events.map((event) => [event.type, (event.feature as { name: string }).name])).toEqual([
      ['feature-updated', 'delta.other'],
    ]);
  });

  it('ignores writes SDKs cannot see (API tokens) in the change log', async () => {
    const { etag } = await delta(backend);
    await createToken({ tokenName: 'delta-noise', type: 'client', environment: 'development' });
    expect((await delta(backend, etag!)).status).toBe(304);
    const logged = await env.DB.prepare(
      "SELECT count(*) AS n FROM sdk_changes c JOIN events e ON e.id = c.event_id WHERE e.type LIKE 'api-token-%'",
    ).first('n');
    expect(logged).toBe(0);
  });

  it('hydrates after a write that touches many flags (an import) and for an unknown ETag', async () => {
    const { etag } = await delta(backend);
    await env.DB.prepare("INSERT INTO events (type, created_by, project) VALUES ('features-imported', 'test', 'default')").run();
    const next = await delta(backend, etag!);
    expect(next.body!.events.map((event) => event.type)).toEqual(['hydration']);
    expect((await delta(backend, '"not-a-revision"')).body!.events[0]!.type).toBe('hydration');
  });

  it('waits (no events) rather than skip changes when the replica it reads lags the snapshot', async () => {
    const bindings = env as unknown as Env;
    const eager: Env = { ...bindings, SDK_REVISION_CHECK_MS: '0' };
    const start = await snapshotFor(eager, 'development');
    await adminOk('PATCH', flagPath('delta.a'), [{ op: 'replace', path: '/description', value: 'lagging' }]);
    const snapshot = await snapshotFor(eager, 'development');
    expect(snapshot.revision).toBeGreaterThan(start.revision);
    const real = bindings.DB;
    const lagging = {
      prepare: (query: string) =>
        real.prepare(/max\("?event_id"?\)/i.test(query) && query.includes('sdk_changes') ? `select ${start.revision}` : query),
      batch: (statements: D1PreparedStatement[]) => real.batch(statements),
      exec: (query: string) => real.exec(query),
      dump: () => real.dump(),
      withSession: (from?: string) => real.withSession(from),
    } as D1Database;
    forgetChangeLog();
    expect(await deltaSince({ ...eager, DB: lagging }, snapshot, {}, start.revision)).toBeNull();
    const caughtUp = await deltaSince(eager, snapshot, {}, start.revision);
    // delta.a uses a segment, which is sent just before it.
    expect(caughtUp!.events.map((event) => JSON.parse(event).type)).toEqual(['segment-updated', 'feature-updated']);
  });

  it('hydrates a client older than the kept history; ids keep going up', async () => {
    const old = await delta(backend);
    const oldId = Number(old.etag!.replaceAll('"', ''));
    // Jump past the 10,000 events of history the log keeps (a fold happens on every 1,000th id).
    const jump = Math.ceil((oldId + 10_001) / 1000) * 1000;
    await env.DB.prepare(
      "INSERT INTO events (id, type, created_by, feature_name, project) VALUES (?, 'feature-metadata-updated', 'test', 'delta.a', 'default')",
    )
      .bind(jump)
      .run();
    const folded = await env.DB.prepare('SELECT kind FROM sdk_changes WHERE event_id <= ? ORDER BY event_id')
      .bind(jump - 10_000)
      .all();
    expect(folded.results).toEqual([{ kind: 'all' }]);
    // An isolate that already holds that history still replays it exactly; a fresh one cannot.
    forgetChangeLog();
    // A client at the fold point has everything before it; one a change earlier does not.
    expect((await delta(backend, old.etag!)).body!.events.map((event) => event.type)).toEqual(['segment-updated', 'feature-updated']);
    const next = await delta(backend, `"${oldId - 1}"`);
    expect(next.body!.events.map((event) => event.type)).toEqual(['hydration']);
    expect(next.body!.events[0]!.eventId).toBe(jump);
    expect(jump).toBeGreaterThan(oldId);
  });
});

describe('the change log (sdk_changes) follows what SDK answers contain', () => {
  const revision = () => count('SELECT coalesce(max(event_id), 0) AS n FROM sdk_changes');

  it('does not move for writes no SDK answer shows: service accounts, sign-in and maintenance settings, definitions, integrations', async () => {
    const project = await createProject(unique('log-quiet'));
    const writes: [string, string, unknown][] = [
      ['POST', '/api/admin/service-account', { username: unique('log-svc'), name: 'Log bot', rootRole: 3 }],
      ['POST', '/api/admin/auth/simple/settings', { disabled: false }],
      ['POST', '/api/admin/maintenance', { enabled: false }],
      ['POST', '/api/admin/context', { name: unique('log-field') }],
      ['POST', '/api/admin/strategies', { name: unique('log-strategy'), parameters: [] }],
      ['POST', '/api/admin/tags', { type: 'simple', value: unique('log-tag') }],
      ['POST', '/api/admin/metrics/applications/log-app', { description: 'registered by an admin' }],
      [
        'POST',
        `/api/admin/projects/${project}/environments/development/default-strategy`,
        { name: 'flexibleRollout', constraints: [], parameters: { rollout: '50', stickiness: 'default', groupId: '' } },
      ],
      [
        'POST',
        '/api/admin/addons',
        { provider: 'webhook', enabled: false, parameters: { url: 'https://hooks.example.com/log' }, events: ['feature-created'] },
      ],
    ];
    for (const [method, path, body] of writes) {
      const before = await revision();
      const events = await count('SELECT count(*) AS n FROM events');
      await adminOk(method, path, body);
      expect(await count('SELECT count(*) AS n FROM events'), `${method} ${path} records its event`).toBeGreaterThan(events);
      expect(await revision(), `${method} ${path}`).toBe(before);
    }
  });

  it('moves for flag changes and for writes that change what flags SDKs get: tags and tag types deleted, project environments', async () => {
    const project = await createProject(unique('log-moves'), ['development']);
    const flag = unique('log-flag');
    const type = unique('log-type');
    await adminOk('POST', '/api/admin/tag-types', { name: type });
    const writes: [string, string, unknown?][] = [
      ['POST', `/api/admin/projects/${project}/features`, { name: flag }],
      ['POST', `/api/admin/features/${flag}/tags`, { type: 'simple', value: 'log-moves' }],
      ['DELETE', '/api/admin/tags/simple/log-moves'],
      ['POST', `/api/admin/features/${flag}/tags`, { type, value: 'gone-with-its-type' }],
      ['DELETE', `/api/admin/tag-types/${type}`],
      ['POST', `/api/admin/projects/${project}/environments`, { environment: 'production' }],
      ['DELETE', `/api/admin/projects/${project}/environments/production`],
      ['POST', '/api/admin/ui-config/cors', { frontendApiOrigins: ['*'] }],
    ];
    for (const [method, path, body] of writes) {
      const before = await revision();
      await adminOk(method, path, body);
      expect(await revision(), `${method} ${path}`).toBeGreaterThan(before);
    }
  });
});
