/**
 * Writes that race a concurrent change of what they checked. Requests to the local runtime do
 * not interleave, so each test runs the handler's two halves itself: the checks (through the
 * API, or by reading the state), then the concurrent change (through the API), then the
 * handler's write step, exactly as the handler calls it. The write must notice and write nothing.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { Actor } from '../src/db/events';
import { eq } from 'drizzle-orm';
import { getDb } from '../src/db/client';
import { segments } from '../src/db/schema';
import { archiveIfUnused } from '../src/admin/features/service';
import { linkIfAllowed } from '../src/admin/feature-dependencies/service';
import { deleteIfUnused } from '../src/admin/segments/service';
import { bodyOf, call, expectError } from './support/http';
import { seedSegment } from './support/sdk-seed';
import { count } from './support/db';

const P = '/api/admin/projects/default/features';
const ACTOR: Actor = { actorName: 'admin', userId: -1337 };

async function createFeatures(...names: string[]) {
  for (const name of names) expect((await call('POST', P, { body: { name } })).status).toBe(201);
}

describe('segment delete vs a strategy added with that segment', () => {
  it('a strategy linked after the in-use check keeps its segment: the delete writes nothing', async () => {
    const id = await seedSegment('race-seg', [{ contextName: 'userId', operator: 'IN', values: ['1'] }]);
    await createFeatures('race-seg');
    // The handler's check passes: the segment exists and no strategy uses it.
    expect(await count('SELECT count(*) AS n FROM feature_strategy_segment WHERE segment_id = ?', id)).toBe(0);
    // Meanwhile another request adds a strategy limited to the segment.
    expect(
      (await call('POST', `${P}/race-seg/environments/development/strategies`, { body: { name: 'default', segments: [id] } })).status,
    ).toBe(200);

    const [segment] = await getDb(env).select().from(segments).where(eq(segments.id, id));
    expect(await deleteIfUnused(getDb(env), ACTOR, segment!)).toBe(false);
    expect(await count('SELECT count(*) AS n FROM segments WHERE id = ?', id)).toBe(1);
    expect(
      await count(
        "SELECT count(*) AS n FROM feature_strategy_segment l JOIN feature_strategies s ON s.id = l.feature_strategy_id WHERE s.feature_name = 'race-seg'",
      ),
    ).toBe(1);
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'segment-deleted' AND json_extract(pre_data, '$.id') = ?", id)).toBe(
      0,
    );
    // Through the API the same state is a 409.
    await expectError(await call('DELETE', `/api/admin/segments/${id}`), 409, 'SegmentInUseError');
  });

  it('an unused segment is deleted, with its event', async () => {
    const id = await seedSegment('race-unused', []);
    expect((await call('DELETE', `/api/admin/segments/${id}`)).status).toBe(204);
    expect(await count('SELECT count(*) AS n FROM segments WHERE id = ?', id)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'segment-deleted' AND json_extract(pre_data, '$.id') = ?", id)).toBe(
      1,
    );
    await expectError(await call('DELETE', `/api/admin/segments/${id}`), 404, 'NotFoundError');
  });
});

describe('archive vs adding a dependency', () => {
  it('a dependency added after the archive check stops the archive: nothing written', async () => {
    await createFeatures('race-parent', 'race-child');
    // The handler's checks: the parent is active and nothing depends on it.
    const parent = (await bodyOf(await call('GET', `${P}/race-parent`))) as { name: string; project: string };
    // Meanwhile another request makes race-child depend on it.
    expect((await call('POST', `${P}/race-child/dependencies`, { body: { feature: 'race-parent' } })).status).toBe(200);

    expect(await archiveIfUnused(getDb(env), ACTOR, parent)).toBe(false);
    expect(await count("SELECT count(*) AS n FROM features WHERE name = 'race-parent' AND archived_at IS NOT NULL")).toBe(0);
    expect(await count("SELECT count(*) AS n FROM feature_lifecycles WHERE feature = 'race-parent' AND stage = 'archived'")).toBe(0);
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'feature-archived' AND feature_name = 'race-parent'")).toBe(0);
    await expectError(await call('DELETE', `${P}/race-parent`), 403, 'InvalidOperationError');
  });

  it('a parent archived after the dependency checks is not linked, and the old parent stays', async () => {
    await createFeatures('race-old-parent', 'race-new-parent', 'race-dependent');
    expect((await call('POST', `${P}/race-dependent/dependencies`, { body: { feature: 'race-old-parent' } })).status).toBe(200);
    // The handler's checks pass for race-new-parent; meanwhile it is archived.
    expect((await call('DELETE', `${P}/race-new-parent`)).status).toBe(202);

    const linked = await linkIfAllowed(getDb(env), ACTOR, {
      parent: 'race-new-parent',
      child: { name: 'race-dependent', project: 'default' },
      enabled: true,
      variants: [],
    });
    expect(linked).toBe(false);
    const { results } = await env.DB.prepare("SELECT parent FROM dependent_features WHERE child = 'race-dependent'").all<{
      parent: string;
    }>();
    expect(results).toEqual([{ parent: 'race-old-parent' }]);
    expect(
      await count("SELECT count(*) AS n FROM events WHERE type = 'feature-dependency-added' AND feature_name = 'race-dependent'"),
    ).toBe(1);
    await expectError(
      await call('POST', `${P}/race-dependent/dependencies`, { body: { feature: 'race-new-parent' } }),
      403,
      'InvalidOperationError',
    );
  });

  it('a child made a parent meanwhile is not linked (no transitive chain)', async () => {
    await createFeatures('race-a', 'race-b', 'race-c');
    // Checks for race-b -> race-a pass; meanwhile race-c comes to depend on race-b.
    expect((await call('POST', `${P}/race-c/dependencies`, { body: { feature: 'race-b' } })).status).toBe(200);
    expect(
      await linkIfAllowed(getDb(env), ACTOR, {
        parent: 'race-a',
        child: { name: 'race-b', project: 'default' },
        enabled: true,
        variants: [],
      }),
    ).toBe(false);
    expect(await count("SELECT count(*) AS n FROM dependent_features WHERE child = 'race-b'")).toBe(0);
  });

  it('the ordinary paths still write their rows and events', async () => {
    await createFeatures('race-seq-parent', 'race-seq-child');
    expect((await call('POST', `${P}/race-seq-child/dependencies`, { body: { feature: 'race-seq-parent', enabled: false } })).status).toBe(
      200,
    );
    expect(await bodyOf(await call('GET', `${P}/race-seq-child`))).toMatchObject({
      dependencies: [{ feature: 'race-seq-parent', enabled: false, variants: [] }],
    });
    expect((await call('DELETE', `${P}/race-seq-child`)).status).toBe(202);
    expect(await count("SELECT count(*) AS n FROM dependent_features WHERE child = 'race-seq-child'")).toBe(0);
    expect((await call('DELETE', `${P}/race-seq-parent`)).status).toBe(202);
    expect(await count("SELECT count(*) AS n FROM feature_lifecycles WHERE feature = 'race-seq-parent' AND stage = 'archived'")).toBe(1);
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'feature-archived' AND feature_name = 'race-seq-parent'")).toBe(1);
  });
});
