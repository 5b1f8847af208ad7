/**
 * The OpenAPI document: served where Unleash serves it, listing exactly the router's routes,
 * and describing what the six core admin operations really answer (each answer received here is
 * validated against the document's schema for its status). Its validity as OpenAPI 3.1 is
 * checked in Node (test/openapi.node.test.ts), where the validator runs.
 */
import { Validator } from '@cfworker/json-schema';
import { describe, expect, it } from 'vitest';
import { router } from '../src/app';
import { ROUTES } from '../src/routes';
import { bodyOf, call, expectError } from './support/http';

type Json = Record<string, any>;

async function fetchDocument(): Promise<Json> {
  const response = await call('GET', '/docs/openapi.json', { token: null });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('application/json');
  return bodyOf(response);
}

/** Replaces `#/components/...` references by what they name, so the schema stands alone. */
function resolveRefs(schema: unknown, document: Json): unknown {
  if (Array.isArray(schema)) return schema.map((item) => resolveRefs(item, document));
  if (schema === null || typeof schema !== 'object') return schema;
  const ref = (schema as Json).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    const target = ref
      .slice(2)
      .split('/')
      .reduce((node: Json, key) => node[key], document);
    return resolveRefs(target, document);
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, resolveRefs(value, document)]));
}

/**
 * Checks a received answer against the document: its status must be documented, and its body
 * (if the document gives a schema for it) must validate. Returns the parsed body.
 */
async function expectDocumented(document: Json, method: string, path: string, response: Response): Promise<unknown> {
  const operation = document.paths[path]?.[method.toLowerCase()];
  expect(operation, `${method} ${path} is documented`).toBeDefined();
  const documented = operation.responses[String(response.status)];
  expect(documented, `${method} ${path} documents status ${response.status}`).toBeDefined();
  const text = await response.text();
  const schema = documented.content?.['application/json']?.schema;
  if (!schema) {
    expect(text, `${method} ${path} ${response.status} has no body`).toBe('');
    return undefined;
  }
  const body = JSON.parse(text);
  const result = new Validator(resolveRefs(schema, document) as Json, '2020-12', false).validate(body);
  expect(
    result.errors.map((error) => `${error.instanceLocation}: ${error.error}`),
    `${method} ${path} ${response.status}`,
  ).toEqual([]);
  return body;
}

