/**
 * The OpenAPI 3.1 document, built from the route objects the router is made of
 * (src/http/route.ts): each operation's parameters, request body and answers come from the
 * valibot schemas that validate them, so the document cannot drift from what is served.
 * Catch-alls (`ALL`, paths with `*`) are not operations and are left out.
 */
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { stoppedByMaintenance } from '../http/maintenance';
import type { Answer, Route } from '../http/route';
import { ErrorBodySchema, MaintenanceBodySchema } from './responses';

export type JsonObject = Record<string, unknown>;

/** Draft 2020-12 JSON Schema (OpenAPI 3.1's dialect) of a valibot schema, as a request accepts it. */
function jsonSchemaOf(schema: v.GenericSchema, typeMode: 'input' | 'output' = 'input'): JsonObject {
  // errorMode 'ignore': checks and transforms that JSON Schema cannot express are left out
  // (validation still enforces them); everything it can express is kept.
  const { $schema: _dialect, ...rest } = toJsonSchema(schema, { target: 'draft-2020-12', typeMode, errorMode: 'ignore' }) as JsonObject;
  return rest;
}

/** `/api/admin/roles/:id` -> `/api/admin/roles/{id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** The routes that are operations. */
function documentedRoutes(routes: readonly Route[]): Route[] {
  return routes.filter((declared) => declared.method !== 'ALL' && !declared.path.includes('*'));
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request does not match the schema, or names data that does not fit (ValidationError; details list every problem)',
  401: 'No valid credential (AuthenticationRequired)',
  403: 'The caller lacks the permission or uses the wrong kind of key (NoAccessError)',
  404: 'Not found (NotFoundError)',
  405: 'Not supported here',
  409: 'The name is taken (NameExistsError)',
  413: 'The body is too large',
  415: 'The body is not JSON (ContentTypeerror)',
  429: 'Too many requests from this address or key (TooManyRequestsError; see retry-after)',
  503: 'Maintenance mode is on: the admin API takes no writes (`{message}` only, as Unleash answers)',
  500: 'An unexpected failure; the error id is logged',
};

const ERROR_REF = { $ref: '#/components/schemas/ErrorBody' };
const MAINTENANCE_REF = { $ref: '#/components/schemas/MaintenanceBody' };

function responseObject(answer: Answer): JsonObject {
  const out: JsonObject = { description: answer.description };
  if (answer.schema) {
    out.content = { [answer.contentType ?? 'application/json']: { schema: jsonSchemaOf(answer.schema, 'output') } };
  } else if (answer.contentType) {
    out.content = { [answer.contentType]: {} };
  }
  if (answer.headers) {
    out.headers = Object.fromEntries(
      Object.entries(answer.headers).map(([name, example]) => [name, { schema: { type: 'string' }, example }]),
    );
  }
  return out;
}

/** The error statuses a route can answer, from its rule and what it accepts. */
function errorStatuses(declared: Route): number[] {
  const errors = new Set<number>(declared.errors ?? []);
  const hasParams = declared.path.includes(':');
  if (declared.body || declared.query || hasParams || ['POST', 'PUT', 'PATCH'].includes(declared.method)) errors.add(400);
  if (declared.body) {
    errors.add(413);
    errors.add(415);
  }
  if (declared.access.kind !== 'open') {
    errors.add(401);
    errors.add(403);
  }
  if (declared.access.kind !== 'admin' && declared.access.rateLimit !== undefined) errors.add(429);
  if (declared.access.kind === 'admin' && stoppedByMaintenance(declared.method, declared.path)) errors.add(503);
  errors.add(500);
  return [...errors].sort();
}

function permissionOf(declared: Route): string | string[] | undefined {
  const access = declared.access;
  if (access.kind === 'admin')
    return access.permissions.length > 0 ? [...access.permissions] : 'any signed-in user, personal access token or admin key';
  if (access.kind === 'sdk') return `an API key of type ${access.tokenTypes.join(' or ')}`;
  return undefined;
}

/** Who may call the operation, in a sentence. */
function callers(declared: Route): string {
  const access = declared.access;
  if (access.kind === 'admin')
    return access.permissions.length > 0
      ? `Needs the ${access.permissions.join(' or ')} permission${access.permissions.length > 1 ? 's' : ''} (an admin key holds all)`
      : 'Any signed-in user, personal access token or admin key may call it';
  if (access.kind === 'sdk') return `Needs an API key of type ${access.tokenTypes.join(' or ')}`;
  return 'Open to anyone, rate limited per address';
}

/**
 * The operation's description: the route's own, else one made from its declaration (who may
 * call it and what it answers), so every operation has one (Unleash's document test asks for a
 * summary and a description on each).
 */
function descriptionOf(declared: Route): string {
  if (declared.description) return declared.description;
  const answers = Object.entries(declared.responses).map(([status, answer]) => `${status} (${answer.description})`);
  const what = answers.length > 0 ? ` Answers ${answers.join(', ')}.` : '';
  return `${declared.summary}. ${callers(declared)}.${what}`;
}

function operation(declared: Route): JsonObject {
  const parameters: JsonObject[] = [...declared.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => ({
    name: match[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  if (declared.query) {
    const query = jsonSchemaOf(declared.query) as { properties?: Record<string, JsonObject>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      parameters.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema });
    }
  }
  const responses: JsonObject = {};
  for (const [status, answer] of Object.entries(declared.responses)) responses[status] = responseObject(answer);
  for (const status of errorStatuses(declared)) {
    responses[String(status)] ??= {
      description:
        status === 400 && declared.badRequestName !== undefined
          ? ERROR_DESCRIPTIONS[400]!.replace('ValidationError', declared.badRequestName)
          : (ERROR_DESCRIPTIONS[status] ?? 'Error'),
      content: { 'application/json': { schema: status === 503 ? MAINTENANCE_REF : ERROR_REF } },
    };
  }
  const out: JsonObject = { operationId: declared.operationId, summary: declared.summary, tags: [declared.tag] };
  out.description = descriptionOf(declared);
  if (parameters.length > 0) out.parameters = parameters;
  if (declared.body) out.requestBody = { required: true, content: { 'application/json': { schema: jsonSchemaOf(declared.body) } } };
  out.responses = responses;
  out.security = declared.access.kind === 'open' ? [] : [{ apiKey: [] }];
  const permission = permissionOf(declared);
  if (permission !== undefined) out['x-permission'] = permission;
  return out;
}

/** Builds the document for these routes. */
export function buildOpenApiDocument(routes: readonly Route[]): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const declared of documentedRoutes(routes)) {
    const item = (paths[openApiPath(declared.path)] ??= {});
    item[declared.method.toLowerCase()] = operation(declared);
  }
  const tags = [...new Set(documentedRoutes(routes).map((declared) => declared.tag))].sort().map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Unleash on Cloudflare Workers',
      version: '0.1.0',
      description:
        'An Unleash-compatible feature-flag service. Send an API key or personal access token in the `Authorization` header (a `Bearer ` prefix works too), or sign in for a session cookie.',
    },
    tags,
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'Authorization' } },
      schemas: { ErrorBody: jsonSchemaOf(ErrorBodySchema), MaintenanceBody: jsonSchemaOf(MaintenanceBodySchema) },
    },
    paths,
  };
}
