import * as v from 'valibot';
import { FeedbackResponse } from '../../admin/user-feedback/schema';
import { nonBlank, text } from '../../http/validation';

const EMAIL = /^[a-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

function isEmail(address: string): boolean {
  if (address.length > 254 || !EMAIL.test(address)) return false;
  const local = address.slice(0, address.indexOf('@'));
  return !local.startsWith('.') && !local.endsWith('.') && !local.includes('..');
}

/** Trimmed and lowercased before it is checked, so ` Ann@Example.com ` is `ann@example.com`. */
export const email = v.pipe(text(320), v.trim(), v.toLowerCase(), v.check(isEmail, 'must be a valid email address'));

/** An optional display name: blank means none, as Unleash stores it. */
const displayName = v.pipe(
  text(255),
  v.trim(),
  v.transform((name) => (name === '' ? undefined : name)),
);

/** A role id or the name of a root role, as Unleash's `rootRole` accepts both. */
const rootRole = v.union([
  v.pipe(v.number(), v.integer('must be integer'), v.minValue(0, 'must be >= 0'), v.maxValue(2147483647, 'must be <= 2147483647')),
  nonBlank(255),
]);

export const password = v.pipe(text(256), v.nonEmpty('must not be empty'));

export const CreateUserSchema = v.strictObject({
  username: v.optional(nonBlank(255)),
  email: v.optional(email),
  name: v.optional(displayName),
  password: v.optional(password),
  rootRole,
  sendEmail: v.optional(v.boolean()),
});

/** Unleash ignores other keys here (its update schema allows them). */
export const UpdateUserSchema = v.object({
  name: v.optional(displayName),
  email: v.optional(email),
  rootRole: v.optional(rootRole),
});
export type UpdateUserRequest = v.InferOutput<typeof UpdateUserSchema>;

const ID_TEXT = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

/**
 * A user or role id in a path: anything that reads as an integer (`01`, `1e2`) as Unleash's
 * validator coerces it, else 400. Ids out of the 32-bit range come back as `null` (they name
 * nothing, so the caller answers 404 instead of letting them reach SQL).
 */
const pathId = v.pipe(
  v.string(),
  v.check((input) => input.length <= 64 && ID_TEXT.test(input) && Number.isInteger(Number(input)), 'must be integer'),
  v.transform((input) => {
    const id = Number(input);
    return id >= -2147483648 && id <= 2147483647 ? id : null;
  }),
);

/** `{ id }` of a path: parsed as an object so that errors name `/params/id`. */
export const IdParams = v.object({ id: pathId });

/** A password to check or set. Long inputs are read (to say "fewer than 128"), not hashed. */
const candidatePassword = text(1024);

export const PasswordSchema = v.object({ password: candidatePassword });

/** `POST /api/admin/user/change-password`, Unleash's changePasswordSchema. */
export const ChangeOwnPasswordSchema = v.pipe(
  v.object({ password: candidatePassword, confirmPassword: candidatePassword, oldPassword: text(1024) }),
  v.forward(
    v.check((body) => body.password === body.confirmPassword, 'must be the same as `password`'),
    ['confirmPassword'],
  ),
);

/**
 * A user as the admin API answers one (Unleash's userSchema): every answer that carries users
 * takes these fields, adding its own. `name`, `email` and `username` are left out when unset.
 */
export const UserAnswer = v.object({
  isAPI: v.boolean(),
  accountType: v.string(),
  id: v.number(),
  name: v.optional(v.nullable(v.string())),
  email: v.optional(v.nullable(v.string())),
  username: v.optional(v.nullable(v.string())),
  imageUrl: v.nullable(v.string()),
  seenAt: v.nullable(v.string()),
  loginAttempts: v.number(),
  createdAt: v.string(),
  scimId: v.nullable(v.string()),
  rootRole: v.number(),
});

const UserRoleAnswer = v.object({
  id: v.number(),
  name: v.nullable(v.string()),
  type: v.string(),
  description: v.nullable(v.string()),
});

/** What `GET /api/admin/user-admin` answers with status 200. */
export const GetUsersResponse = v.object({
  users: v.array(v.object({ ...UserAnswer.entries, inviteLink: v.string() })),
  rootRoles: v.array(UserRoleAnswer),
});

/** What `POST /api/admin/user-admin` answers with status 201. */
export const CreateUser201Response = v.object({ ...UserAnswer.entries, inviteLink: v.string(), emailSent: v.boolean() });

/** What `GET /api/admin/user-admin/:id` answers with status 200. */
export const GetUserResponse = UserAnswer;

/** What `PUT /api/admin/user-admin/:id` answers with status 200. */
export const UpdateUserResponse = UserAnswer;

/** What `GET /api/admin/user` answers with status 200. */
export const GetMeResponse = v.object({
  user: v.object({
    isAPI: v.boolean(),
    accountType: v.optional(v.string()),
    id: v.optional(v.number()),
    username: v.optional(v.string()),
    imageUrl: v.optional(v.string()),
    seenAt: v.optional(v.nullable(v.string())),
    loginAttempts: v.optional(v.number()),
    createdAt: v.optional(v.string()),
    scimId: v.optional(v.nullable(v.string())),
    permissions: v.optional(v.array(v.string())),
    environment: v.optional(v.string()),
    type: v.optional(v.string()),
    projects: v.optional(v.array(v.string())),
    internalAdminTokenUserId: v.optional(v.number()),
    name: v.optional(v.string()),
    email: v.optional(v.string()),
  }),
  permissions: v.array(
    v.object({
      permission: v.string(),
      project: v.optional(v.string()),
      environment: v.optional(v.string()),
    }),
  ),
  feedback: v.array(FeedbackResponse),
  /** The splash screens the person has dismissed (`POST /api/admin/splash/:id`): id → seen. */
  splash: v.record(v.string(), v.boolean()),
});

/** What `GET /api/admin/user/profile` answers with status 200. */
export const GetProfileResponse = v.object({
  projects: v.array(v.string()),
  // null for a caller that is not a user (an admin key).
  rootRole: v.nullable(UserRoleAnswer),
  subscriptions: v.array(v.string()),
  features: v.array(v.unknown()),
});

/** What `GET /api/admin/user-admin/admin-count` answers with status 200. */
export const AdminCountResponse = v.object({ password: v.number(), noPassword: v.number(), service: v.number() });

export const SearchUsersQuery = v.object({ q: v.optional(text(255)) });

/** What `GET /api/admin/user-admin/search` answers with status 200. */
export const SearchUsersResponse = v.array(
  v.object({
    isAPI: v.boolean(),
    accountType: v.string(),
    id: v.number(),
    name: v.optional(v.string()),
    username: v.optional(v.string()),
    email: v.optional(v.string()),
    imageUrl: v.string(),
    seenAt: v.nullable(v.string()),
    scimId: v.nullable(v.string()),
  }),
);

/** The user to make a reset link for: Unleash names them by email in `id`. */
export const ResetPasswordSchema = v.object({ id: v.pipe(text(320), v.nonEmpty('must not be empty')) });

/** What `POST /api/admin/user-admin/reset-password` answers with status 200. */
export const ResetPasswordResponse = v.object({ resetPasswordUrl: v.string() });

export const UserRolesQuery = v.object({ projectId: v.optional(text(100)) });

/** What `GET /api/admin/user/roles` answers with status 200. */
export const UserRolesResponse = v.object({
  version: v.number(),
  roles: v.array(v.object({ id: v.number(), name: v.string(), type: v.string(), project: v.string(), description: v.string() })),
});

/** Who asks for a reset email. */
export const EmailSchema = v.object({ email: v.pipe(text(320), v.nonEmpty('must not be empty')) });

/** What `GET /api/admin/user-admin/inactive` answers with status 200. */
export const InactiveUsersResponse = v.object({
  version: v.number(),
  inactiveUsers: v.array(
    v.object({
      id: v.number(),
      name: v.nullable(v.string()),
      email: v.nullable(v.string()),
      username: v.nullable(v.string()),
      seenAt: v.nullable(v.string()),
      createdAt: v.nullable(v.string()),
      patSeenAt: v.nullable(v.string()),
    }),
  ),
});

/** Users to delete, by id. */
export const IdsSchema = v.object({
  ids: v.pipe(
    v.array(
      v.pipe(v.number(), v.integer('must be integer'), v.minValue(1, 'must be >= 1'), v.maxValue(2147483647, 'must be <= 2147483647')),
    ),
    v.maxLength(1000, 'must have at most 1000 items'),
  ),
});
