import * as v from 'valibot';
import { integerId, nonBlank } from '../../http/validation';
import { CreatePat201Response, GetPatsResponse } from '../personal-tokens/schema';

const RootRoleId = v.pipe(
  v.number(),
  v.integer('must be integer'),
  v.minValue(1, 'must be >= 1'),
  v.maxValue(2147483647, 'must be <= 2147483647'),
);

/** Unleash Enterprise's createServiceAccountSchema. */
export const CreateServiceAccountSchema = v.object({
  username: nonBlank(255),
  name: nonBlank(255),
  rootRole: RootRoleId,
});
export type CreateServiceAccount = v.InferOutput<typeof CreateServiceAccountSchema>;

/** Unleash Enterprise's updateServiceAccountSchema: the name and the root role; the username stays. */
export const UpdateServiceAccountSchema = v.object({
  name: v.optional(nonBlank(255)),
  rootRole: v.optional(RootRoleId),
});
export type UpdateServiceAccount = v.InferOutput<typeof UpdateServiceAccountSchema>;

export const ServiceAccountIdParams = v.object({ id: integerId });
export const ServiceAccountTokenParams = v.object({ id: integerId, tokenId: integerId });

const Token = v.object({
  id: v.number(),
  description: v.nullable(v.string()),
  expiresAt: v.nullable(v.string()),
  userId: v.number(),
  createdAt: v.string(),
  seenAt: v.nullable(v.string()),
});

const ServiceAccount = {
  id: v.number(),
  name: v.nullable(v.string()),
  username: v.nullable(v.string()),
  imageUrl: v.string(),
  rootRole: v.number(),
  seenAt: v.null(),
  createdAt: v.string(),
};

/** serviceAccountSchema as a create or update answers it. */
export const ServiceAccountResponse = v.object(ServiceAccount);

/** serviceAccountsSchema: every account with its tokens, and the root roles they name. */
export const ServiceAccountsResponse = v.object({
  serviceAccounts: v.array(v.object({ ...ServiceAccount, tokens: v.array(Token) })),
  rootRoles: v.array(v.object({ id: v.number(), name: v.string(), description: v.nullable(v.string()), type: v.string() })),
});

export { CreatePat201Response as ServiceAccountTokenCreated, GetPatsResponse as ServiceAccountTokensResponse };
