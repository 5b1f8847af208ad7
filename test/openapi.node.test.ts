/**
 * The OpenAPI document is valid OpenAPI 3.1 (checked with @seriousme/openapi-schema-validator,
 * which compiles schemas at run time and so runs in Node, not workerd). The document is built
 * in-process from the same router and registry the Worker serves it from.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { router } from '../src/app';
import { buildOpenApiDocument } from '../src/openapi/document';
import { OPERATIONS } from '../src/openapi/registry';

describe('OpenAPI document', () => {
  it('is valid OpenAPI 3.1', async () => {
    const document = buildOpenApiDocument(router.routes);
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('is not valid when broken: the validator does check', async () => {
    const document = buildOpenApiDocument(router.routes) as { paths: Record<string, Record<string, Record<string, unknown>>> };
    document.paths['/api/admin/roles/validate']!.post!.parameters = [{ name: 'x', in: 'nowhere' }];
    expect((await new Validator().validate(document)).valid).toBe(false);
  });

  it('documents a route the registry does not know with generic answers and error bodies', async () => {
    const document = buildOpenApiDocument([['POST', /^\/api\/admin\/widgets$/, [], '/api/admin/widgets']], OPERATIONS) as {
      paths: Record<string, any>;
    };
    const operation = document.paths['/api/admin/widgets'].post;
    expect(Object.keys(operation.responses).sort()).toEqual(['2XX', '400', '401', '403']);
    expect(operation.security).toEqual([{ apiKey: [] }]);
    expect((await new Validator().validate(document)).valid).toBe(true);
  });
});
