import * as v from 'valibot';
import { text } from '../../http/validation';

/** Unleash's loginSchema: `username` is a username or an email address. */
export const LoginSchema = v.object({
  username: v.pipe(text(320), v.nonEmpty('must not be empty')),
  password: text(1024),
});
export type LoginRequest = v.InferOutput<typeof LoginSchema>;

/** What `POST /auth/simple/login` answers with status 200. */
export const LoginResponse = v.object({
  isAPI: v.boolean(),
  accountType: v.string(),
  id: v.number(),
  username: v.optional(v.nullable(v.string())),
  imageUrl: v.nullable(v.string()),
  seenAt: v.nullable(v.string()),
  loginAttempts: v.number(),
  createdAt: v.string(),
  scimId: v.nullable(v.string()),
  deletedSessions: v.number(),
  activeSessions: v.number(),
});
