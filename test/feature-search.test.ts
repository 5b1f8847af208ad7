import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call, createToken, expectError } from './support/http';
import { adminOk } from './support/admin';
import { gravatar } from './support/crypto';

/**
 * One fixture for the whole file (storage is per file):
 *
 * | feature   | project  | type        | created    | state / notes                                                     |
 * |-----------|----------|-------------|------------|-------------------------------------------------------------------|
 * | s-alpha   | default  | release     | 2026-01-01 | dev on (strategy with seg-one), tags simple:alpha-tag + team:core, seen, metrics, parent |
 * | s-beta    | default  | experiment  | 2026-01-02 | stale, prod on, tag simple:beta-tag, completed/discarded, favourite of user 1 only |
 * | S-Gamma   | search-b | kill-switch | 2026-01-03 | description "100%_done", only production attached, favourite of -42 |
 * | s-delta   | default  | release     | 2026-01-04 | archived                                                          |
 * | s-epsilon | default  | release     | 2026-01-05 | long description, child of s-alpha, disabled strategy with seg-two in prod, potentially stale |
 */
const P = '/api/admin/projects/default/features';
const ALL_ACTIVE = ['s-alpha', 's-beta', 'S-Gamma', 's-epsilon'];

async function search(query = '') {
  const response = await call('GET', `/api/admin/search/features${query ? `?${query}` : ''}`);
  if (response.status !== 200) throw new Error(`search ${query}: ${response.status} ${await response.text()}`);
  return bodyOf<{ features: Record<string, any>[]; total: number }>(response);
}

async function names(query = ''): Promise<string[]> {
  return (await search(query)).features.map((feature) => feature.name);
}

const hourStart = (msAgo: number) => {
  const date = new Date(Date.now() - msAgo);
  date.setUTCMinutes(0, 0, 0);
  return date.toISOString();
};

let alphaInitialAt = '';

beforeAll(async () => {
  await adminOk('POST', '/api/admin/projects', { id: 'search-b', name: 'Search B', environments: ['production'] });
  await adminOk('POST', '/api/admin/tag-types', { name: 'team' });
  const segOne = await bodyOf(await adminOk('POST', '/api/admin/segments', { name: 'seg-one', constraints: [] }));
  const segTwo = await bodyOf(await adminOk('POST', '/api/admin/segments', { name: 'seg-two', constraints: [] }));

  await adminOk('POST', P, { name: 's-alpha', description: 'First Flag' });
  await adminOk('POST', P, { name: 's-beta', type: 'experiment' });
  await adminOk('POST', '/api/admin/projects/search-b/features', { name: 'S-Gamma', type: 'kill-switch', description: '100%_done' });
  await adminOk('POST', P, { name: 's-delta' });
  await adminOk('POST', P, { name: 's-epsilon', description: `Long description ${'x'.repeat(60)}` });

  await adminOk('POST', `${P}/s-alpha/environments/development/strategies`, { name: 'default', segments: [segOne.id] });
  await adminOk('POST', `${P}/s-alpha/environments/development/on`);
  await adminOk('PUT', `${P}/s-alpha/variants-batch`, {
    environments: ['production'],
    variants: [
      { name: 'a', weight: 0 },
      { name: 'b', weight: 0 },
    ],
  });
  await adminOk('POST', '/api/admin/features/s-alpha/tags', { type: 'simple', value: 'alpha-tag' });
  await adminOk('POST', '/api/admin/features/s-alpha/tags', { type: 'team', value: 'core' });

  await adminOk('POST', '/api/admin/projects/default/stale', { features: ['s-beta'], stale: true });
  await adminOk('POST', `${P}/s-beta/environments/production/on`);
  await adminOk('POST', '/api/admin/features/s-beta/tags', { type: 'simple', value: 'beta-tag' });
  await adminOk('POST', `${P}/s-beta/lifecycle/complete`, { status: 'discarded' });

  const favourite = await call('POST', '/api/admin/projects/search-b/features/S-Gamma/favorites', { contentType: 'application/json' });
  if (favourite.status !== 200) throw new Error(`favourite: ${favourite.status}`);
  await adminOk('DELETE', `${P}/s-delta`);

  await adminOk('POST', `${P}/s-epsilon/dependencies`, { feature: 's-alpha' });
  await adminOk('POST', `${P}/s-epsilon/environments/production/strategies`, { name: 'default', disabled: true, segments: [segTwo.id] });

  const day = (name: string, date: string) =>
    env.DB.prepare('UPDATE features SET created_at = ? WHERE name = ?').bind(`${date}T00:00:00.000Z`, name);
  await env.DB.batch([
    day('s-alpha', '2026-01-01'),
    day('s-beta', '2026-01-02'),
    day('S-Gamma', '2026-01-03'),
    day('s-delta', '2026-01-04'),
    day('s-epsilon', '2026-01-05'),
    env.DB.prepare("UPDATE features SET potentially_stale = 1 WHERE name = 's-epsilon'"),
    env.DB.prepare(
      "UPDATE feature_environments SET last_seen_at = '2026-02-01T10:00:00.000Z' WHERE feature_name = 's-alpha' AND environment = 'development'",
    ),
    // Another user's favourite must not show for the admin token's user (-42).
    env.DB.prepare("INSERT INTO favorite_features (feature, user_id) VALUES ('s-beta', 1)"),
    env.DB.prepare(
      `INSERT INTO client_metrics_env (feature_name, app_name, environment, timestamp, yes, no) VALUES
        ('s-alpha', 'app-1', 'development', ?1, 10, 4),
        ('s-alpha', 'app-2', 'development', ?1, 5, 1),
        ('s-alpha', 'app-1', 'development', ?2, 1000, 1000)`,
    ).bind(hourStart(0), hourStart(3 * 60 * 60 * 1000)),
  ]);
  const row = await env.DB.prepare("SELECT created_at FROM feature_lifecycles WHERE feature = 's-alpha' AND stage = 'initial'").first<{
    created_at: string;
  }>();
  alphaInitialAt = row!.created_at;
});

