import * as v from 'valibot';
import { dateTime, integerId, text } from '../../http/validation';

/** Unleash's createPatSchema: both fields required. */
export const CreatePersonalTokenSchema = v.object({
  description: text(255),
  expiresAt: dateTime,
});
export type CreatePersonalTokenRequest = v.InferOutput<typeof CreatePersonalTokenSchema>;

export const PersonalTokenIdParams = v.object({ id: integerId });

/** What `GET /api/admin/user/tokens` answers with status 200. */
export const GetPatsResponse = v.object({
  pats: v.array(
    v.object({
      id: v.number(),
      description: v.nullable(v.string()),
      expiresAt: v.nullable(v.string()),
      userId: v.number(),
      createdAt: v.string(),
      seenAt: v.nullable(v.string()),
    }),
  ),
});

/** What `POST /api/admin/user/tokens` answers with status 201. */
export const CreatePat201Response = v.object({
  id: v.number(),
  description: v.nullable(v.string()),
  expiresAt: v.nullable(v.string()),
  userId: v.number(),
  createdAt: v.string(),
  seenAt: v.nullable(v.string()),
  secret: v.string(),
});
