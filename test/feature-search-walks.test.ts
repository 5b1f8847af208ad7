import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, call } from './support/http';
import { adminOk } from './support/admin';

/**
 * Favourites first and environment sorts read their page as several walks in one statement
 * (query.ts `walkedPage`). Every answer here is checked against the order worked out in this
 * file from the flags it made: 26 flags in two projects (walk-b has no development
 * environment), created two to a day (ties fall back to the name), some archived, stale,
 * enabled per environment, favourites of the token's user (-42) and of another user (1).
 */
interface Flag {
  name: string;
  project: string;
  type: string;
  created: string;
  /** Enabled in the environment; null where the flag has no row for it. */
  development: boolean | null;
  production: boolean | null;
  archived: boolean;
  stale: boolean;
  favourite: boolean;
}

const TYPES = ['release', 'experiment', 'operational'];
const FAVOURITES = new Set([2, 4, 7, 11, 18, 20]);
const OTHER_USERS_FAVOURITES = [0, 3, 5, 13];

const FLAGS: Flag[] = Array.from({ length: 26 }, (_, i) => {
  const project = i % 5 === 4 ? 'walk-b' : 'walk-a';
  return {
    name: `walk-${String(i).padStart(2, '0')}`,
    project,
    type: TYPES[i % 3]!,
    // 13 days, two flags on each: i and i + 13.
    created: `2026-03-${String(1 + ((i * 7) % 13)).padStart(2, '0')}T00:00:00.000Z`,
    development: project === 'walk-b' ? null : i % 3 === 0,
    production: i % 4 === 1,
    archived: i % 8 === 7,
    stale: i % 6 === 5,
    favourite: FAVOURITES.has(i),
  };
});

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byCreation = (a: Flag, b: Flag) => compare(a.created, b.created) || compare(a.name, b.name);

/** The order Unleash's search gives (unleash-behaviour §5.5), written out plainly. */
function comparator(sortBy: string, descending: boolean, favouritesFirst: boolean) {
  const direction = descending ? -1 : 1;
  const main = (a: Flag, b: Flag): number => {
    if (sortBy === 'name') return direction * compare(a.name, b.name);
    if (sortBy === 'type') return direction * compare(a.type, b.type) || byCreation(a, b);
    if (sortBy.startsWith('environment:')) {
      // Disabled, enabled (enabled first when descending), then flags without the environment.
      const environment = sortBy.slice('environment:'.length);
      const rank = (flag: Flag) => {
        const enabled = environment === 'development' || environment === 'production' ? flag[environment] : null;
        return enabled === null ? 2 : enabled === descending ? 0 : 1;
      };
      return rank(a) - rank(b) || byCreation(a, b);
    }
    return direction * compare(a.created, b.created) || compare(a.name, b.name);
  };
  return (a: Flag, b: Flag) => (favouritesFirst ? Number(b.favourite) - Number(a.favourite) : 0) || main(a, b);
}

const FILTERS: [string, (flag: Flag) => boolean][] = [
  ['', (flag) => !flag.archived],
  [
    'project=IS:walk-a&type=IS_ANY_OF:release,experiment',
    (flag) => !flag.archived && flag.project === 'walk-a' && flag.type !== 'operational',
  ],
  ['archived=IS:true', (flag) => flag.archived],
  ['state=IS:active&project=IS_ANY_OF:walk-a,walk-b', (flag) => !flag.archived && !flag.stale],
  ['favorite=IS:true', (flag) => !flag.archived && flag.favourite],
  ['query=walk-1', (flag) => !flag.archived && flag.name.startsWith('walk-1')],
];
/** [limit, offset]: the first page, pages across the favourites' end and the groups', past the end. */
const PAGES: [number, number][] = [
  [5, 0],
  [4, 3],
  [6, 9],
  [50, 30],
];

async function search(query: string) {
  const response = await call('GET', `/api/admin/search/features?${query}`);
  if (response.status !== 200) throw new Error(`search ${query}: ${response.status} ${await response.text()}`);
  return bodyOf<{ features: Record<string, any>[]; total: number }>(response);
}