describe('GET /api/admin/search/features: response', () => {
  it('returns active features in creation order with the real total', async () => {
    const body = await search();
    expect(body.total).toBe(4);
    expect(body.features.map((feature) => feature.name)).toEqual(ALL_ACTIVE);
    expect(Object.keys(body)).toEqual(['features', 'total']);
  });

  it('describes a feature key by key, in a fixed order', async () => {
    const [alpha] = (await search('query=s-alpha')).features;
    expect(Object.keys(alpha!)).toEqual([
      'type',
      'description',
      'project',
      'favorite',
      'name',
      'createdAt',
      'stale',
      'archivedAt',
      'impressionData',
      'lastSeenAt',
      'dependencyType',
      'environments',
      'segments',
      'createdBy',
      'lifecycle',
      'tags',
    ]);
    expect(alpha).toEqual({
      type: 'release',
      description: 'First Flag',
      project: 'default',
      favorite: false,
      name: 's-alpha',
      createdAt: '2026-01-01T00:00:00.000Z',
      stale: false,
      archivedAt: null,
      impressionData: false,
      lastSeenAt: '2026-02-01T10:00:00.000Z',
      dependencyType: 'parent',
      environments: [
        {
          name: 'development',
          environment: 'development',
          enabled: true,
          type: 'development',
          sortOrder: 2,
          variantCount: 0,
          lastSeenAt: '2026-02-01T10:00:00.000Z',
          hasStrategies: true,
          hasEnabledStrategies: true,
          yes: 15,
          no: 5,
          changeRequestIds: [],
        },
        {
          name: 'production',
          environment: 'production',
          enabled: false,
          type: 'production',
          sortOrder: 3,
          variantCount: 2,
          lastSeenAt: null,
          hasStrategies: false,
          hasEnabledStrategies: false,
          yes: 0,
          no: 0,
          changeRequestIds: [],
        },
      ],
      segments: ['seg-one'],
      createdBy: { id: -42, name: 'Unleash Admin Token User', imageUrl: await gravatar('unleash admin token user') },
      lifecycle: { stage: 'initial', status: null, enteredStageAt: alphaInitialAt },
      tags: [
        { value: 'alpha-tag', type: 'simple', color: '#FFFFFF' },
        { value: 'core', type: 'team', color: null },
      ],
    });
  });

  it('reports metrics fields as zero and null where no metrics exist', async () => {
    const [beta] = (await search('query=s-beta')).features;
    expect(beta!.lastSeenAt).toBeNull();
    for (const environment of beta!.environments) {
      expect(environment).toMatchObject({ lastSeenAt: null, yes: 0, no: 0 });
    }
  });

  it('marks a disabled-only strategy as hasStrategies without hasEnabledStrategies, and the child dependency', async () => {
    const [epsilon] = (await search('query=s-epsilon')).features;
    expect(epsilon!.dependencyType).toBe('child');
    expect(epsilon!.segments).toEqual(['seg-two']);
    expect(epsilon!.environments.find((environment: { name: string }) => environment.name === 'production')).toMatchObject({
      hasStrategies: true,
      hasEnabledStrategies: false,
      enabled: false,
    });
    const [gamma] = (await search('query=S-Gamma')).features;
    expect(gamma!.dependencyType).toBeNull();
    expect(gamma!.environments.map((environment: { name: string }) => environment.name)).toEqual(['production']);
    expect(gamma!.tags).toEqual([]);
    expect(gamma!.segments).toEqual([]);
  });

  it('shows the latest lifecycle stage with its status', async () => {
    const [beta] = (await search('query=s-beta')).features;
    expect(beta!.lifecycle).toEqual({ stage: 'completed', status: 'discarded', enteredStageAt: expect.any(String) });
  });

  it('reports favourites for the calling principal only', async () => {
    const body = await search();
    const favorite = Object.fromEntries(body.features.map((feature) => [feature.name, feature.favorite]));
    expect(favorite).toEqual({ 's-alpha': false, 's-beta': false, 'S-Gamma': true, 's-epsilon': false });
  });

  it('is open to any admin-API caller, 401 without a key and 403 for client and frontend tokens', async () => {
    expect((await call('GET', '/api/admin/search/features', { token: null })).status).toBe(401);
    const client = await createToken({ tokenName: 'search-client', type: 'client' });
    const frontend = await createToken({ tokenName: 'search-frontend', type: 'frontend' });
    for (const token of [client, frontend]) {
      const response = await call('GET', '/api/admin/search/features', { token });
      expect(response.status).toBe(403);
      expect(await bodyOf(response)).toMatchObject({ message: 'invalid token: expected a different token type for this endpoint' });
    }
  });
});

