/**
 * Every answer a declared route gives during the Worker tests is checked against the OpenAPI
 * document the service publishes: its status must be documented for that operation, and a
 * JSON body must validate against the documented schema. A test whose requests got an
 * undocumented answer fails, so the document cannot drift from what the service does.
 */
import { Validator } from '@cfworker/json-schema';
import { afterEach, expect } from 'vitest';
import { ROUTES } from '../../src/routes';
import { observeResponses, type Route } from '../../src/http/route';
import { buildOpenApiDocument, openApiPath } from '../../src/openapi/document';

type Json = Record<string, any>;

const document = buildOpenApiDocument(ROUTES) as Json;

/** Replaces `#/components/...` references by what they name, so the schema stands alone. */
function resolveRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(resolveRefs);
  if (schema === null || typeof schema !== 'object') return schema;
  const ref = (schema as Json).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    return resolveRefs(
      ref
        .slice(2)
        .split('/')
        .reduce((node: Json, key) => node[key], document),
    );
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, resolveRefs(value)]));
}

const validators = new Map<string, Validator>();
function validatorFor(key: string, schema: unknown): Validator {
  let validator = validators.get(key);
  if (!validator) {
    validator = new Validator(resolveRefs(schema) as Json, '2020-12', false);
    validators.set(key, validator);
  }
  return validator;
}

const violations: string[] = [];

function check(route: Route, status: number, contentType: string, text: string): void {
  const where = `${route.method} ${route.path} answered ${status}`;
  const operation = document.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
  const documented = operation?.responses[String(status)];
  if (!documented) {
    violations.push(`${where}, which its operation does not document`);
    return;
  }
  if (!contentType.startsWith('application/json')) return;
  const schema = documented.content?.['application/json']?.schema;
  if (schema === undefined) {
    if (text !== '') violations.push(`${where} with a JSON body the document does not describe`);
    return;
  }
  const result = validatorFor(`${route.method} ${route.path} ${status}`, schema).validate(JSON.parse(text));
  if (!result.valid) {
    const errors = result.errors.slice(-3).map((error) => `${error.instanceLocation}: ${error.error}`);
    violations.push(`${where} with a body that does not match its schema: ${errors.join('; ')}`);
  }
}

// The body is read inside the request (a read left for later would outlive it) and the answer
// rebuilt from it; only JSON answers are read, so streams of events pass untouched.
observeResponses(async (route, _request, response) => {
  // Catch-alls are not operations (the document leaves them out).
  if (route.method === 'ALL' || route.path.includes('*')) return response;
  const contentType = response.headers.get('content-type') ?? '';
  if (!contentType.startsWith('application/json') || response.body === null) {
    check(route, response.status, contentType, '');
    return response;
  }
  const text = await response.text();
  try {
    check(route, response.status, contentType, text);
  } catch (error) {
    violations.push(`${route.method} ${route.path}: ${String(error)}`);
  }
  return new Response(text, response);
});

afterEach(() => {
  expect(violations.splice(0), 'answers that the OpenAPI document does not describe').toEqual([]);
});
