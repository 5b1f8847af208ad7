import { describe, expect, it } from 'vitest';
import { bodyOf, call, expectError } from './support/http';
import { createProject } from './support/admin';

describe('/api/admin/projects/:projectId/api-tokens', () => {
  it('creates a client token scoped to the project, lists it and deletes it by secret', async () => {
    const project = await createProject();
    const created = await call('POST', `/api/admin/projects/${project}/api-tokens`, {
      body: { tokenName: 'ci', type: 'client', environment: 'development' },
    });
    expect(created.status).toBe(201);
    const token = await bodyOf(created);
    expect(token).toMatchObject({ tokenName: 'ci', type: 'client', environment: 'development', project, projects: [project] });
    expect(token.secret.startsWith(`${project}:development.`)).toBe(true);

    const listed = await bodyOf(await call('GET', `/api/admin/projects/${project}/api-tokens`));
    expect(listed.tokens.map((entry: { tokenName: string }) => entry.tokenName)).toEqual(['ci']);
    expect(listed.tokens[0].secret).not.toBe(token.secret);

    // The token works on the client API, then stops working once deleted.
    expect((await call('GET', '/api/client/features', { token: token.secret })).status).toBe(200);
    expect((await call('DELETE', `/api/admin/projects/${project}/api-tokens/${encodeURIComponent(token.secret)}`)).status).toBe(200);
    expect((await bodyOf(await call('GET', `/api/admin/projects/${project}/api-tokens`))).tokens).toEqual([]);
  });

  it('refuses tokens for other projects and admin tokens with 400, writing nothing', async () => {
    const project = await createProject();
    await expectError(
      await call('POST', `/api/admin/projects/${project}/api-tokens`, {
        body: { tokenName: 'x', type: 'client', environment: 'development', projects: ['default'] },
      }),
      400,
      'ValidationError',
    );
    await expectError(
      await call('POST', `/api/admin/projects/${project}/api-tokens`, { body: { tokenName: 'x', type: 'admin' } }),
      400,
      'ValidationError',
    );
    expect((await bodyOf(await call('GET', `/api/admin/projects/${project}/api-tokens`))).tokens).toEqual([]);
  });

  it('answers 404 for an unknown project and for a token of another project', async () => {
    await expectError(await call('GET', '/api/admin/projects/no-such/api-tokens'), 404, 'NotFoundError');
    const project = await createProject();
    const other = await createProject();
    const token = await bodyOf(
      await call('POST', `/api/admin/projects/${other}/api-tokens`, {
        body: { tokenName: 'o', type: 'frontend', environment: 'development' },
      }),
    );
    await expectError(
      await call('DELETE', `/api/admin/projects/${project}/api-tokens/${encodeURIComponent(token.secret)}`),
      404,
      'NotFoundError',
    );
  });
});

describe('GET /api/admin/projects/:projectId/api-tokens for an unknown project', () => {
  it("answers 404 with 6.10.1's message", async () => {
    const error = await expectError(await call('GET', '/api/admin/projects/no-such-project/api-tokens'), 404, 'NotFoundError');
    expect(error.message).toBe('No project found');
  });
});