describe('GET /api/admin/search/features: query text', () => {
  it.each([
    ['alpha', ['s-alpha']],
    ['ALPHA', ['s-alpha']],
    ['first flag', ['s-alpha']],
    ['core', ['s-alpha']],
    ['beta-tag', ['s-beta']],
    ['%', ['S-Gamma']],
    ['_', ['S-Gamma']],
    ['%25_', ['S-Gamma']],
    ['nothing-like-it', []],
    ['gamma,delta,epsilon', ['S-Gamma', 's-epsilon']],
    [' , ', ALL_ACTIVE],
    ['\\', []],
    // Longer than a 50-byte LIKE pattern: matched another way, still case-insensitively.
    [`LONG DESCRIPTION ${'X'.repeat(50)}`, ['s-epsilon']],
    [`long description ${'x'.repeat(61)}`, []],
  ])('query=%s matches name, description or tag value literally', async (query, expected) => {
    const body = await search(`query=${query.includes('%25') ? query : encodeURIComponent(query)}`);
    expect(body.features.map((feature) => feature.name)).toEqual(expected);
    expect(body.total).toBe(expected.length);
  });
});

describe('GET /api/admin/search/features: list operators', () => {
  it.each([
    ['project=IS:default', ['s-alpha', 's-beta', 's-epsilon']],
    ['project=IS_NOT:default', ['S-Gamma']],
    ['project=IS_ANY_OF:default,search-b', ALL_ACTIVE],
    ['project=IS_NONE_OF:default,search-b', []],
    ['project=IS:', ALL_ACTIVE],
    ['type=IS:release', ['s-alpha', 's-epsilon']],
    ['type=IS_NOT:release', ['s-beta', 'S-Gamma']],
    ['type=IS_ANY_OF:experiment,kill-switch', ['s-beta', 'S-Gamma']],
    ['type=IS_NONE_OF:experiment,kill-switch', ['s-alpha', 's-epsilon']],
    ['createdBy=IS:-42', ALL_ACTIVE],
    ['createdBy=IS:1', []],
    ['createdBy=IS_NOT:-42', []],
    ['createdBy=IS_NONE_OF:1,2', ALL_ACTIVE],
  ])('%s', async (query, expected) => {
    const body = await search(query);
    expect(body.features.map((feature) => feature.name)).toEqual(expected);
    expect(body.total).toBe(expected.length);
  });

  it.each([
    ['state=IS:active', ['s-alpha', 'S-Gamma', 's-epsilon']],
    ['state=IS:stale', ['s-beta']],
    ['state=IS_NOT:active', ['s-beta']],
    ['state=IS_NOT:stale', ['s-alpha', 'S-Gamma', 's-epsilon']],
    ['state=IS:bogus', ['s-beta']],
    ['state=IS_ANY_OF:active,stale', ALL_ACTIVE],
    ['state=IS_NONE_OF:active,stale', []],
    ['state=IS:potentially-stale', ['s-epsilon']],
    ['state=IS_NOT:potentially-stale', ['s-alpha', 's-beta', 'S-Gamma']],
    ['state=IS_ANY_OF:potentially-stale,stale', ['s-beta', 's-epsilon']],
    ['state=IS_NONE_OF:potentially-stale,stale', ['s-alpha', 'S-Gamma']],
    ['state=IS_NONE_OF:active,potentially-stale', ['s-beta']],
  ])('%s', async (query, expected) => {
    expect(await names(query)).toEqual(expected);
  });
});

