/**
 * Valibot schemas of the answers the API documents in detail (the seed operations' responses
 * and the error body). Requests are validated with the modules' own schemas; responses are
 * built by the services, so these schemas exist for the OpenAPI document, and the OpenAPI test
 * holds the real answers to them. Strict objects: a key the service adds without documenting
 * it fails that test.
 */
import * as v from 'valibot';

const dateTime = v.pipe(v.string(), v.description('ISO 8601 date-time'));
const nullable = <T extends v.GenericSchema>(schema: T) => v.nullable(schema);

/** Unleash's error body; `details` lists every problem, each with a message. */
export const ErrorBodySchema = v.looseObject({
  id: v.pipe(v.string(), v.description('The id of this error instance')),
  name: v.pipe(v.string(), v.description('The kind of error, e.g. ValidationError, NotFoundError, NoAccessError')),
  message: v.string(),
  details: v.optional(v.array(v.looseObject({ message: v.string(), path: v.optional(v.string()) }))),
});

export const UserSchema = v.strictObject({
  id: v.pipe(v.number(), v.integer()),
  isAPI: v.optional(v.boolean()),
  name: v.optional(nullable(v.string())),
  email: v.optional(v.string()),
  username: v.optional(nullable(v.string())),
  imageUrl: v.optional(v.string()),
  inviteLink: v.optional(v.string()),
  loginAttempts: v.optional(v.pipe(v.number(), v.integer())),
  emailSent: v.optional(v.boolean()),
  rootRole: v.optional(v.pipe(v.number(), v.integer())),
  seenAt: v.optional(nullable(dateTime)),
  createdAt: v.optional(dateTime),
  accountType: v.optional(v.string()),
  permissions: v.optional(v.array(v.string())),
  scimId: v.optional(nullable(v.string())),
});

export const RoleSchema = v.strictObject({
  id: v.pipe(v.number(), v.integer()),
  type: v.string(),
  name: v.string(),
  description: v.optional(v.string()),
  project: v.optional(nullable(v.string())),
});

export const SignupTokenSchema = v.strictObject({
  secret: v.string(),
  url: nullable(v.string()),
  name: v.string(),
  enabled: v.pipe(v.boolean(), v.description('Always false once the token has expired')),
  expiresAt: dateTime,
  createdAt: dateTime,
  createdBy: nullable(v.string()),
  users: v.optional(nullable(v.array(UserSchema))),
  role: RoleSchema,
});

/** The create answer: Unleash's apiTokenSchema, which allows no other key (so no `id`). */
export const CreatedApiTokenSchema = v.strictObject({
  secret: v.pipe(v.string(), v.description('Shown once: `<scope>:<environment>.<56 hex>`')),
  username: v.optional(v.string()),
  tokenName: v.string(),
  type: v.picklist(['admin', 'client', 'frontend']),
  environment: v.optional(v.string()),
  project: v.string(),
  projects: v.array(v.string()),
  expiresAt: v.optional(nullable(dateTime)),
  createdAt: dateTime,
  seenAt: v.optional(nullable(dateTime)),
  alias: v.optional(nullable(v.string())),
});

const SearchEnvironmentSchema = v.strictObject({
  name: v.string(),
  environment: v.string(),
  type: v.string(),
  enabled: v.boolean(),
  sortOrder: v.number(),
  variantCount: v.number(),
  lastSeenAt: nullable(dateTime),
  hasStrategies: v.boolean(),
  hasEnabledStrategies: v.boolean(),
  yes: v.optional(v.pipe(v.number(), v.integer())),
  no: v.optional(v.pipe(v.number(), v.integer())),
  changeRequestIds: v.array(v.number()),
});

const SearchFeatureSchema = v.strictObject({
  name: v.string(),
  type: v.string(),
  description: nullable(v.string()),
  project: v.string(),
  favorite: v.boolean(),
  stale: v.boolean(),
  impressionData: v.boolean(),
  createdAt: nullable(dateTime),
  archivedAt: nullable(dateTime),
  lastSeenAt: nullable(dateTime),
  dependencyType: nullable(v.picklist(['parent', 'child'])),
  environments: v.array(SearchEnvironmentSchema),
  segments: v.array(v.string()),
  createdBy: v.strictObject({ id: v.number(), name: v.string(), imageUrl: nullable(v.string()) }),
  lifecycle: nullable(
    v.strictObject({
      stage: v.picklist(['initial', 'pre-live', 'live', 'completed', 'archived']),
      status: nullable(v.string()),
      enteredStageAt: dateTime,
    }),
  ),
  tags: v.optional(v.array(v.strictObject({ value: v.string(), type: v.string(), color: nullable(v.string()) }))),
});

export const SearchResultSchema = v.strictObject({
  features: v.array(SearchFeatureSchema),
  total: v.pipe(v.number(), v.integer(), v.description('Every match, also past the page')),
});

/** A queued import, answered with 202 and by the job route. */
export const ImportJobSchema = v.strictObject({
  id: v.string(),
  status: v.picklist(['staging', 'queued', 'running', 'completed', 'failed']),
  project: v.string(),
  environment: v.string(),
  totalChunks: v.pipe(v.number(), v.integer()),
  doneChunks: v.pipe(v.number(), v.integer()),
  totalFeatures: v.pipe(v.number(), v.integer()),
  errors: v.array(v.unknown()),
  createdAt: dateTime,
  startedAt: nullable(dateTime),
  finishedAt: nullable(dateTime),
});
