import * as v from 'valibot';
import { text } from '../../http/validation';
import { UserAnswer } from '../users/schema';

/** Unleash's loginSchema: `username` is a username or an email address. */
export const LoginSchema = v.object({
  username: v.pipe(text(320), v.nonEmpty('must not be empty')),
  password: text(1024),
});

/** What `POST /auth/simple/login` answers with status 200. */
export const LoginResponse = v.object({
  ...v.omit(UserAnswer, ['rootRole']).entries,
  deletedSessions: v.number(),
  activeSessions: v.number(),
});