describe('GET /api/admin/search/features: tag and segment operators', () => {
  it.each([
    ['INCLUDE:simple:alpha-tag', ['s-alpha']],
    ['INCLUDE_ANY_OF:simple:alpha-tag,simple:beta-tag', ['s-alpha', 's-beta']],
    ['DO_NOT_INCLUDE:simple:alpha-tag', ['s-beta', 'S-Gamma', 's-epsilon']],
    ['EXCLUDE_IF_ANY_OF:simple:alpha-tag,simple:beta-tag', ['S-Gamma', 's-epsilon']],
    ['INCLUDE_ALL_OF:simple:alpha-tag,team:core', ['s-alpha']],
    ['INCLUDE_ALL_OF:simple:alpha-tag,simple:beta-tag', []],
    ['EXCLUDE_ALL:simple:alpha-tag,team:core', ['s-beta', 'S-Gamma', 's-epsilon']],
    ['EXCLUDE_ALL:simple:alpha-tag,simple:beta-tag', ALL_ACTIVE],
    ['INCLUDE: simple : alpha-tag ', ['s-alpha']],
    ['INCLUDE:SIMPLE:ALPHA-TAG', []],
  ])('tag=%s', async (filter, expected) => {
    const body = await search(`tag=${encodeURIComponent(filter)}`);
    expect(body.features.map((feature) => feature.name)).toEqual(expected);
    expect(body.total).toBe(expected.length);
  });

  it('keeps every tag of a feature found by a tag filter', async () => {
    const [alpha] = (await search('tag=INCLUDE:team:core')).features;
    expect(alpha!.tags.map((tag: { value: string }) => tag.value)).toEqual(['alpha-tag', 'core']);
  });

  it.each([
    ['INCLUDE:seg-one', ['s-alpha']],
    ['INCLUDE_ANY_OF:seg-one,seg-two', ['s-alpha', 's-epsilon']],
    ['DO_NOT_INCLUDE:seg-one', ['s-beta', 'S-Gamma', 's-epsilon']],
    ['EXCLUDE_IF_ANY_OF:seg-one,seg-two', ['s-beta', 'S-Gamma']],
    ['INCLUDE_ALL_OF:seg-one,seg-two', []],
    ['INCLUDE_ALL_OF:seg-two', ['s-epsilon']],
    ['EXCLUDE_ALL:seg-one,seg-two', ALL_ACTIVE],
    ['EXCLUDE_ALL:seg-two', ['s-alpha', 's-beta', 'S-Gamma']],
  ])('segment=%s', async (filter, expected) => {
    expect(await names(`segment=${encodeURIComponent(filter)}`)).toEqual(expected);
  });
});

