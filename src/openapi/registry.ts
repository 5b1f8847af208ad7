/**
 * What the OpenAPI document says about each route beyond what the router knows: a summary,
 * the valibot schemas the handler validates with, documented answers and the permission.
 * Keys are `METHOD /path` exactly as the route is written in `src/app.ts`. The route list
 * itself comes from the router (`src/openapi/document.ts`), so a route added without an entry
 * here is still documented, with generic answers and error bodies; add an entry to say more.
 */
import * as v from 'valibot';
import { CreateApiTokenSchema, UpdateApiTokenSchema } from '../modules/api-tokens/schema';
import { bulkMetricsBody, edgeValidateBody, metricsBody, registerBody } from '../modules/client-api/schema';
import { PATTERNS } from '../modules/feature-search/params';
import {
  CompleteLifecycleSchema,
  CreateFeatureSchema,
  DependencySchema,
  PatchFeatureSchema,
  ReviveSchema,
  StaleSchema,
  StrategySchema,
  UpdateFeatureSchema,
  VariantsSchema,
} from '../modules/features/schema';
import { ExportSchema, ImportSchema } from '../modules/import-export/schema';
import { RoleDefinitionSchema } from '../modules/roles/schema';
import { CreateSignupTokenSchema, SignupSchema, UpdateSignupTokenSchema } from '../modules/signup-tokens/schema';
import { CreateUserSchema, UpdateUserSchema } from '../modules/users/schema';
import { CreatedApiTokenSchema, ImportJobSchema, SearchResultSchema, SignupTokenSchema, UserSchema } from './responses';

export interface DocumentedResponse {
  description: string;
  /** JSON body; leave out for an answer without a body. */
  schema?: v.GenericSchema;
  /** Response headers worth naming (e.g. `location`). */
  headers?: Record<string, string>;
}

export interface OperationMeta {
  summary: string;
  description?: string;
  /** The JSON body the handler validates. */
  body?: v.GenericSchema;
  /** Query parameters: an object schema whose entries are the parameters. */
  query?: v.ObjectSchema<v.ObjectEntries, undefined>;
  /** Success answers by status; error answers are added from the route's kind. */
  responses?: Record<number, DocumentedResponse>;
  /** The permissions of which the caller needs one (as `adminRoute` is given them). */
  permission?: readonly string[];
  /** Extra error statuses this operation answers, beyond the generic ones. */
  errors?: readonly number[];
}

const ok = (description: string, schema?: v.GenericSchema): DocumentedResponse => ({ description, schema });
const anyJson = v.unknown();

const searchFilter = (pattern: string) => v.optional(v.pipe(v.string(), v.regex(new RegExp(pattern))));
const SearchQuery = v.object({
  query: v.optional(v.pipe(v.string(), v.description('Comma-separated terms matched against name, description and tag values'))),
  project: searchFilter(PATTERNS.operator),
  state: searchFilter(PATTERNS.operator),
  type: searchFilter(PATTERNS.operator),
  lifecycle: searchFilter(PATTERNS.operator),
  createdBy: searchFilter(PATTERNS.operator),
  tag: searchFilter(PATTERNS.tag),
  segment: searchFilter(PATTERNS.segment),
  status: v.optional(v.pipe(v.string(), v.description('`<environment>:enabled|disabled`; repeatable'))),
  createdAt: searchFilter(PATTERNS.date),
  lastSeenAt: searchFilter(PATTERNS.date),
  favorite: searchFilter(PATTERNS.favorite),
  archived: searchFilter(PATTERNS.archived),
  offset: v.optional(v.pipe(v.string(), v.description('Default 0'))),
  limit: v.optional(v.pipe(v.string(), v.description('1..100, default 50'))),
  sortBy: v.optional(v.pipe(v.string(), v.description('createdAt (default), name, type, stale, project, lastSeenAt, environment:<env>'))),
  sortOrder: v.optional(v.picklist(['asc', 'desc'])),
  favoritesFirst: v.optional(v.picklist(['true', 'false'])),
});