describe('GET /docs/openapi.json', () => {
  it('is public, OpenAPI 3.1, and lists every route of the router and nothing else', async () => {
    const document = await fetchDocument();
    expect(document.openapi).toBe('3.1.0');
    const fromRouter = new Set(
      router.routes
        .filter(([method, , , path]) => method !== 'ALL' && path !== undefined && !path.includes('*'))
        .map(([method, , , path]) => `${method} ${path!.replace(/:(\w+)/g, '{$1}')}`),
    );
    const fromDocument = new Set(
      Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
      ),
    );
    expect([...fromDocument].sort()).toEqual([...fromRouter].sort());
    // Catch-alls are not operations; everything else, also routes added by later work, is.
    expect(fromRouter.size).toBeGreaterThan(80);
    expect(fromDocument.has('GET /api/admin/user-admin/{id}')).toBe(true);
  });

  it('gives every operation a unique operationId, a tag and a plain summary', () => {
    const ids = ROUTES.map((declared) => declared.operationId);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    for (const declared of ROUTES) {
      expect(declared.tag, `${declared.method} ${declared.path}`).not.toBe('');
      expect(declared.summary, `${declared.method} ${declared.path}`).toMatch(/^[A-Z][^]{8,}$/);
      expect(declared.summary).not.toMatch(/seed|operation \d|issue/i);
    }
  });

  it("passes Unleash 6.10.1's document tests: root tags from its known list, and a summary, a description and an answer with a body schema on every operation", async () => {
    const document = await fetchDocument();
    // 6.10.1's approved root tags (src/lib/openapi/util/openapi-tags.ts).
    const known = [
      'Addons',
      'Admin UI',
      'API tokens',
      'Archive',
      'Auth',
      'Banners',
      'Change Requests',
      'Client',
      'Context',
      'Dependencies',
      'Edge',
      'Environments',
      'Events',
      'Feature Types',
      'Features',
      'Frontend API',
      'Import/Export',
      'Instance Admin',
      'Maintenance',
      'Metrics',
      'Notifications',
      'Operational',
      'Personal access tokens',
      'Playground',
      'Projects',
      'Public signup tokens',
      'Search',
      'Segments',
      'Service Accounts',
      'Strategies',
      'Tags',
      'Telemetry',
      'Unstable',
      'Users',
      // Operations Unleash 8 added keep 8.2.0's tag (its /docs/openapi.json).
      'Unknown Flags',
    ];
    const tags = (document.tags as { name: string }[]).map((tag) => tag.name);
    expect(tags.filter((tag) => !known.includes(tag))).toEqual([]);
    const anomalies: string[] = [];
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        if (!operation.summary || !operation.description) anomalies.push(`${where}: summary or description`);
        if (!(operation.tags as string[]).every((tag) => tags.includes(tag))) anomalies.push(`${where}: tag not at the root`);
        const declared = Object.entries(operation.responses as Record<string, Json>).filter(([status]) => Number(status) < 500);
        if (declared.length === 0) anomalies.push(`${where}: no answer besides 500`);
      }
    }
    expect(anomalies).toEqual([]);
    // The frontend paths Unleash lists but does not serve document their 405 and its body.
    for (const path of ['/api/frontend/client/features', '/api/frontend/health', '/api/frontend/internal-backstage/prometheus']) {
      const answer = document.paths[path].get.responses['405'];
      expect(Object.keys(answer.content['application/json'].schema.properties), path).toEqual(['id', 'name', 'message', 'details']);
      expect(answer.description).toContain('NotImplementedError');
    }
    // A description made from the declaration says who may call it and what it answers.
    expect(document.paths['/api/admin/tag-types'].get.description).toMatch(/^List tag types\. .*Answers 200/);
  });

  it('gives every non-public operation the API key scheme and its error bodies', async () => {
    const document = await fetchDocument();
    const search = document.paths['/api/admin/search/features'].get;
    expect(search.security).toEqual([{ apiKey: [] }]);
    expect(search.responses['401'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorBody' });
    expect(search.parameters.map((p: Json) => p.name)).toContain('tag');
    const validate = document.paths['/api/admin/roles/validate'].post;
    expect(validate.requestBody.content['application/json'].schema.required).toEqual(['name']);
    expect(validate['x-permission']).toEqual(['ADMIN']);
    expect(document.paths['/invite/{token}/validate'].get.security).toEqual([]);
  });

  it('serves a self-contained page listing the operations at /docs/openapi', async () => {
    const response = await call('GET', '/docs/openapi', { token: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await response.text();
    expect(html).toContain('<code>/api/admin/search/features</code>');
    expect(html).toContain('Import feature flags, with their strategies, tags and segments');
    expect(html).not.toMatch(/<script|https?:\/\/(?!localhost)/);
  });
});

describe('the core admin operations answer what the document says', () => {
  it('1. validate a role: 200 without a body, 400 with an error body', async () => {
    const document = await fetchDocument();
    const path = '/api/admin/roles/validate';
    await expectDocumented(
      document,
      'POST',
      path,
      await call('POST', path, { body: { name: 'Doc role', type: 'custom', permissions: [{ name: 'UPDATE_FEATURE' }] } }),
    );
    await expectDocumented(document, 'POST', path, await call('POST', path, { body: { type: 'root' } }));
  });

  it('2. get a user: 200 with the User, 404 with an error body', async () => {
    const document = await fetchDocument();
    const created = await bodyOf(
      await call('POST', '/api/admin/user-admin', { body: { email: 'doc-user@example.com', name: 'Doc', rootRole: 'Editor' } }),
    );
    const user = (await expectDocumented(
      document,
      'GET',
      '/api/admin/user-admin/{id}',
      await call('GET', `/api/admin/user-admin/${created.id}`),
    )) as Json;
    expect(user.email).toBe('doc-user@example.com');
    await expectDocumented(document, 'GET', '/api/admin/user-admin/{id}', await call('GET', '/api/admin/user-admin/99999'));
  });

  it('3. update a public signup token: 200 with the token (users included once someone signed up)', async () => {
    const document = await fetchDocument();
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await bodyOf(await call('POST', '/api/admin/invite-link/tokens', { body: { name: 'Doc invite', expiresAt } }));
    expect(
      (await call('POST', `/invite/${created.secret}/signup`, { token: null, body: { email: 'doc-invitee@example.com', name: 'Invitee' } }))
        .status,
    ).toBe(201);
    const path = '/api/admin/invite-link/tokens/{token}';
    const updated = (await expectDocumented(
      document,
      'PUT',
      path,
      await call('PUT', `/api/admin/invite-link/tokens/${created.secret}`, { body: { enabled: false } }),
    )) as Json;
    expect(updated.enabled).toBe(false);
    await expectDocumented(document, 'PUT', path, await call('PUT', `/api/admin/invite-link/tokens/${created.secret}`, { body: {} }));
  });

  it('4. create an API token: 201 with the token of every type, 401 and 415 with error bodies', async () => {
    const document = await fetchDocument();
    const path = '/api/admin/api-tokens';
    for (const body of [
      { tokenName: 'doc-client', type: 'client', environment: 'development', projects: ['default'] },
      { tokenName: 'doc-frontend', type: 'FRONTEND', expiresAt: '2030-01-01T00:00:00Z' },
      { tokenName: 'doc-admin', type: 'admin' },
    ]) {
      const response = await call('POST', path, { body });
      expect(response.headers.get('location')).toMatch(/^\/api\/admin\/api-tokens\/[0-9a-f-]{36}$/);
      await expectDocumented(document, 'POST', path, response);
    }
    await expectDocumented(document, 'POST', path, await call('POST', path, { token: 'nope', body: { tokenName: 'x', type: 'client' } }));
    await expectDocumented(document, 'POST', path, await call('POST', path, { rawBody: 'tokenName=x', contentType: 'text/plain' }));
  });

  it('5. search features: 200 with features and total, 400 for a bad filter', async () => {
    const document = await fetchDocument();
    await call('POST', '/api/admin/tag-types', { body: { name: 'doc-team' } });
    await call('POST', '/api/admin/projects/default/features', { body: { name: 'doc-searched', type: 'release', description: 'found' } });
    await call('POST', '/api/admin/features/doc-searched/tags', { body: { type: 'doc-team', value: 'payments' } });
    await call('POST', '/api/admin/projects/default/features/doc-searched/environments/development/on');
    await call('POST', '/api/admin/projects/default/features/doc-searched/favorites', { contentType: 'application/json' });
    const path = '/api/admin/search/features';
    const found = (await expectDocumented(
      document,
      'GET',
      path,
      await call('GET', `${path}?query=doc-searched&tag=INCLUDE:doc-team:payments`),
    )) as Json;
    expect(found.total).toBe(1);
    expect(found.features[0].tags).toEqual([{ value: 'payments', type: 'doc-team', color: null }]);
    await expectDocumented(document, 'GET', path, await call('GET', `${path}?project=NOPE:default`));
  });

  it('6. import features: 200 without a body, 202 with the job, 404 and 400 with error bodies', async () => {
    const document = await fetchDocument();
    const path = '/api/admin/features-batch/import';
    const body = (features: { name: string }[], project = 'default') => ({
      project,
      environment: 'development',
      data: { features, featureStrategies: [], tagTypes: [] },
    });
    await expectDocumented(document, 'POST', path, await call('POST', path, { body: body([{ name: 'doc-imported' }]) }));
    const many = Array.from({ length: 2001 }, (_, i) => ({ name: `doc-bulk-${i}` }));
    const queued = await call('POST', path, { body: body(many) });
    expect(queued.status).toBe(202);
    const job = (await expectDocumented(document, 'POST', path, queued)) as Json;
    await expectDocumented(
      document,
      'GET',
      '/api/admin/features-batch/import/jobs/{id}',
      await call('GET', `/api/admin/features-batch/import/jobs/${job.id}`),
    );
    await expectDocumented(document, 'POST', path, await call('POST', path, { body: body([{ name: 'doc-nowhere' }], 'no-such-project') }));
    await expectDocumented(document, 'POST', path, await call('POST', path, { body: { project: 'default' } }));
    await expectError(await call('POST', path, { body: { project: 'default' } }), 400, 'ValidationError');
  });
});