describe('GET /api/admin/search/features: status, dates, favourites, archived, lifecycle', () => {
  it.each([
    ['status=development:enabled', ['s-alpha']],
    ['status=development:disabled', ['s-beta', 's-epsilon']],
    ['status[]=production:enabled', ['s-beta']],
    ['status=development:enabled&status=production:enabled', ['s-alpha', 's-beta']],
    ['status=production:disabled', ['s-alpha', 'S-Gamma', 's-epsilon']],
    ['status=default:enabled', []],
    ['status=development:on&status=nocolon', ALL_ACTIVE],
  ])('%s', async (query, expected) => {
    const body = await search(query);
    expect(body.features.map((feature) => feature.name)).toEqual(expected);
    expect(body.total).toBe(expected.length);
  });

  it('keeps every environment of a feature found by a status filter', async () => {
    const [alpha] = (await search('status=development:enabled')).features;
    expect(alpha!.environments.map((environment: { name: string }) => environment.name)).toEqual(['development', 'production']);
  });

  it.each([
    ['createdAt=IS_BEFORE:2026-01-03', ['s-alpha', 's-beta']],
    ['createdAt=IS_ON_OR_AFTER:2026-01-03', ['S-Gamma', 's-epsilon']],
    ['lastSeenAt=IS_ON_OR_AFTER:2026-02-01', ['s-alpha']],
    ['lastSeenAt=IS_BEFORE:2026-02-01', []],
    ['lastSeenAt=IS_BEFORE:2026-02-02', ['s-alpha']],
    ['favorite=IS:true', ['S-Gamma']],
    ['favorite=IS:false', ['s-alpha', 's-beta', 's-epsilon']],
    ['favorite=IS_ANY_OF:false', ['s-alpha', 's-beta', 's-epsilon']],
    ['favorite=IS_ANY_OF:true,false', ALL_ACTIVE],
  ])('%s', async (query, expected) => {
    const body = await search(query);
    expect(body.features.map((feature) => feature.name)).toEqual(expected);
    expect(body.total).toBe(expected.length);
  });

  it('excludes archived features unless archived=IS:true, which returns only them', async () => {
    expect(await names('archived=IS:false')).toEqual(ALL_ACTIVE);
    const body = await search('archived=IS:true');
    expect(body.total).toBe(1);
    expect(body.features[0]).toMatchObject({
      name: 's-delta',
      archivedAt: expect.stringMatching(/Z$/),
      lifecycle: { stage: 'archived', status: null },
    });
  });

  it.each([
    ['lifecycle=IS:initial', ['s-alpha', 'S-Gamma', 's-epsilon']],
    ['lifecycle=IS:completed', ['s-beta']],
    ['lifecycle=IS_NOT:initial', ['s-beta']],
    ['lifecycle=IS_ANY_OF:initial,archived', ['s-alpha', 'S-Gamma', 's-delta', 's-epsilon']],
    ['lifecycle=IS:archived', ['s-delta']],
    ['lifecycle=IS_NONE_OF:archived', ALL_ACTIVE],
    ['lifecycle=IS:live', []],
    ['archived=IS:true&lifecycle=IS:live', []],
    ['archived=IS:true&lifecycle=IS:archived', ['s-delta']],
    ['archived=IS:true&lifecycle=IS_NOT:initial', ['s-delta']],
  ])('%s', async (query, expected) => {
    const body = await search(query);
    expect(body.features.map((feature) => feature.name)).toEqual(expected);
    expect(body.total).toBe(expected.length);
  });
});

describe('GET /api/admin/search/features: sorting', () => {
  it.each([
    ['', ALL_ACTIVE],
    ['sortBy=createdAt&sortOrder=desc', ['s-epsilon', 'S-Gamma', 's-beta', 's-alpha']],
    ['sortBy=bogus', ALL_ACTIVE],
    // Byte order, as Unleash's C-collated database: upper case sorts first.
    ['sortBy=name', ['S-Gamma', 's-alpha', 's-beta', 's-epsilon']],
    ['sortBy=name&sortOrder=desc', ['s-epsilon', 's-beta', 's-alpha', 'S-Gamma']],
    // Ties (release x2) fall back to creation time ascending, whatever the order.
    ['sortBy=type', ['s-beta', 'S-Gamma', 's-alpha', 's-epsilon']],
    ['sortBy=type&sortOrder=desc', ['s-alpha', 's-epsilon', 'S-Gamma', 's-beta']],
    ['sortBy=stale', ['s-alpha', 'S-Gamma', 's-epsilon', 's-beta']],
    ['sortBy=stale&sortOrder=desc', ['s-beta', 's-alpha', 'S-Gamma', 's-epsilon']],
    ['sortBy=project&sortOrder=desc', ['S-Gamma', 's-alpha', 's-beta', 's-epsilon']],
    // Disabled, then enabled, then no such environment (NULLs last in both directions).
    ['sortBy=environment:development', ['s-beta', 's-epsilon', 's-alpha', 'S-Gamma']],
    ['sortBy=environment:development&sortOrder=desc', ['s-alpha', 's-beta', 's-epsilon', 'S-Gamma']],
    ['sortBy=lastSeenAt', ['s-alpha', 's-beta', 'S-Gamma', 's-epsilon']],
    ['sortBy=lastSeenAt&sortOrder=desc', ['s-alpha', 's-beta', 'S-Gamma', 's-epsilon']],
    ['favoritesFirst=true', ['S-Gamma', 's-alpha', 's-beta', 's-epsilon']],
    ['favoritesFirst=true&sortBy=name&sortOrder=desc', ['S-Gamma', 's-epsilon', 's-beta', 's-alpha']],
    ['favoritesFirst=yes', ALL_ACTIVE],
    ['favoritesFirst=true&sortOrder=desc', ['S-Gamma', 's-epsilon', 's-beta', 's-alpha']],
    ['favoritesFirst=true&limit=1', ['S-Gamma']],
    ['favoritesFirst=true&limit=2&offset=1', ['s-alpha', 's-beta']],
    ['favoritesFirst=true&offset=3', ['s-epsilon']],
    ['favoritesFirst=true&project=IS:default', ['s-alpha', 's-beta', 's-epsilon']],
    ['favoritesFirst=true&sortBy=environment:development', ['S-Gamma', 's-beta', 's-epsilon', 's-alpha']],
    ['favoritesFirst=true&query=s-&sortBy=type&sortOrder=desc', ['S-Gamma', 's-alpha', 's-epsilon', 's-beta']],
  ])('%s', async (query, expected) => {
    expect(await names(query)).toEqual(expected);
  });
});