beforeAll(async () => {
  await adminOk('POST', '/api/admin/projects', { id: 'walk-a', name: 'Walk A', environments: ['development', 'production'] });
  await adminOk('POST', '/api/admin/projects', { id: 'walk-b', name: 'Walk B', environments: ['production'] });
  for (const flag of FLAGS) {
    const path = `/api/admin/projects/${flag.project}/features`;
    await adminOk('POST', path, { name: flag.name, type: flag.type });
    if (flag.development) await adminOk('POST', `${path}/${flag.name}/environments/development/on`);
    if (flag.production) await adminOk('POST', `${path}/${flag.name}/environments/production/on`);
  }
  for (const project of ['walk-a', 'walk-b']) {
    const stale = FLAGS.filter((flag) => flag.project === project && flag.stale).map((flag) => flag.name);
    if (stale.length > 0) await adminOk('POST', `/api/admin/projects/${project}/stale`, { features: stale, stale: true });
  }
  for (const flag of FLAGS.filter((flag) => flag.archived)) {
    await adminOk('DELETE', `/api/admin/projects/${flag.project}/features/${flag.name}`);
  }
  await env.DB.batch([
    ...FLAGS.map((flag) => env.DB.prepare('UPDATE features SET created_at = ? WHERE name = ?').bind(flag.created, flag.name)),
    ...FLAGS.filter((flag) => flag.favourite).map((flag) =>
      env.DB.prepare('INSERT INTO favorite_features (feature, user_id) VALUES (?, -42)').bind(flag.name),
    ),
    ...OTHER_USERS_FAVOURITES.map((i) =>
      env.DB.prepare('INSERT INTO favorite_features (feature, user_id) VALUES (?, 1)').bind(FLAGS[i]!.name),
    ),
  ]);
});

describe('GET /api/admin/search/features: favourites first and environment sorts, against the order worked out here', () => {
  it('made the flags the order is worked out from', async () => {
    const body = await search('limit=100&project=IS_ANY_OF:walk-a,walk-b');
    expect(body.total).toBe(FLAGS.filter((flag) => !flag.archived).length);
    for (const feature of body.features) {
      const flag = FLAGS.find((candidate) => candidate.name === feature.name)!;
      const enabled = (name: string) =>
        feature.environments.find((environment: { name: string }) => environment.name === name)?.enabled ?? null;
      expect({ ...feature, development: enabled('development'), production: enabled('production') }).toMatchObject({
        project: flag.project,
        type: flag.type,
        createdAt: flag.created,
        stale: flag.stale,
        favorite: flag.favourite,
        development: flag.development,
        production: flag.production,
      });
    }
  });

  it.each([
    ['createdAt', true],
    ['name', true],
    ['type', true],
    ['environment:development', true],
    ['environment:production', true],
    ['environment:nowhere', true],
    ['environment:development', false],
    ['environment:production', false],
    ['environment:nowhere', false],
  ] as const)('sortBy=%s favoritesFirst=%s: every filter, direction and page', async (sortBy, favouritesFirst) => {
    for (const descending of [false, true]) {
      for (const [filter, keep] of FILTERS) {
        const matching = FLAGS.filter(keep).sort(comparator(sortBy, descending, favouritesFirst));
        for (const [limit, offset] of PAGES) {
          const query = [
            filter,
            `sortBy=${sortBy}`,
            `sortOrder=${descending ? 'desc' : 'asc'}`,
            `favoritesFirst=${favouritesFirst}`,
            `limit=${limit}`,
            `offset=${offset}`,
          ]
            .filter(Boolean)
            .join('&');
          const body = await search(query);
          expect({ query, names: body.features.map((feature) => feature.name), total: body.total }).toEqual({
            query,
            names: matching.slice(offset, offset + limit).map((flag) => flag.name),
            total: matching.length,
          });
        }
      }
    }
  });

  it('gives a flag the same answer, byte for byte, whichever way its page was read', async () => {
    const everything = new Map(
      (await search('limit=100&project=IS_ANY_OF:walk-a,walk-b')).features.map((feature) => [feature.name, JSON.stringify(feature)]),
    );
    for (const query of [
      'favoritesFirst=true',
      'sortBy=environment:development&sortOrder=desc',
      'favoritesFirst=true&sortBy=environment:production',
    ]) {
      const { features } = await search(`${query}&limit=100`);
      expect(features.length).toBe(everything.size);
      for (const feature of features) expect(JSON.stringify(feature)).toBe(everything.get(feature.name));
    }
  });
});
