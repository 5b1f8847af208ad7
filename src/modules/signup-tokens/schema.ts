import * as v from 'valibot';
import { dateTime, nonBlank, text } from '../../http/validation';
import { email, password } from '../users/schema';

export const CreateSignupTokenSchema = v.strictObject({
  name: nonBlank(255),
  expiresAt: dateTime,
  /** Beyond Unleash 6 (always Viewer): any root or root-custom role. */
  roleId: v.optional(
    v.pipe(v.number(), v.integer('must be integer'), v.minValue(1, 'must be >= 1'), v.maxValue(2147483647, 'must be <= 2147483647')),
  ),
});
export type CreateSignupTokenRequest = v.InferOutput<typeof CreateSignupTokenSchema>;

export const UpdateSignupTokenSchema = v.pipe(
  v.strictObject({
    expiresAt: v.optional(dateTime),
    enabled: v.optional(v.boolean()),
  }),
  v.check((body) => body.expiresAt !== undefined || body.enabled !== undefined, 'must contain at least one of `expiresAt` and `enabled`'),
);
export type UpdateSignupTokenRequest = v.InferOutput<typeof UpdateSignupTokenSchema>;

/** What a person sends to sign up with an invite link (Unleash's createInvitedUserSchema). */
export const SignupSchema = v.strictObject({
  email,
  name: v.pipe(text(255), v.trim(), v.nonEmpty('must not be empty')),
  username: v.optional(nonBlank(255)),
  password: v.optional(password),
});
export type SignupRequest = v.InferOutput<typeof SignupSchema>;