describe('GET /api/admin/search/features: paging', () => {
  it.each([
    ['limit=2', ['s-alpha', 's-beta']],
    ['limit=2&offset=1', ['s-beta', 'S-Gamma']],
    ['limit=2&offset=3', ['s-epsilon']],
    ['offset=-5', ALL_ACTIVE],
    ['limit=0', ALL_ACTIVE],
    ['limit=101', ALL_ACTIVE],
    ['limit=-1', ALL_ACTIVE],
  ])('%s keeps total at the number of matches', async (query, expected) => {
    const body = await search(query);
    expect(body.features.map((feature) => feature.name)).toEqual(expected);
    expect(body.total).toBe(4);
  });

  it.each([
    ['sortBy=environment:development&limit=2&offset=1', ['s-epsilon', 's-alpha']],
    ['sortBy=environment:development&offset=3', ['S-Gamma']],
    ['sortBy=environment:development&sortOrder=desc&limit=2', ['s-alpha', 's-beta']],
    ['sortBy=environment:development&limit=3', ['s-beta', 's-epsilon', 's-alpha']],
    ['sortBy=environment:development&project=IS:search-b', ['S-Gamma']],
  ])('%s pages across the sort groups', async (query, expected) => {
    const body = await search(query);
    expect(body.features.map((feature) => feature.name)).toEqual(expected);
  });

  it('reports the real total when the page is past the end', async () => {
    expect(await search('offset=10')).toEqual({ features: [], total: 4 });
    expect(await search('offset=10&type=IS:release')).toEqual({ features: [], total: 2 });
    expect(await search('offset=10&query=s-')).toEqual({ features: [], total: 4 });
    expect(await search('offset=10&tag=INCLUDE:simple:alpha-tag')).toEqual({ features: [], total: 1 });
    expect(await search('offset=10&favoritesFirst=true')).toEqual({ features: [], total: 4 });
  });

  it('counts every match of a text query, not just the page', async () => {
    const body = await search('query=s-&limit=1&offset=1&sortBy=name');
    expect(body.features.map((feature) => feature.name)).toEqual(['s-alpha']);
    expect(body.total).toBe(4);
  });

  it('counts matches of set filters (status, tag, segment, favourite) with other filters applied', async () => {
    expect((await search('status=production:disabled&type=IS:release&limit=1')).total).toBe(2);
    expect((await search('tag=INCLUDE_ANY_OF:simple:alpha-tag,simple:beta-tag&state=IS:stale')).total).toBe(1);
    expect((await search('segment=INCLUDE_ANY_OF:seg-one,seg-two&query=epsilon')).total).toBe(1);
    expect((await search('favorite=IS:true&project=IS:default')).total).toBe(0);
    expect((await search('status=development:enabled&status=production:enabled&tag=INCLUDE:simple:beta-tag')).total).toBe(1);
  });
});