export const OPERATIONS: Record<string, OperationMeta> = {
  'GET /health': { summary: 'Liveness', responses: { 200: ok('The service runs', v.object({ health: v.literal('GOOD') })) } },

  // Seed operation 4 and key management
  'POST /api/admin/api-tokens': {
    summary: 'Create an API token (seed operation 4)',
    description: 'The secret is shown once. The token id is in the `location` header and in the list.',
    body: CreateApiTokenSchema,
    responses: {
      201: { description: 'The new token', schema: CreatedApiTokenSchema, headers: { location: '/api/admin/api-tokens/<id>' } },
    },
    permission: ['ADMIN', 'CREATE_CLIENT_API_TOKEN', 'CREATE_FRONTEND_API_TOKEN'],
  },
  'GET /api/admin/api-tokens': {
    summary: 'List API tokens (secrets masked)',
    permission: ['ADMIN', 'READ_CLIENT_API_TOKEN', 'READ_FRONTEND_API_TOKEN'],
  },
  'GET /api/admin/api-tokens/:token': {
    summary: 'One API token, by id or full secret',
    errors: [404],
    permission: ['ADMIN', 'READ_CLIENT_API_TOKEN', 'READ_FRONTEND_API_TOKEN'],
  },
  'PUT /api/admin/api-tokens/:token': {
    summary: "Change a token's expiry",
    body: UpdateApiTokenSchema,
    responses: { 200: ok('Updated') },
    errors: [404],
    permission: ['ADMIN', 'UPDATE_CLIENT_API_TOKEN', 'UPDATE_FRONTEND_API_TOKEN'],
  },
  'DELETE /api/admin/api-tokens/:token': {
    summary: 'Revoke a token (idempotent)',
    responses: { 200: ok('Revoked') },
    permission: ['ADMIN', 'DELETE_CLIENT_API_TOKEN', 'DELETE_FRONTEND_API_TOKEN'],
  },

  // Seed operations 1-3 and their flow
  'POST /api/admin/roles/validate': {
    summary: 'Validate a custom role definition (seed operation 1); stores nothing',
    body: RoleDefinitionSchema,
    responses: { 200: ok('The definition could be created') },
    permission: ['ADMIN'],
  },
  'POST /api/admin/roles': { summary: 'Create a custom role', body: RoleDefinitionSchema, errors: [409], permission: ['ADMIN'] },
  'PUT /api/admin/roles/:id': {
    summary: 'Update a custom role; without `type` the stored type stays',
    body: RoleDefinitionSchema,
    errors: [404, 409],
    permission: ['ADMIN'],
  },
  'GET /api/admin/user-admin/:id': {
    summary: 'Get a user (seed operation 2)',
    responses: { 200: ok('The user', UserSchema) },
    permission: ['ADMIN'],
    errors: [404],
  },
  'POST /api/admin/user-admin': {
    summary: 'Create a user',
    body: CreateUserSchema,
    responses: { 201: ok('The new user', UserSchema) },
    permission: ['ADMIN'],
  },
  'PUT /api/admin/user-admin/:id': {
    summary: 'Update a user',
    body: UpdateUserSchema,
    responses: { 200: ok('The user', UserSchema) },
    permission: ['ADMIN'],
    errors: [404],
  },
  'POST /api/admin/invite-link/tokens': {
    summary: 'Create an invite link',
    body: CreateSignupTokenSchema,
    responses: { 201: ok('The invite link', SignupTokenSchema) },
    permission: ['ADMIN'],
  },
  'GET /api/admin/invite-link/tokens/:token': {
    summary: 'One invite link',
    responses: { 200: ok('The invite link', SignupTokenSchema) },
    permission: ['ADMIN'],
    errors: [404],
  },
  'PUT /api/admin/invite-link/tokens/:token': {
    summary: 'Update a public signup token (seed operation 3)',
    body: UpdateSignupTokenSchema,
    responses: { 200: ok('The updated token', SignupTokenSchema) },
    permission: ['ADMIN'],
    errors: [404],
  },
  'GET /invite/:token/validate': { summary: 'Is this invite link usable? (public)', responses: { 200: ok('Usable') } },
  'POST /invite/:token/signup': {
    summary: 'Sign up with an invite link (public)',
    body: SignupSchema,
    responses: { 201: ok('The new user', UserSchema) },
  },

  // Features and search (seed operation 5)
  'GET /api/admin/search/features': {
    summary: 'Search and filter features (seed operation 5)',
    query: SearchQuery,
    responses: { 200: ok('One page of matches and the total', SearchResultSchema) },
  },
  'POST /api/admin/projects/:projectId/features': {
    summary: 'Create a feature flag',
    body: CreateFeatureSchema,
    errors: [404, 409],
    permission: ['CREATE_FEATURE'],
  },
  'PUT /api/admin/projects/:projectId/features/:featureName': {
    summary: 'Update a feature flag',
    body: UpdateFeatureSchema,
    errors: [404],
    permission: ['UPDATE_FEATURE'],
  },
  'PATCH /api/admin/projects/:projectId/features/:featureName': {
    summary: 'Patch a feature flag (JSON Patch)',
    body: PatchFeatureSchema,
    errors: [404],
    permission: ['UPDATE_FEATURE'],
  },
  'DELETE /api/admin/projects/:projectId/features/:featureName': {
    summary: 'Archive a feature flag',
    responses: { 202: ok('Archived') },
    errors: [404],
    permission: ['DELETE_FEATURE'],
  },
  'POST /api/admin/projects/:projectId/stale': {
    summary: 'Mark flags stale or not',
    body: StaleSchema,
    responses: { 202: ok('Done') },
    permission: ['UPDATE_FEATURE'],
  },
  'POST /api/admin/projects/:projectId/revive': { summary: 'Revive archived flags', body: ReviveSchema, permission: ['UPDATE_FEATURE'] },
  'POST /api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies': {
    summary: 'Add a strategy',
    body: StrategySchema,
    errors: [404],
    permission: ['CREATE_FEATURE_STRATEGY'],
  },
  'PUT /api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId': {
    summary: 'Replace a strategy',
    body: StrategySchema,
    errors: [404],
    permission: ['UPDATE_FEATURE_STRATEGY'],
  },
  'PUT /api/admin/projects/:projectId/features/:featureName/environments/:environment/variants': {
    summary: "Set an environment's variants",
    body: VariantsSchema,
    errors: [404],
    permission: ['UPDATE_FEATURE_ENVIRONMENT_VARIANTS'],
  },
  'POST /api/admin/projects/:projectId/features/:featureName/dependencies': {
    summary: 'Add a parent dependency',
    body: DependencySchema,
    errors: [404],
    permission: ['UPDATE_FEATURE_DEPENDENCY'],
  },
  'POST /api/admin/projects/:projectId/features/:featureName/lifecycle/complete': {
    summary: 'Complete the lifecycle',
    body: CompleteLifecycleSchema,
    errors: [404],
    permission: ['UPDATE_FEATURE'],
  },
  'GET /api/admin/tag-types/:name': { summary: 'One tag type', errors: [404] },

  // Import and export (seed operation 6)
  'POST /api/admin/features-batch/import': {
    summary: 'Import feature flags (seed operation 6)',
    description: 'Small imports are applied at once (200, no body); larger ones are queued (202, the job, and its `location`).',
    body: ImportSchema,
    responses: {
      200: ok('Applied'),
      202: { description: 'Queued', schema: ImportJobSchema, headers: { location: '/api/admin/features-batch/import/jobs/<id>' } },
    },
    errors: [404, 413],
  },
  'GET /api/admin/features-batch/import/jobs/:id': {
    summary: "A queued import's progress",
    responses: { 200: ok('The job', ImportJobSchema) },
    errors: [404],
  },
  'POST /api/admin/features-batch/validate': {
    summary: 'Validate an import; writes nothing',
    body: ImportSchema,
    responses: { 200: ok('{errors, warnings, permissions}', anyJson) },
    errors: [404, 413],
  },
  'POST /api/admin/features-batch/export': { summary: 'Export flags in the import shape', body: ExportSchema, errors: [404] },

  // SDK side
  'POST /api/client/register': { summary: 'SDK registration', body: registerBody, responses: { 202: ok('Accepted') } },
  'POST /api/client/metrics': { summary: 'SDK metrics', body: metricsBody, responses: { 202: ok('Accepted') } },
  'POST /api/client/metrics/bulk': {
    summary: 'Metrics forwarded by Unleash Edge',
    body: bulkMetricsBody,
    responses: { 202: ok('Accepted') },
  },
  'POST /edge/validate': { summary: "Unleash Edge's token check (no Authorization)", body: edgeValidateBody },
  'POST /api/frontend/client/metrics': { summary: 'Frontend SDK metrics', body: metricsBody },
};
