import * as v from 'valibot';
import { dateTime, nonBlank, text } from '../../http/validation';
import { email, password, UserAnswer } from '../users/schema';

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

const SignupRoleAnswer = v.object({
  id: v.number(),
  type: v.string(),
  name: v.nullable(v.string()),
  description: v.nullable(v.string()),
  project: v.nullable(v.string()),
});

/** What a person sends to sign up with an invite link (Unleash's createInvitedUserSchema). */
export const SignupSchema = v.strictObject({
  email,
  name: v.pipe(text(255), v.trim(), v.nonEmpty('must not be empty')),
  username: v.optional(nonBlank(255)),
  password: v.optional(password),
});
export type SignupRequest = v.InferOutput<typeof SignupSchema>;

const SignupTokenAnswer = v.object({
  secret: v.string(),
  name: v.nullable(v.string()),
  url: v.nullable(v.string()),
  expiresAt: v.nullable(v.string()),
  enabled: v.boolean(),
  createdAt: v.string(),
  createdBy: v.nullable(v.string()),
  role: SignupRoleAnswer,
  users: v.array(UserAnswer),
});

/** What `GET /api/admin/invite-link/tokens` answers with status 200. */
export const GetAllPublicSignupTokensResponse = v.object({
  tokens: v.array(SignupTokenAnswer),
});

/** What `POST /api/admin/invite-link/tokens` answers with status 201 (no users yet). */
export const CreatePublicSignupToken201Response = SignupTokenAnswer;

/** What `GET /api/admin/invite-link/tokens/:token` answers with status 200. */
export const GetPublicSignupTokenResponse = SignupTokenAnswer;

/** What `PUT /api/admin/invite-link/tokens/:token` answers with status 200. */
export const UpdatePublicSignupTokenResponse = SignupTokenAnswer;

/** What `POST /invite/:token/signup` answers with status 201. */
export const AddPublicSignupTokenUser201Response = UserAnswer;