describe('GET /api/admin/search/features: every plan of the page gives the same feature', () => {
  // Each search reads its page and what the page shows in one statement (details.ts
  // pageWithDetails); favourites-first and environment sorts plan the page as several walks
  // (query.ts walkedPage). The same feature must come out byte for byte the same (values,
  // types, key order) whichever plan found it, in the order worked out from the fixture.
  const byName = (features: Record<string, any>[]) => new Map(features.map((feature) => [feature.name, JSON.stringify(feature)]));
  it.each([
    ['', 'favoritesFirst=true', ['S-Gamma', 's-alpha', 's-beta', 's-epsilon']],
    ['query=s', 'sortBy=environment:production', ['s-alpha', 'S-Gamma', 's-epsilon', 's-beta']],
    ['query=s', 'sortBy=environment:production&sortOrder=desc&favoritesFirst=true', ['S-Gamma', 's-beta', 's-alpha', 's-epsilon']],
    ['archived=IS:true', 'archived=IS:true&favoritesFirst=true', ['s-delta']],
    ['tag=INCLUDE:simple:alpha-tag', 'tag=INCLUDE:simple:alpha-tag&sortBy=environment:development', ['s-alpha']],
  ])('%s and %s', async (plain, walked, order) => {
    const one = await search(plain);
    const two = await search(walked);
    expect(two.features.map((feature) => feature.name)).toEqual(order);
    expect(one.total).toBe(two.total);
    expect(byName(one.features)).toEqual(byName(two.features));
  });
});

