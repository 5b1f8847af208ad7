/**
 * Every route in the route table, sent the classes of hostile input that broke the real
 * Unleash (DESIGN.md, "Hostile input"): none may answer 5xx, and the Worker keeps answering.
 * The routes come from the router itself, so a new endpoint is covered without editing this.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { router } from '../src/app';
import { ADMIN_TOKEN, call, createToken, expectError } from './support/http';

const DEEP = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
const HOSTILE_VALUES: unknown[] = ['bad\ud800text', 'nul\u0000byte', 2 ** 63, 1.5, -1, null, [], {}, 'x'.repeat(20_000)];
const FIELDS = [
  'name',
  'type',
  'description',
  'tokenName',
  'username',
  'email',
  'rootRole',
  'roleId',
  'expiresAt',
  'enabled',
  'project',
  'projects',
  'environment',
  'permissions',
  'constraints',
  'parameters',
  'variants',
  'segments',
  'value',
  'values',
  'stale',
  'features',
  'feature',
  'tags',
  'tokens',
  'context',
  'appName',
  'instanceId',
  'bucket',
  'status',
  'password',
  'data',
  'weight',
  'id',
  'sortOrder',
  'op',
  'path',
];

/** Raw JSON bodies: each is one hostile shape. */
function hostileBodies(): string[] {
  const bodies = [
    DEEP,
    `{"name": ${DEEP}, "type": ${DEEP}}`,
    '{"__proto__": {"admin": true}, "constructor": {"prototype": {"x": 1}}, "toString": "x"}',
    '[]',
    'null',
    '"text"',
    '123456789012345678901234567890',
    '{"name": "a", "name": "b"}',
  ];
  for (const value of HOSTILE_VALUES) {
    bodies.push(JSON.stringify(Object.fromEntries(FIELDS.map((field) => [field, value]))));
  }
  // Shapes nested one level down, where item schemas live.
  bodies.push(
    JSON.stringify({
      project: 'default',
      environment: 'development',
      data: {
        features: [{ name: '__proto__' }],
        featureStrategies: [{ name: 'default', featureName: '__proto__', parameters: { __proto__: 'x' } }],
        tagTypes: [],
      },
    }),
  );
  bodies.push(
    JSON.stringify({
      constraints: [{ contextName: 'userId', operator: 'IN', values: [null, 2 ** 63, {}] }],
      parameters: { rollout: 2 ** 63 },
      variants: [{ name: 'v', weight: 2 ** 63 }],
    }),
  );
  return bodies;
}

const PARAM_VALUES = [
  'default',
  '__proto__',
  'constructor',
  '%00',
  '2147483648',
  '99999999999999999999',
  '%ZZ',
  '..',
  '%F0%9F%98%80',
  'x'.repeat(3000),
];
const QUERIES = [
  '',
  '?limit=1.5&offset=Infinity&sortBy=__proto__&sortOrder=asc',
  `?query=%00&tag=INCLUDE:${'a:'.repeat(5000)}b&project=IS:${'x,'.repeat(3000)}`,
  '?status=development:enabled&status[]=__proto__:enabled&createdAt=IS_BEFORE:2026-13-45&lastSeenAt=IS_ON_OR_AFTER:9999-99-99',
  '?createdBy=IS:abc&favorite=IS:maybe&lifecycle=IS:%00&segment=INCLUDE:%ud800&namePrefix=%ZZ&environment=__proto__',
];

interface Route {
  method: string;
  path: string;
}

function routes(): Route[] {
  const table = (router as unknown as { routes: [string, RegExp, unknown[], string][] }).routes;
  return table.filter(([method, , , path]) => method !== 'ALL' && path !== '*').map(([method, , , path]) => ({ method, path }));
}

function fill(path: string, value: string): string {
  return path.replace(/:(\w+)/g, (_, name: string) => {
    if (value !== 'default') return value;
    if (name === 'environment') return 'development';
    if (name === 'featureName' || name === 'parent') return 'hostile-flag';
    return 'default';
  });
}

function tokenFor(path: string, keys: { client: string; frontend: string }): string {
  if (path.startsWith('/api/client')) return keys.client;
  if (path.startsWith('/api/frontend')) return keys.frontend;
  return ADMIN_TOKEN;
}

// Every route, in shards of this many: each shard is a test of its own, so the time limit
// holds as the service grows.
const SHARD_SIZE = 40;

describe('hostile input on every route', () => {
  const all = routes();
  let keys: { client: string; frontend: string };
  let sent = 0;

  beforeAll(async () => {
    keys = {
      client: await createToken({ tokenName: 'hostile-client', type: 'client', environment: 'development' }),
      frontend: await createToken({ tokenName: 'hostile-frontend', type: 'frontend', environment: 'development' }),
    };
    await call('POST', '/api/admin/projects/default/features', { body: { name: 'hostile-flag' } });
  });

  it('covers every route the router has', () => {
    expect(all.length).toBeGreaterThan(60);
  });

  for (let start = 0; start < all.length; start += SHARD_SIZE) {
    const shard = all.slice(start, start + SHARD_SIZE);
    it(`never answers 5xx, and the Worker keeps answering: routes ${start + 1}-${start + shard.length} of ${all.length}`, async () => {
      const failures: string[] = [];
      const bodies = hostileBodies();
      for (const route of shard) {
        const hasBody = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
        for (const value of route.path.includes(':') ? PARAM_VALUES : ['default']) {
          const path = fill(route.path, value);
          const token = tokenFor(route.path, keys);
          const attempts = hasBody
            ? bodies.map((rawBody) => ({ rawBody, query: '' }))
            : QUERIES.map((query) => ({ rawBody: undefined, query }));
          for (const { rawBody, query } of attempts) {
            const response = await call(route.method, `${path}${query}`, { token, rawBody });
            sent++;
            // A server-sent event stream (/api/client/streaming) never ends by itself: close it.
            if (response.headers.get('content-type') === 'text/event-stream') await response.body?.cancel();
            else await response.arrayBuffer();
            if (response.status >= 500) {
              failures.push(
                `${route.method} ${path.slice(0, 120)}${query.slice(0, 60)} ${rawBody?.slice(0, 60) ?? ''} -> ${response.status}`,
              );
            }
          }
        }
      }
      expect(failures).toEqual([]);
      expect((await call('GET', '/health', { token: null })).status).toBe(200);
    }, 300_000);
  }

  it('sent over a thousand hostile requests in all', () => {
    expect(sent).toBeGreaterThan(1000);
  });
});

describe('a malformed percent-escape in a path parameter', () => {
  it("answers 400 ValidationError naming the parameter, in Unleash's shape (src/http/params.ts pathParam)", async () => {
    const body = await expectError(await call('GET', '/api/admin/projects/%ZZ/overview'), 400, 'ValidationError');
    expect(body.details).toEqual([
      { path: '/params/projectId', message: 'The `/params/projectId` property is not a valid percent-encoded string.' },
    ]);
  });
});
