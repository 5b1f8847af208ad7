/**
 * `GET /api/frontend` reads a plain query straight from the raw URL (frontend-api/context.ts,
 * `plainQueryOf` and `contextFromPlainQuery`) instead of through URL and URLSearchParams. The
 * context it builds must be the one `contextFromQuery(new URL(url).searchParams)` builds, key
 * order included, for every query: seeded random queries over the characters that matter
 * (separators, `+`, percent sequences valid and not, UTF-8 valid and not, brackets, repeated
 * and known names, characters the URL parser encodes) are built both ways and compared.
 * Also: the response headers are made once per CORS case and copied into each Response, so
 * a Response must not share them with the next one.
 */
import { describe, expect, it } from 'vitest';
import type { Context } from '../src/sdk/evaluation/types';
import { contextFromPlainQuery, contextFromQuery, plainQueryOf } from '../src/sdk/frontend-api/context';
import { createToken, fetchWith, envWith } from './support/http';
import { seedFlag } from './support/sdk-seed';
import { seededRandom } from './support/random';

const NAMES = [
  'appName',
  'environment',
  'userId',
  'sessionId',
  'remoteAddress',
  'properties',
  'properties[region]',
  'properties%5Bregion%5D',
  'properties[]',
  'properties[a]]',
  'properties[[b]',
  'properties%5B%5D',
  'region',
  'user%49d',
  'session+Id',
  '__proto__',
  'constructor',
  'properties[__proto__]',
  '',
  'a+b',
  '%',
  '%zz',
  '%e2%82%ac',
  '%ED%A0%80',
  '%C3',
  'caf%C3%A9',
];
const VALUE_PARTS = [
  '',
  'x',
  '1',
  '+',
  '%20',
  '%2B',
  '%25',
  '%',
  '%4',
  '%e2%82%ac',
  '%ff',
  '%C3%A9',
  'a=b',
  '?',
  '/',
  '"',
  "'",
  '<',
  '#',
  ' ',
  'é',
  '\t',
];

function randomQuery(next: () => number): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const parts: string[] = [];
  const count = Math.floor(next() * 8);
  for (let i = 0; i < count; i++) {
    const roll = next();
    if (roll < 0.1) {
      parts.push('');
      continue;
    }
    const name = pick(NAMES);
    if (roll < 0.2) {
      parts.push(name);
      continue;
    }
    let value = '';
    const pieces = Math.floor(next() * 3);
    for (let k = 0; k < pieces; k++) value += pick(VALUE_PARTS);
    parts.push(`${name}=${value}`);
  }
  return parts.join('&');
}

/** The random session id differs between two builds: compare everything else. */
function comparable(context: Context, sessionGiven: boolean): string {
  return JSON.stringify(sessionGiven ? context : { ...context, sessionId: typeof context.sessionId });
}

describe('the frontend context from a raw query', () => {
  it('is the context URLSearchParams gives, for thousands of seeded queries', () => {
    const next = seededRandom(26);
    let fast = 0;
    for (let i = 0; i < 5000; i++) {
      const query = randomQuery(next);
      const href = `http://localhost/api/frontend${next() < 0.05 ? '' : '?'}${query}`;
      const url = new URL(href);
      const remoteAddress = next() < 0.5 ? '10.0.0.1' : null;
      const reference = contextFromQuery(url.searchParams, remoteAddress);
      const referenceGiven = Boolean(url.searchParams.get('sessionId'));
      const plain = plainQueryOf(href);
      if (plain === null) continue;
      // A plain query is what the URL parser keeps: the memo and answer keys name it so.
      expect(plain === '' ? '' : `?${plain}`, href).toBe(url.search);
      const built = contextFromPlainQuery(plain, remoteAddress);
      if (built === null) continue;
      fast++;
      expect(built.sessionGiven, href).toBe(referenceGiven);
      expect(comparable(built.context, built.sessionGiven), href).toBe(comparable(reference, referenceGiven));
    }
    // A third or so take the raw path (the generator favours awkward characters); the rest are left to URLSearchParams.
    expect(fast).toBeGreaterThan(1000);
  });

  it('leaves queries the URL parser would change, and components decodeURIComponent refuses, to URLSearchParams', () => {
    for (const href of [
      'http://h/api/frontend?a=%22',
      'http://h/api/frontend?a="',
      "http://h/api/frontend?a='",
      'http://h/api/frontend?a=1#x',
    ])
      expect(plainQueryOf(href) === null, href).toBe(href.includes('"') || href.includes("'") || href.includes('#'));
    expect(plainQueryOf('http://h/api/frontend')).toBe('');
    expect(contextFromPlainQuery('userId=%zz', null)).toBeNull();
    expect(contextFromPlainQuery('userId=%ff', null)).toBeNull();
    expect(contextFromPlainQuery('userId=%C3%A9&properties%5Bregion%5D=eu+west', null)?.context).toEqual({
      appName: 'frontend-api',
      environment: 'default',
      userId: 'é',
      sessionId: expect.any(String),
      properties: { region: 'eu west' },
    });
  });

  it('keeps at most 100 properties, loose ones first, the first value of a name winning', () => {
    const loose = Array.from({ length: 120 }, (_, i) => `p${i}=${i}`).join('&');
    const query = `${loose}&properties[p0]=override&properties[new]=late&userId=1&userId=2`;
    const reference = contextFromQuery(new URLSearchParams(query), null);
    const built = contextFromPlainQuery(query, null)!;
    expect(comparable(built.context, false)).toBe(comparable(reference, false));
    expect(Object.keys(built.context.properties!)).toHaveLength(100);
    // Past the bound even a name already held keeps its value (as contextFromQuery does).
    expect(built.context.properties!.p0).toBe('0');
    expect(built.context.properties!.new).toBeUndefined();
    expect(built.context.userId).toBe('1');
  });
});

describe('frontend answer headers', () => {
  it('are not shared between responses', async () => {
    await seedFlag({ name: 'query.headers', environments: { development: { enabled: true } } });
    const key = await createToken({ tokenName: 'query-headers', type: 'frontend', environment: 'development' });
    const slowTick = envWith({ SDK_REVISION_CHECK_MS: '60000' });
    // Each user a new context with the same answer: from the second on, a body the plan keeps
    // for its answer vector, with its headers kept too.
    const get = (user: number) => fetchWith(slowTick, 'GET', `/api/frontend?sessionId=1&userId=${user}`, { authorization: key });
    const first = await get(0);
    const expected = [...first.headers];
    expect(first.headers.get('etag')).toMatch(/^W\//);
    first.headers.set('x-changed', 'yes');
    first.headers.delete('etag');
    for (let user = 1; user <= 5; user++) {
      const again = await get(user);
      expect([...again.headers]).toEqual(expected);
      again.headers.set('x-changed', 'again');
      again.headers.delete('etag');
      // The 304 for that ETag too.
      const etag = new Headers(expected).get('etag')!;
      const notModified = await fetchWith(slowTick, 'GET', `/api/frontend?sessionId=1&userId=${user + 100}`, {
        authorization: key,
        'if-none-match': etag,
      });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.get('etag')).toBe(etag);
      notModified.headers.delete('etag');
    }
  });
});