describe('GET /api/admin/search/features: 400 for every malformed parameter', () => {
  const OPERATOR = '^(IS|IS_NOT|IS_ANY_OF|IS_NONE_OF):(.*?)(,([a-zA-Z0-9_]+))*$';
  const TAG =
    '^(INCLUDE|DO_NOT_INCLUDE|INCLUDE_ALL_OF|INCLUDE_ANY_OF|EXCLUDE_IF_ANY_OF|EXCLUDE_ALL):(?:\\s*[^,:]+:[^,:]+\\s*)(?:,\\s*[^,:]+:[^,:]+\\s*)*$';
  const SEGMENT = '^(INCLUDE|DO_NOT_INCLUDE|INCLUDE_ALL_OF|INCLUDE_ANY_OF|EXCLUDE_IF_ANY_OF|EXCLUDE_ALL):(.*?)(,([a-zA-Z0-9_]+))*$';
  const DATE = '^(IS_BEFORE|IS_ON_OR_AFTER):\\d{4}-\\d{2}-\\d{2}$';
  const pattern = (name: string, regex: string, sent: string) =>
    `The \`/query/${name}\` property must match pattern "${regex}". You sent ${JSON.stringify(sent)}.`;

  it.each([
    ['project', 'default', pattern('project', OPERATOR, 'default')],
    ['project', 'LIKE:default', pattern('project', OPERATOR, 'LIKE:default')],
    ['type', 'release', pattern('type', OPERATOR, 'release')],
    ['state', 'stale', pattern('state', OPERATOR, 'stale')],
    ['lifecycle', 'initial', pattern('lifecycle', OPERATOR, 'initial')],
    ['createdBy', '-42', pattern('createdBy', OPERATOR, '-42')],
    ['createdBy', 'IS:abc', 'The `/query/createdBy` property must list numeric user ids. You sent "IS:abc".'],
    ['tag', 'INCLUDE:simple', pattern('tag', TAG, 'INCLUDE:simple')],
    ['tag', 'IS:simple:x', pattern('tag', TAG, 'IS:simple:x')],
    ['tag', 'EXCLUDE_ALL:simple,simple:jest', pattern('tag', TAG, 'EXCLUDE_ALL:simple,simple:jest')],
    ['tag', 'INCLUDE:simple:a:b', pattern('tag', TAG, 'INCLUDE:simple:a:b')],
    ['tag', 'INCLUDE:simple:', pattern('tag', TAG, 'INCLUDE:simple:')],
    ['segment', 'seg-one', pattern('segment', SEGMENT, 'seg-one')],
    ['segment', 'IS:seg-one', pattern('segment', SEGMENT, 'IS:seg-one')],
    ['createdAt', '2026-01-01', pattern('createdAt', DATE, '2026-01-01')],
    ['createdAt', 'IS:2026-01-01', pattern('createdAt', DATE, 'IS:2026-01-01')],
    ['createdAt', 'IS_BEFORE:2026-1-01', pattern('createdAt', DATE, 'IS_BEFORE:2026-1-01')],
    [
      'createdAt',
      'IS_BEFORE:2026-13-45',
      'The `/query/createdAt` property must contain a real calendar date. You sent "IS_BEFORE:2026-13-45".',
    ],
    ['lastSeenAt', 'IS_AFTER:2026-01-01', pattern('lastSeenAt', DATE, 'IS_AFTER:2026-01-01')],
    ['favorite', 'IS:yes', pattern('favorite', '^(IS|IS_ANY_OF):(true|false)(,(true|false))*$', 'IS:yes')],
    ['favorite', 'IS_NOT:true', pattern('favorite', '^(IS|IS_ANY_OF):(true|false)(,(true|false))*$', 'IS_NOT:true')],
    ['archived', 'true', pattern('archived', '^IS:(true|false)$', 'true')],
    ['sortOrder', 'DESC', 'The `/query/sortOrder` property must be equal to one of the allowed values: "asc", "desc". You sent "DESC".'],
    ['limit', '1.5', 'The `/query/limit` property must be integer. You sent "1.5".'],
    ['limit', 'Infinity', 'The `/query/limit` property must be integer. You sent "Infinity".'],
    ['offset', '9223372036854775808', 'The `/query/offset` property must be integer. You sent "9223372036854775808".'],
    ['offset', 'abc', 'The `/query/offset` property must be integer. You sent "abc".'],
  ])('%s=%s', async (name, value, message) => {
    const response = await call('GET', `/api/admin/search/features?${name}=${encodeURIComponent(value)}`);
    const error = await expectError(response, 400, 'ValidationError');
    expect(error.details).toEqual([{ path: `/query/${name}`, message }]);
  });

  it("takes every filter at once with 20 query terms (within D1's 100 bound parameters), and refuses 21 terms", async () => {
    const terms = Array.from({ length: 19 }, (_, i) => `nomatch${i}`)
      .concat('alpha')
      .join(',');
    const all = [
      `query=${terms}`,
      'project=IS_ANY_OF:default,search-b',
      'type=IS_NONE_OF:sunset,permission',
      'createdBy=IS_ANY_OF:-42,1',
      'state=IS_ANY_OF:active,potentially-stale',
      'lifecycle=IS_ANY_OF:initial,live',
      'tag=INCLUDE_ALL_OF:simple:alpha-tag,team:core',
      'segment=INCLUDE_ANY_OF:seg-one,seg-two',
      'status=development:enabled&status=production:disabled',
      'createdAt=IS_ON_OR_AFTER:2025-01-01',
      'lastSeenAt=IS_ON_OR_AFTER:2026-01-01',
      'favorite=IS:false',
      'favoritesFirst=true&sortBy=environment:production&sortOrder=desc&limit=10&offset=0',
    ].join('&');
    const body = await search(all);
    expect(body).toMatchObject({ total: 1, features: [{ name: 's-alpha' }] });
    // Without a text query, favourites first and environment sorts repeat the filters in each
    // walk (and the count): still within the limit, every walk at once included.
    const withoutQuery = all.replace(`query=${terms}&`, '');
    for (const query of [
      withoutQuery,
      withoutQuery.replace('sortBy=environment:production', 'sortBy=createdAt'),
      withoutQuery.replace('favoritesFirst=true&', ''),
    ]) {
      expect(await search(query)).toMatchObject({ total: 1, features: [{ name: 's-alpha' }] });
    }
    const error = await expectError(await call('GET', `/api/admin/search/features?query=${terms},t21`), 400, 'ValidationError');
    expect(error.details[0]!.message).toMatch(/^The `\/query\/query` property must have at most 20 comma-separated terms\./);
  });

  it('rejects a repeated single-valued parameter', async () => {
    const error = await expectError(await call('GET', '/api/admin/search/features?query=a&query=b'), 400, 'ValidationError');
    expect(error.details).toEqual([{ path: '/query/query', message: 'The `/query/query` property must be string. You sent ["a","b"].' }]);
  });

  it('answers a huge backtracking-bait tag filter quickly, with 400 or 200, never 5xx', async () => {
    const bait = `INCLUDE:${'a:a,'.repeat(900)}a`;
    const started = Date.now();
    const response = await call('GET', `/api/admin/search/features?tag=${encodeURIComponent(bait)}`);
    expect(response.status).toBe(400);
    expect(Date.now() - started).toBeLessThan(5000);
    const long = await call('GET', `/api/admin/search/features?query=${'x'.repeat(5000)}`);
    await expectError(long, 400, 'ValidationError');
    const many = await call(
      'GET',
      `/api/admin/search/features?tag=${encodeURIComponent(`INCLUDE:${Array.from({ length: 300 }, (_, i) => `simple:t${i}`).join(',')}`)}`,
    );
    expect(many.status).toBe(200);
  });
});
