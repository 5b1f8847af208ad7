import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { bodyOf, call, createToken, expectError, UUID } from './support/http';
import { CREATED_TOKEN_KEYS, TOKEN_EVENT_DATA_KEYS } from './support/api-tokens';
import { sha256Hex } from './support/crypto';
import { count } from './support/db';

const HEX56 = '[0-9a-f]{56}';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function createResponse(body: unknown) {
  return call('POST', '/api/admin/api-tokens', { body });
}

function tokenCount(): Promise<number> {
  return count('SELECT count(*) AS n FROM api_tokens');
}

beforeAll(async () => {
  // A second and third project, so multi-project tokens can be made.
  await env.DB.batch([env.DB.prepare("INSERT INTO projects (id, name) VALUES ('p2', 'Project 2'), ('p3', 'Project 3')")]);
});

describe('POST /api/admin/api-tokens', () => {
  it("creates a client token and answers 201 with the seed's API token, in order, and a location", async () => {
    const response = await createResponse({ tokenName: 'backend-1', type: 'client', environment: 'development', projects: ['default'] });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(CREATED_TOKEN_KEYS);
    expect(body).toMatchObject({
      tokenName: 'backend-1',
      username: 'backend-1',
      type: 'client',
      environment: 'development',
      project: 'default',
      projects: ['default'],
      expiresAt: null,
      seenAt: null,
      alias: null,
    });
    expect(body.secret).toMatch(new RegExp(`^default:development\\.${HEX56}$`));
    expect(body.createdAt).toMatch(ISO);
    const location = response.headers.get('location')!;
    expect(location).toMatch(/^\/api\/admin\/api-tokens\/[0-9a-f-]{36}$/);
    expect(location.split('/').pop()).toMatch(UUID);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('the location names the new token', async () => {
    const response = await createResponse({ tokenName: 'located', type: 'frontend' });
    const location = response.headers.get('location')!;
    const secret = (await bodyOf(response)).secret as string;
    const read = await call('GET', location);
    expect(read.status).toBe(200);
    const token = await bodyOf(read);
    expect(token).toMatchObject({ id: location.split('/').pop(), tokenName: 'located', type: 'frontend' });
    expect(token.secret).toBe(`${secret.slice(0, secret.indexOf('.') + 7)}***${token.id}`);
  });

  it('admin variant: an all-projects, all-environments *:* token', async () => {
    const response = await createResponse({ tokenName: 'ops', type: 'admin' });
    expect(response.status).toBe(201);
    const body = await bodyOf(response);
    expect(body).toMatchObject({ type: 'admin', environment: '*', project: '*', projects: ['*'], tokenName: 'ops' });
    expect(body.secret).toMatch(new RegExp(`^\\*:\\*\\.${HEX56}$`));
  });

  it('admin legacy variant: username stands for tokenName', async () => {
    const body = await bodyOf(await createResponse({ username: 'legacy-admin', type: 'ADMIN' }));
    expect(body).toMatchObject({ tokenName: 'legacy-admin', username: 'legacy-admin', type: 'admin' });
  });

  it('client/frontend legacy variant: username stands for tokenName', async () => {
    const response = await createResponse({ username: 'legacy-frontend', type: 'Frontend', environment: 'production' });
    expect(response.status).toBe(201);
    const body = await bodyOf(response);
    expect(body).toMatchObject({ tokenName: 'legacy-frontend', username: 'legacy-frontend', type: 'frontend', environment: 'production' });
    expect(body.secret).toMatch(new RegExp(`^\\*:production\\.${HEX56}$`));
  });

  it('matches type case-insensitively and stores it lowercase', async () => {
    for (const type of ['CLIENT', 'Client', 'fRoNtEnD']) {
      const body = await bodyOf(await createResponse({ tokenName: `case-${type}`, type }));
      expect(body.type).toBe(type.toLowerCase());
    }
    const listed = await bodyOf(await call('GET', '/api/admin/api-tokens'));
    const types = listed.tokens.filter((t: { tokenName: string }) => t.tokenName.startsWith('case-')).map((t: { type: string }) => t.type);
    expect(types).toEqual(['client', 'client', 'frontend']);
  });

  it('defaults a client token to environment "default" and all projects', async () => {
    const body = await bodyOf(await createResponse({ tokenName: 'defaults', type: 'client' }));
    expect(body).toMatchObject({ environment: 'default', project: '*', projects: ['*'] });
    expect(body.secret).toMatch(new RegExp(`^\\*:default\\.${HEX56}$`));
  });

  it('takes a single project from `project`', async () => {
    const body = await bodyOf(await createResponse({ tokenName: 'single', type: 'client', project: 'p2', environment: 'development' }));
    expect(body).toMatchObject({ project: 'p2', projects: ['p2'] });
    expect(body.secret).toMatch(new RegExp(`^p2:development\\.${HEX56}$`));
  });

  it('uses [] as the scope of a several-project token and keeps the given order', async () => {
    const body = await bodyOf(await createResponse({ tokenName: 'multi', type: 'client', projects: ['p3', 'default', 'p2'] }));
    expect(body.projects).toEqual(['p3', 'default', 'p2']);
    expect(body.project).toBe('p3,default,p2');
    expect(body.secret).toMatch(new RegExp(`^\\[\\]:default\\.${HEX56}$`));
    const listed = await bodyOf(await call('GET', '/api/admin/api-tokens'));
    expect(listed.tokens.find((t: { tokenName: string }) => t.tokenName === 'multi').projects).toEqual(['p3', 'default', 'p2']);
  });

  it('collapses a list with * to all projects and drops duplicates', async () => {
    const star = await bodyOf(await createResponse({ tokenName: 'star', type: 'client', projects: ['*', 'default'] }));
    expect(star.projects).toEqual(['*']);
    const dup = await bodyOf(await createResponse({ tokenName: 'dup', type: 'client', projects: ['default', 'default'] }));
    expect(dup.projects).toEqual(['default']);
    expect(dup.secret.startsWith('default:')).toBe(true);
  });

  it('echoes expiresAt as ISO UTC; a date-time without a zone is read as UTC', async () => {
    const withZone = await bodyOf(await createResponse({ tokenName: 'exp1', type: 'client', expiresAt: '2030-01-01T10:00:00+02:00' }));
    expect(withZone.expiresAt).toBe('2030-01-01T08:00:00.000Z');
    const noZone = await bodyOf(await createResponse({ tokenName: 'exp2', type: 'client', expiresAt: '2030-01-01T10:00:00' }));
    expect(noZone.expiresAt).toBe('2030-01-01T10:00:00.000Z');
  });

  it('allows several tokens with the same name', async () => {
    expect((await createResponse({ tokenName: 'same', type: 'client' })).status).toBe(201);
    expect((await createResponse({ tokenName: 'same', type: 'client' })).status).toBe(201);
  });

  it('stores only the hash of the secret, in D1 and in KV', async () => {
    const secret = await createToken({ tokenName: 'hashed', type: 'client', environment: 'development' });
    const randomPart = secret.slice(secret.indexOf('.') + 1);
    const rows = await env.DB.prepare('SELECT * FROM api_tokens').all();
    const dump = JSON.stringify(rows.results);
    expect(dump).not.toContain(randomPart);
    expect(dump).not.toContain(randomPart.slice(6, 30));
    const events = JSON.stringify((await env.DB.prepare('SELECT * FROM events').all()).results);
    expect(events).not.toContain(randomPart.slice(6, 30));

    const hash = await sha256Hex(secret);
    const keys = await env.TOKENS.list({ prefix: 'apikey:' });
    expect(keys.keys.map((k) => k.name)).toContain(`apikey:${hash}`);
    for (const key of keys.keys) {
      expect(key.name).not.toContain(randomPart);
      expect(await env.TOKENS.get(key.name)).not.toContain(randomPart.slice(6, 30));
    }
  });

  it('records an api-token-created audit event', async () => {
    await createToken({ tokenName: 'audited', type: 'frontend' });
    const event = await env.DB.prepare("SELECT * FROM events WHERE type = 'api-token-created' ORDER BY id DESC LIMIT 1").first<{
      created_by: string;
      created_by_user_id: number;
      project: string | null;
      environment: string | null;
      data: string;
    }>();
    expect(event!.created_by).toBe('admin');
    expect(event!.created_by_user_id).toBe(-42);
    // 6.10.1's event: the token's project and environment, the token without its secret in its key order.
    expect([event!.project, event!.environment]).toEqual(['*', 'default']);
    const data = JSON.parse(event!.data);
    expect(Object.keys(data)).toEqual(TOKEN_EVENT_DATA_KEYS);
    expect(data).toMatchObject({
      tokenName: 'audited',
      type: 'frontend',
      environment: 'default',
      projects: ['*'],
      username: 'audited',
      alias: null,
      project: '*',
    });
    expect(event!.data).not.toContain('secret');
  });

  it('names the project of a one-project token on its created event', async () => {
    await createToken({ tokenName: 'audited-project', type: 'client', environment: 'development', projects: ['default'] });
    const event = await env.DB.prepare(
      "SELECT project, environment, data FROM events WHERE type = 'api-token-created' ORDER BY id DESC LIMIT 1",
    ).first<{ project: string | null; environment: string | null; data: string }>();
    expect([event!.project, event!.environment]).toEqual(['default', 'development']);
    expect(JSON.parse(event!.data).project).toBe('default');
  });

  describe('rejects with 400 ValidationError, creating nothing', () => {
    const cases: [string, unknown, string][] = [
      [
        'both tokenName and username',
        { tokenName: 'a', username: 'b', type: 'client' },
        '"tokenName" and "username" are mutually exclusive',
      ],
      [
        'neither tokenName nor username',
        { type: 'client' },
        'The `/body/tokenName` property is required. It was not present on the data you sent.',
      ],
      ['an empty tokenName', { tokenName: '', type: 'client' }, 'The `/body/tokenName` property must not be empty'],
      ['a blank username', { username: '   ', type: 'client' }, 'The `/body/username` property must not be empty'],
      [
        'both project and projects',
        { tokenName: 'a', type: 'client', project: 'default', projects: ['default'] },
        '"project" must not exist simultaneously with [projects].',
      ],
      ['empty projects', { tokenName: 'a', type: 'client', projects: [] }, '"projects" must contain at least 1 items. You provided [].'],
      [
        'an admin token scoped to an environment',
        { tokenName: 'a', type: 'admin', environment: 'development' },
        'Admin token cannot be scoped to single environment',
      ],
      [
        'an admin token scoped to a project',
        { tokenName: 'a', type: 'admin', project: 'default' },
        'Admin token cannot be scoped to single project',
      ],
      [
        'a client token for all environments',
        { tokenName: 'a', type: 'client', environment: '*' },
        'Client token cannot be scoped to all environments',
      ],
      [
        'a frontend token for all environments',
        { tokenName: 'a', type: 'frontend', environment: '*' },
        'Frontend token cannot be scoped to all environments',
      ],
      ['an unknown environment', { tokenName: 'a', type: 'client', environment: 'staging' }, 'Environment=staging does not exist'],
      ['an unknown project', { tokenName: 'a', type: 'client', projects: ['default', 'ghost'] }, 'Project=ghost does not exist'],
      ['an unknown single project', { tokenName: 'a', type: 'client', project: 'ghost' }, 'Project=ghost does not exist'],
      ['an unknown type', { tokenName: 'a', type: 'superuser' }, 'The `/body/type` property must match pattern'],
      ['a missing type', { tokenName: 'a' }, 'The `/body/type` property is required.'],
      [
        'a date without time',
        { tokenName: 'a', type: 'client', expiresAt: '2030-01-01' },
        'The `/body/expiresAt` property must match format "date-time". You sent "2030-01-01".',
      ],
      ['an impossible date', { tokenName: 'a', type: 'client', expiresAt: '2030-02-30T00:00:00Z' }, 'must match format "date-time"'],
      ['a number as tokenName', { tokenName: 5, type: 'client' }, 'The `/body/tokenName` property must be string. You sent 5.'],
      [
        'projects as a string',
        { tokenName: 'a', type: 'client', projects: 'default' },
        'The `/body/projects` property must be array. You sent "default".',
      ],
      ['an array body', [], 'The `/body` property must be object. You sent [].'],
      ['a null body', null, 'The `/body` property must be object. You sent null.'],
      ['a lone surrogate in the name', { tokenName: 'bad\ud800name', type: 'client' }, 'must be well-formed text'],
      ['a NUL in the name', { tokenName: 'bad\u0000name', type: 'client' }, 'must be well-formed text'],
      ['an over-long name', { tokenName: 'x'.repeat(256), type: 'client' }, 'must be at most 255 characters long'],
    ];
    for (const [what, body, message] of cases) {
      it(what, async () => {
        const before = await tokenCount();
        const error = await expectError(await createResponse(body), 400, 'ValidationError');
        expect(error.details.map((detail) => detail.message).join('\n')).toContain(message);
        expect(await tokenCount()).toBe(before);
      });
    }

    it('reports every problem of one body at once', async () => {
      const error = await expectError(
        await createResponse({ tokenName: 'a', username: 'b', type: 'client', environment: '*', project: 'x', projects: [] }),
        400,
        'ValidationError',
      );
      expect(error.details).toHaveLength(4);
      expect(error.message).toBe(
        'Request validation failed: your request body or params contain invalid data. Refer to the `details` list for more information.',
      );
    });

    it('names service-level problems in the message, as Unleash does', async () => {
      const error = await expectError(
        await createResponse({ tokenName: 'a', type: 'client', environment: 'staging' }),
        400,
        'ValidationError',
      );
      expect(error.message).toBe(
        'Request validation failed: your request body or params contain invalid data: Environment=staging does not exist',
      );
      expect(error.details).toEqual([{ message: 'Environment=staging does not exist' }]);
    });
  });

  it('415 ContentTypeerror for a body that is not JSON by content type', async () => {
    const body = JSON.stringify({ tokenName: 'a', type: 'client' });
    const plain = await expectError(
      await call('POST', '/api/admin/api-tokens', { rawBody: body, contentType: 'text/plain' }),
      415,
      'ContentTypeerror',
    );
    expect(plain.message).toBe(
      'We do not accept the content-type you provided (text/plain). Try using one of the content-types we do accept instead (application/json) and make sure the body is in the corresponding format.',
    );
    const none = await expectError(
      await call('POST', '/api/admin/api-tokens', { rawBody: body, contentType: null }),
      415,
      'ContentTypeerror',
    );
    expect(none.message).toContain("(you didn't provide one)");
    await expectError(
      await call('POST', '/api/admin/api-tokens', { rawBody: body, contentType: 'application/vnd.api+json' }),
      415,
      'ContentTypeerror',
    );
    const withCharset = await call('POST', '/api/admin/api-tokens', { rawBody: body, contentType: 'application/json; charset=utf-8' });
    expect(withCharset.status).toBe(201);
  });

  it('checks the key before the content type: 401, then 403, then 415', async () => {
    const rawBody = 'tokenName=a';
    await expectError(
      await call('POST', '/api/admin/api-tokens', { token: null, rawBody, contentType: 'text/plain' }),
      401,
      'AuthenticationRequired',
    );
    const clientKey = await createToken({ tokenName: 'order-client', type: 'client' });
    await expectError(
      await call('POST', '/api/admin/api-tokens', { token: clientKey, rawBody, contentType: 'text/plain' }),
      403,
      'NoAccessError',
    );
    await expectError(await call('POST', '/api/admin/api-tokens', { rawBody, contentType: 'text/plain' }), 415, 'ContentTypeerror');
  });

  it('400 for malformed JSON, saying the body is not valid JSON', async () => {
    const error = await expectError(await call('POST', '/api/admin/api-tokens', { rawBody: '{"tokenName": ' }), 400, 'ValidationError');
    expect(error.details[0]!.message).toMatch(/^The request body is not valid JSON: /);
  });

  it('survives 10,000 levels of nesting with a 400', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const error = await expectError(
      await call('POST', '/api/admin/api-tokens', { rawBody: `{"tokenName": ${deep}, "type": "client"}` }),
      400,
      'ValidationError',
    );
    expect(error.details[0]!.path).toBe('/body/tokenName');
  });

  it('413 for a body over 100 kB', async () => {
    const response = await createResponse({ tokenName: 'a', type: 'client', padding: 'x'.repeat(100_001) });
    await expectError(response, 413, 'PayloadTooLargeError');
  });

  it('ignores unknown fields, including a supplied secret', async () => {
    const body = await bodyOf(
      await createResponse({ tokenName: 'extra', type: 'client', secret: '*:default.chosen', __proto__: { admin: true } }),
    );
    expect(body.secret).not.toBe('*:default.chosen');
    expect(body.secret).toMatch(new RegExp(`^\\*:default\\.${HEX56}$`));
  });
});

describe('GET /api/admin/api-tokens', () => {
  it('lists tokens without their secrets', async () => {
    const secret = await createToken({ tokenName: 'listed', type: 'client', environment: 'production' });
    const response = await call('GET', '/api/admin/api-tokens');
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain(secret);
    const { tokens } = JSON.parse(text);
    const listed = tokens.find((t: { tokenName: string }) => t.tokenName === 'listed');
    // A listed token: its id, then what its create answer held.
    expect(Object.keys(listed)).toEqual(['id', ...CREATED_TOKEN_KEYS]);
    expect(listed.secret).toBe(`${secret.slice(0, '*:production.'.length + 6)}***${listed.id}`);
  });

  it('401 without a key, 403 with a client key', async () => {
    await expectError(await call('GET', '/api/admin/api-tokens', { token: null }), 401, 'AuthenticationRequired');
    const clientKey = await createToken({ tokenName: 'lister', type: 'client' });
    await expectError(await call('GET', '/api/admin/api-tokens', { token: clientKey }), 403, 'NoAccessError');
  });
});

describe('GET /api/admin/api-tokens/:token', () => {
  it('404 for an unknown id', async () => {
    const error = await expectError(await call('GET', '/api/admin/api-tokens/00000000-0000-4000-8000-000000000000'), 404, 'NotFoundError');
    expect(error.message).toBe('Could not find api token.');
  });

  it("answers 6.10.1's list of the tokens of a name (names are not unique), oldest first, secrets masked", async () => {
    const name = `by-name-${crypto.randomUUID().slice(0, 8)}`;
    await createToken({ tokenName: name, type: 'client', environment: 'development' });
    await createToken({ tokenName: name, type: 'frontend', environment: 'production' });
    await createToken({ tokenName: `${name}-other`, type: 'client' });
    const response = await call('GET', `/api/admin/api-tokens/${name}`);
    expect(response.status).toBe(200);
    const body = await bodyOf(response);
    expect(Object.keys(body)).toEqual(['tokens']);
    expect(body.tokens.map((token: { tokenName: string; type: string }) => [token.tokenName, token.type])).toEqual([
      [name, 'client'],
      [name, 'frontend'],
    ]);
    const listed = (await bodyOf(await call('GET', '/api/admin/api-tokens'))).tokens.filter(
      (t: { tokenName: string }) => t.tokenName === name,
    );
    expect(body.tokens).toEqual(listed);
    expect(JSON.stringify(body)).toContain('***');
  });

  it('answers an empty list for a name no token has, and still one token by its id or secret', async () => {
    expect(await bodyOf(await call('GET', '/api/admin/api-tokens/no-token-has-this-name'))).toEqual({ tokens: [] });
    const created = await createResponse({ tokenName: 'by-ref', type: 'client' });
    const { secret } = await bodyOf(created);
    const id = created.headers.get('location')!.split('/').pop()!;
    for (const ref of [id, encodeURIComponent(secret)]) {
      const one = await bodyOf(await call('GET', `/api/admin/api-tokens/${ref}`));
      expect(one).toMatchObject({ tokenName: 'by-ref', type: 'client' });
      expect(one.tokens).toBeUndefined();
    }
  });

  it("a name wins over an id: a token named like another token's id is what that name answers", async () => {
    const created = await createResponse({ tokenName: 'id-owner', type: 'client' });
    const id = created.headers.get('location')!.split('/').pop()!;
    await createToken({ tokenName: id, type: 'frontend' });
    const body = await bodyOf(await call('GET', `/api/admin/api-tokens/${id}`));
    expect(body.tokens.map((t: { tokenName: string; type: string }) => [t.tokenName, t.type])).toEqual([[id, 'frontend']]);
  });

  it('shows a reader only the token types it may read, and refuses callers without any read permission', async () => {
    const name = `typed-${crypto.randomUUID().slice(0, 8)}`;
    await createToken({ tokenName: name, type: 'client' });
    const clientKey = await createToken({ tokenName: 'reader-sdk', type: 'client' });
    await expectError(await call('GET', `/api/admin/api-tokens/${name}`, { token: clientKey }), 403, 'NoAccessError');
    expect((await call('GET', `/api/admin/api-tokens/${name}`, { token: null })).status).toBe(401);
  });
});

describe('PUT /api/admin/api-tokens/:token', () => {
  it('changes expiresAt, addressed by id or by secret, and audits it', async () => {
    const created = await createResponse({ tokenName: 'to-extend', type: 'client' });
    const { secret } = await bodyOf(created);
    const id = created.headers.get('location')!.split('/').pop()!;
    expect((await call('PUT', `/api/admin/api-tokens/${id}`, { body: { expiresAt: '2031-05-05T05:05:05Z' } })).status).toBe(200);
    expect((await bodyOf(await call('GET', `/api/admin/api-tokens/${id}`))).expiresAt).toBe('2031-05-05T05:05:05.000Z');
    const bySecret = await call('PUT', `/api/admin/api-tokens/${encodeURIComponent(secret)}`, {
      body: { expiresAt: '2032-01-01T00:00:00Z' },
    });
    expect(bySecret.status).toBe(200);
    expect((await bodyOf(await call('GET', `/api/admin/api-tokens/${id}`))).expiresAt).toBe('2032-01-01T00:00:00.000Z');
    const events = await env.DB.prepare("SELECT count(*) AS n FROM events WHERE type = 'api-token-updated'").first<{ n: number }>();
    expect(events!.n).toBe(2);
  });

  it('a key whose expiry is moved into the past stops working at once', async () => {
    const created = await createResponse({ tokenName: 'short-lived', type: 'admin' });
    const { secret } = await bodyOf(created);
    expect((await call('GET', '/api/admin/api-tokens', { token: secret })).status).toBe(200);
    const id = created.headers.get('location')!.split('/').pop()!;
    await call('PUT', `/api/admin/api-tokens/${id}`, { body: { expiresAt: '2020-01-01T00:00:00Z' } });
    await expectError(await call('GET', '/api/admin/api-tokens', { token: secret }), 401, 'AuthenticationRequired');
  });

  it('400 for a missing or malformed expiresAt or extra keys; 404 for an unknown token', async () => {
    const created = await createResponse({ tokenName: 'put-errors', type: 'client' });
    const id = created.headers.get('location')!.split('/').pop()!;
    await expectError(await call('PUT', `/api/admin/api-tokens/${id}`, { body: {} }), 400, 'ValidationError');
    await expectError(await call('PUT', `/api/admin/api-tokens/${id}`, { body: { expiresAt: 'soon' } }), 400, 'ValidationError');
    const extra = await expectError(
      await call('PUT', `/api/admin/api-tokens/${id}`, { body: { expiresAt: '2030-01-01T00:00:00Z', tokenName: 'x' } }),
      400,
      'ValidationError',
    );
    expect(extra.details[0]!.message).toBe(
      'The `/body` object of the request body does not allow additional properties. Your request included the `/body/tokenName` property.',
    );
    await expectError(
      await call('PUT', '/api/admin/api-tokens/nope', { body: { expiresAt: '2030-01-01T00:00:00Z' } }),
      404,
      'NotFoundError',
    );
  });
});

describe('DELETE /api/admin/api-tokens/:token', () => {
  it('revokes a key: it stops working at once, and KV forgets it', async () => {
    const created = await createResponse({ tokenName: 'doomed', type: 'admin' });
    const { secret } = await bodyOf(created);
    expect((await call('GET', '/api/admin/api-tokens', { token: secret })).status).toBe(200);
    const kvBefore = await env.TOKENS.list({ prefix: 'apikey:' });

    const response = await call('DELETE', `/api/admin/api-tokens/${encodeURIComponent(secret)}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');

    await expectError(await call('GET', '/api/admin/api-tokens', { token: secret }), 401, 'AuthenticationRequired');
    const kvAfter = await env.TOKENS.list({ prefix: 'apikey:' });
    expect(kvAfter.keys.length).toBe(kvBefore.keys.length - 1);
    const event = await env.DB.prepare("SELECT pre_data FROM events WHERE type = 'api-token-deleted'").first<{ pre_data: string }>();
    expect(JSON.parse(event!.pre_data)).toMatchObject({ tokenName: 'doomed', type: 'admin' });
  });

  it('revokes by id too', async () => {
    const created = await createResponse({ tokenName: 'doomed-by-id', type: 'admin' });
    const { secret } = await bodyOf(created);
    const id = created.headers.get('location')!.split('/').pop()!;
    expect((await call('DELETE', `/api/admin/api-tokens/${id}`)).status).toBe(200);
    await expectError(await call('GET', '/api/admin/api-tokens', { token: secret }), 401, 'AuthenticationRequired');
    await expectError(await call('GET', `/api/admin/api-tokens/${id}`), 404, 'NotFoundError');
  });

  it('200 for a token that is not there, as 6.10.1 ("Deleting non-existing token should yield 200"); nothing is deleted or recorded', async () => {
    const before = await bodyOf(await call('GET', '/api/admin/api-tokens'));
    const events = await count('SELECT count(*) AS n FROM events');
    for (const ref of ['random-non-existing-token', '*:*.unknown', crypto.randomUUID()]) {
      const response = await call('DELETE', `/api/admin/api-tokens/${ref}`);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe('');
    }
    expect(await bodyOf(await call('GET', '/api/admin/api-tokens'))).toEqual(before);
    expect(await count('SELECT count(*) AS n FROM events')).toBe(events);
  });

  it('the UI deletes by the listed secret: exactly that token goes, its twin stays', async () => {
    // Two tokens with the same scope, environment and name: only the handle tells them apart.
    const first = await bodyOf(await createResponse({ tokenName: 'twin', type: 'client', environment: 'development' }));
    const second = await bodyOf(await createResponse({ tokenName: 'twin', type: 'client', environment: 'development' }));
    const listed = ((await bodyOf(await call('GET', '/api/admin/api-tokens'))).tokens as { secret: string; tokenName: string }[]).filter(
      (token) => token.tokenName === 'twin',
    );
    expect(listed).toHaveLength(2);
    expect(new Set(listed.map((token) => token.secret)).size).toBe(2);
    const response = await call('DELETE', `/api/admin/api-tokens/${listed[0]!.secret}`);
    expect(response.status).toBe(200);
    const remaining = ((await bodyOf(await call('GET', '/api/admin/api-tokens'))).tokens as { secret: string }[]).map(
      (token) => token.secret,
    );
    expect(remaining).not.toContain(listed[0]!.secret);
    expect(remaining).toContain(listed[1]!.secret);
    // The deleted one no longer authenticates; the other still does.
    const keys = [first.secret as string, second.secret as string];
    const statuses = await Promise.all(keys.map(async (key) => (await call('GET', '/api/client/features', { token: key })).status));
    expect(statuses.sort()).toEqual([200, 401]);
    // A handle whose prefix does not match its id names nothing.
    const tampered = `*:*.000000***${listed[1]!.secret.split('***')[1]}`;
    expect((await call('DELETE', `/api/admin/api-tokens/${encodeURIComponent(tampered)}`)).status).toBe(200);
    const after = ((await bodyOf(await call('GET', '/api/admin/api-tokens'))).tokens as { secret: string }[]).map((token) => token.secret);
    expect(after).toContain(listed[1]!.secret);
  });
});

describe('secrets in paths are never logged', () => {
  it("a 500 on /api/admin/api-tokens/<secret> logs the path with only the secret's prefix", async () => {
    const secret = await createToken({ tokenName: 'logged', type: 'client' });
    const logged: unknown[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void logged.push(...args));
    // A real failure inside the handler: the table it reads is briefly gone.
    await env.DB.exec('ALTER TABLE api_tokens RENAME TO api_tokens_away');
    try {
      await expectError(await call('GET', `/api/admin/api-tokens/${encodeURIComponent(secret)}`), 500, 'UnknownError');
    } finally {
      await env.DB.exec('ALTER TABLE api_tokens_away RENAME TO api_tokens');
      spy.mockRestore();
    }
    const text = JSON.stringify(logged);
    expect(text).toContain('unhandled error');
    expect(text).toContain(`/api/admin/api-tokens/${secret.slice(0, secret.lastIndexOf('.') + 7)}***`);
    expect(text).not.toContain(secret.slice(secret.lastIndexOf('.') + 1));
  });

  it("a 500 on /api/admin/projects/<id>/api-tokens/<secret> logs the path with only the secret's prefix", async () => {
    const secret = await createToken({ tokenName: 'logged-project', type: 'client', projects: ['default'] });
    const logged: unknown[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void logged.push(...args));
    await env.DB.exec('ALTER TABLE api_tokens RENAME TO api_tokens_away');
    try {
      await expectError(await call('DELETE', `/api/admin/projects/default/api-tokens/${encodeURIComponent(secret)}`), 500, 'UnknownError');
    } finally {
      await env.DB.exec('ALTER TABLE api_tokens_away RENAME TO api_tokens');
      spy.mockRestore();
    }
    const text = JSON.stringify(logged);
    expect(text).toContain('unhandled error');
    expect(text).toContain('/api/admin/projects/default/api-tokens/');
    expect(text).not.toContain(secret.slice(secret.lastIndexOf('.') + 1));
  });
});
