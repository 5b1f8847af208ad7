/**
 * The OpenAPI document is valid OpenAPI 3.1 (checked with @seriousme/openapi-schema-validator,
 * which compiles schemas at run time and so runs in Node, not workerd). The document is built
 * in-process from the same route objects the Worker serves.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../src/routes';
import { buildOpenApiDocument } from '../src/openapi/document';
import * as v from 'valibot';
import { admin, route } from '../src/http/route';
import { json } from '../src/http/responses';

describe('OpenAPI document', () => {
  it('is valid OpenAPI 3.1', async () => {
    const document = buildOpenApiDocument(ROUTES);
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('is not valid when broken: the validator does check', async () => {
    const document = buildOpenApiDocument(ROUTES) as { paths: Record<string, Record<string, Record<string, unknown>>> };
    document.paths['/api/admin/roles/validate']!.post!.parameters = [{ name: 'x', in: 'nowhere' }];
    expect((await new Validator().validate(document)).valid).toBe(false);
  });

  it('documents a route from its declaration: parameters, body, answers, errors and permission', async () => {
    const widget = route({
      method: 'POST',
      path: '/api/admin/widgets/:widgetId',
      access: admin('UPDATE_FEATURE'),
      tag: 'Widgets',
      operationId: 'createWidget',
      summary: 'Create a widget',
      body: v.object({ name: v.string() }),
      responses: { 201: { description: 'Created', schema: v.object({ id: v.number() }) } },
      handler: () => json({ id: 1 }, 201),
    });
    const document = buildOpenApiDocument([widget]) as { paths: Record<string, any> };
    const operation = document.paths['/api/admin/widgets/{widgetId}'].post;
    // An admin-API write also answers 503 while maintenance mode is on.
    expect(Object.keys(operation.responses).sort()).toEqual(['201', '400', '401', '403', '413', '415', '500', '503']);
    expect(operation.parameters).toEqual([{ name: 'widgetId', in: 'path', required: true, schema: { type: 'string' } }]);
    expect(operation.requestBody.content['application/json'].schema.required).toEqual(['name']);
    expect(operation['x-permission']).toEqual(['UPDATE_FEATURE']);
    expect(operation.security).toEqual([{ apiKey: [] }]);
    expect((await new Validator().validate(document)).valid).toBe(true);
  });
});
