/**
 * The OpenAPI 3.1 document, built from the router's own route list (itty-router keeps every
 * route as `[method, regex, handlers, path]`) and the metadata in `registry.ts`. JSON schemas
 * are generated from the valibot schemas the handlers validate with, so the document cannot
 * drift from what the routes accept. Catch-all routes (`ALL`, paths with `*`) are not
 * operations and are left out.
 */
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { ErrorBodySchema } from './responses';
import { OPERATIONS, type DocumentedResponse, type OperationMeta } from './registry';

export type JsonObject = Record<string, unknown>;
/** The part of an itty-router route entry the document reads. */
export type RouteEntry = readonly [method: string, match: RegExp, handlers: unknown, path?: string];

const METHODS = new Set(['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE']);

/** Draft 2020-12 JSON Schema (OpenAPI 3.1's dialect) of a valibot schema, as a request accepts it. */
export function jsonSchemaOf(schema: v.GenericSchema): JsonObject {
  // errorMode 'ignore': checks and transforms that JSON Schema cannot express are left out
  // (the handler still enforces them); everything it can express is kept.
  const { $schema: _dialect, ...rest } = toJsonSchema(schema, {
    target: 'draft-2020-12',
    typeMode: 'input',
    errorMode: 'ignore',
  }) as JsonObject;
  return rest;
}

/** `/api/admin/roles/:id` -> `/api/admin/roles/{id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** The routes that are operations, as `METHOD /path` keys in the router's own spelling. */
export function documentedRoutes(routes: readonly RouteEntry[]): { method: string; path: string }[] {
  const seen = new Set<string>();
  const out: { method: string; path: string }[] = [];
  for (const [method, , , path] of routes) {
    if (path === undefined || !METHODS.has(method) || path.includes('*')) continue;
    const key = `${method} ${path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ method, path });
  }
  return out;
}

type RouteKind = 'admin' | 'sdk' | 'public';

function kindOf(path: string): RouteKind {
  if (path.startsWith('/api/admin')) return 'admin';
  if (path.startsWith('/api/client') || path.startsWith('/api/frontend')) return 'sdk';
  return 'public';
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request does not match the schema, or names data that does not fit (ValidationError, details list every problem)',
  401: 'No valid API key (AuthenticationRequired)',
  403: 'The key lacks the permission or is of the wrong type (NoAccessError)',
  404: 'Not found (NotFoundError)',
  409: 'The name is taken (NameExistsError)',
  413: 'The body is too large',
  415: 'The body is not JSON (ContentTypeerror)',
};

const ERROR_REF = { $ref: '#/components/schemas/ErrorBody' };

function responseObject(answer: DocumentedResponse): JsonObject {
  const out: JsonObject = { description: answer.description };
  if (answer.schema) out.content = { 'application/json': { schema: jsonSchemaOf(answer.schema) } };
  if (answer.headers) {
    out.headers = Object.fromEntries(
      Object.entries(answer.headers).map(([name, example]) => [name, { schema: { type: 'string' }, example }]),
    );
  }
  return out;
}

function tagOf(path: string): string {
  const parts = path.split('/').filter(Boolean);
  if (parts[0] === 'api' && parts[1] === 'admin') {
    // Feature routes live under projects/:id/{features,stale,revive} and archive/.
    const area =
      parts[2] === 'projects' && parts[4]
        ? parts[4] === 'environments'
          ? 'projects'
          : 'features'
        : parts[2] === 'archive'
          ? 'features'
          : parts[2];
    return `admin: ${area ?? ''}`;
  }
  if (parts[0] === 'api') return `sdk: ${parts[1]}`;
  return parts[0] ?? '';
}

function operationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith(':') ? `by-${part.slice(1)}` : part))
    .join('-');
  return `${method.toLowerCase()}-${words}`.replace(/[^A-Za-z0-9_-]/g, '_');
}

function operation(method: string, path: string, meta: OperationMeta | undefined): JsonObject {
  const kind = kindOf(path);
  const parameters: JsonObject[] = [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => ({
    name: match[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  if (meta?.query) {
    const query = jsonSchemaOf(meta.query) as { properties?: Record<string, JsonObject>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      parameters.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema });
    }
  }

  const responses: JsonObject = {};
  for (const [status, answer] of Object.entries(meta?.responses ?? {})) responses[status] = responseObject(answer);
  if (Object.keys(responses).length === 0) responses['2XX'] = { description: 'Success' };
  const errors = new Set<number>(meta?.errors ?? []);
  if (meta?.body || parameters.length > 0 || method === 'POST' || method === 'PUT' || method === 'PATCH') errors.add(400);
  if (meta?.body) errors.add(415);
  if (kind !== 'public') {
    errors.add(401);
    errors.add(403);
  }
  for (const status of [...errors].sort()) {
    responses[String(status)] = {
      description: ERROR_DESCRIPTIONS[status] ?? 'Error',
      content: { 'application/json': { schema: ERROR_REF } },
    };
  }

  const out: JsonObject = {
    operationId: operationId(method, path),
    summary: meta?.summary ?? `${method} ${path}`,
    tags: [tagOf(path)],
  };
  if (meta?.description) out.description = meta.description;
  if (parameters.length > 0) out.parameters = parameters;
  if (meta?.body) out.requestBody = { required: true, content: { 'application/json': { schema: jsonSchemaOf(meta.body) } } };
  out.responses = responses;
  out.security = kind === 'public' ? [] : [{ apiKey: [] }];
  if (meta?.permission) out['x-permission'] = meta.permission;
  if (kind === 'admin' && !meta?.permission) out['x-permission'] = 'an admin key, or a user whose role allows it';
  return out;
}

/** Builds the document for these routes; `registry` defaults to the project's metadata. */
export function buildOpenApiDocument(routes: readonly RouteEntry[], registry: Record<string, OperationMeta> = OPERATIONS): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const { method, path } of documentedRoutes(routes)) {
    const item = (paths[openApiPath(path)] ??= {});
    item[method.toLowerCase()] = operation(method, path, registry[`${method} ${path}`]);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Unleash on Cloudflare Workers',
      version: '0.1.0',
      description:
        'An Unleash-compatible feature-flag service. Send an API key in the `Authorization` header (a `Bearer ` prefix works too).',
    },
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'Authorization' } },
      schemas: { ErrorBody: jsonSchemaOf(ErrorBodySchema) },
    },
    paths,
  };
}
