import * as v from 'valibot';

/** What `GET /auth/reset/validate` answers with status 200. */
export const ValidateTokenResponse = v.object({
  token: v.string(),
  createdBy: v.nullable(v.string()),
  email: v.nullable(v.string()),
  name: v.nullable(v.string()),
  id: v.number(),
  // Only for a user with a root role (service.ts).
  role: v.optional(
    v.object({
      id: v.number(),
      description: v.nullable(v.string()),
      type: v.string(),
      name: v.nullable(v.string()),
    }),
  ),
});

/** `GET /auth/reset/validate?token=<secret>`: read by the handler (a missing token is an unknown one). */
export const ValidateTokenQuery = v.object({ token: v.optional(v.string()) });
