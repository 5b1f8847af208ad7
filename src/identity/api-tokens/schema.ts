import * as v from 'valibot';
import type { ApiTokenType } from '../../auth/principal';
import { dateTime, nonBlank, text } from '../../http/validation';

const TOKEN_TYPE = /^(admin|client|backend|frontend)$/i;

/**
 * The four body variants of the seed (admin / client-or-frontend, each with `tokenName` or the
 * deprecated `username`) as one schema; the rules between fields are checked in the service
 * so that every problem is reported at once. Unknown keys are dropped, as Unleash does.
 */
export const CreateApiTokenSchema = v.object({
  type: v.pipe(
    text(32),
    v.regex(TOKEN_TYPE, 'must match pattern "^(admin|client|backend|frontend)$" (any case)'),
    v.transform((type) => type.toLowerCase() as ApiTokenType),
  ),
  tokenName: v.optional(nonBlank(255)),
  username: v.optional(nonBlank(255)),
  expiresAt: v.optional(dateTime),
  environment: v.optional(nonBlank(100)),
  project: v.optional(nonBlank(100)),
  projects: v.optional(v.pipe(v.array(nonBlank(100)), v.maxLength(50, 'must have at most 50 items'))),
});
export type CreateApiTokenRequest = v.InferOutput<typeof CreateApiTokenSchema>;

export const UpdateApiTokenSchema = v.strictObject({
  expiresAt: dateTime,
});

const ApiTokenAnswer = v.object({
  id: v.string(),
  secret: v.string(),
  tokenName: v.string(),
  username: v.nullable(v.string()),
  type: v.string(),
  environment: v.nullable(v.string()),
  project: v.nullable(v.string()),
  projects: v.array(v.string()),
  expiresAt: v.nullable(v.string()),
  createdAt: v.string(),
  seenAt: v.nullable(v.string()),
  alias: v.nullable(v.string()),
});

/** A token as its creation answers it: Unleash sends no `id` there. */
const CreatedApiTokenAnswer = v.omit(ApiTokenAnswer, ['id']);

/** What `POST /api/admin/api-tokens` answers with status 201. */
export const CreateApiToken201Response = CreatedApiTokenAnswer;

const ApiTokenListAnswer = v.object({
  tokens: v.array(ApiTokenAnswer),
});

/** What `GET /api/admin/api-tokens` answers with status 200. */
export const GetAllApiTokensResponse = ApiTokenListAnswer;

/** What `GET /api/admin/api-tokens/:token` answers with status 200: the tokens of that name, else the one token that id or secret names. */
export const GetApiTokensByNameResponse = v.union([ApiTokenListAnswer, ApiTokenAnswer]);

/** What `GET /api/admin/projects/:projectId/api-tokens` answers with status 200. */
export const GetProjectApiTokensResponse = ApiTokenListAnswer;

/** What `POST /api/admin/projects/:projectId/api-tokens` answers with status 201. */
export const CreateProjectApiToken201Response = CreatedApiTokenAnswer;

/**
 * A secret a caller brings (from another Unleash): printable ASCII without spaces, 16 to 512
 * characters, never shaped like a personal access token. At least 16 characters because a
 * short secret is guessable; Unleash's own are 60 and more, its bootstrap ones often ~25.
 */
const GivenSecret = v.pipe(
  v.string(),
  v.minLength(16, 'must be at least 16 characters long'),
  v.maxLength(512, 'must be at most 512 characters long'),
  v.regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
  v.check((secret) => !secret.startsWith('user:'), 'must not start with "user:" (that is a personal access token)'),
);

/**
 * `POST /api/admin/api-tokens/import`: a token as created, plus the secret it keeps; or, for an
 * Unleash 8.1+ v2 token whose secret its source never shows, the selector and the verifier that
 * source stores (base64url SHA-256 of the whole secret): the service checks that exactly one is given.
 */
export const ImportApiTokenSchema = v.object({
  ...CreateApiTokenSchema.entries,
  secret: v.optional(GivenSecret),
  selector: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{22}$/, 'must be a v2 selector: 22 base64url characters'))),
  verifier: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{43}$/, 'must be the base64url SHA-256 of the secret: 43 base64url characters')),
  ),
});
export type ImportApiTokenRequest = v.InferOutput<typeof ImportApiTokenSchema>;

/** What `POST /api/admin/api-tokens/import` answers with status 201: the token, its secret echoed once. */
export const ImportApiToken201Response = CreatedApiTokenAnswer;
