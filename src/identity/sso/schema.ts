import * as v from 'valibot';
import { text } from '../../http/validation';

/** ID token signature algorithms a provider may use (Unleash's form offers RS256, RS384, RS512, ES256…). */
export const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

/** A root role by id or by name (as Unleash's user form sends either). */
const RootRoleRef = v.union([v.pipe(v.number(), v.integer('must be integer'), v.minValue(1), v.maxValue(2 ** 31 - 1)), text(255)]);

/** Our addition to Unleash's shape: a value of the group claim (`groupJsonPath`) -> the root role it gives. */
const RootRoleMappingEntry = v.strictObject({
  group: v.pipe(text(255), v.nonEmpty('must not be empty')),
  rootRole: RootRoleRef,
});

/**
 * `POST /api/admin/auth/oidc/settings`: Unleash Enterprise's OIDC settings, every field optional
 * as in its form. `secret` may be left out (or sent back masked, as GET shows it) to keep the
 * stored one; the Worker secret `OIDC_CLIENT_SECRET` wins over both.
 */
export const OidcSettingsInput = v.object({
  enabled: v.optional(v.boolean()),
  discoverUrl: v.optional(text(2048)),
  clientId: v.optional(text(512)),
  secret: v.optional(text(2048)),
  autoCreate: v.optional(v.boolean()),
  defaultRootRole: v.optional(v.nullable(text(255))),
  defaultRootRoleId: v.optional(v.nullable(v.pipe(v.number(), v.integer('must be integer'), v.minValue(1), v.maxValue(2 ** 31 - 1)))),
  emailDomains: v.optional(text(4096)),
  enableSingleSignOut: v.optional(v.boolean()),
  enableGroupSyncing: v.optional(v.boolean()),
  groupJsonPath: v.optional(text(255)),
  addGroupsScope: v.optional(v.boolean()),
  acrValues: v.optional(text(255)),
  idTokenSigningAlgorithm: v.optional(v.picklist(ID_TOKEN_ALGORITHMS, `must be one of ${ID_TOKEN_ALGORITHMS.join(', ')}`)),
  unleashHostname: v.optional(text(255)),
  rootRoleMapping: v.optional(v.pipe(v.array(RootRoleMappingEntry), v.maxLength(100, 'must have at most 100 entries'))),
});
export type OidcSettingsInput = v.InferOutput<typeof OidcSettingsInput>;

/** What is stored (the `settings` row `unleash.enterprise.auth.oidc`). */
export interface OidcSettings {
  enabled: boolean;
  discoverUrl: string;
  clientId: string;
  secret: string;
  autoCreate: boolean;
  defaultRootRole: string | null;
  defaultRootRoleId: number | null;
  emailDomains: string;
  enableSingleSignOut: boolean;
  enableGroupSyncing: boolean;
  groupJsonPath: string;
  addGroupsScope: boolean;
  acrValues: string;
  idTokenSigningAlgorithm: (typeof ID_TOKEN_ALGORITHMS)[number];
  rootRoleMapping: { group: string; rootRole: number | string }[];
}

/** The settings as GET answers them: the secret masked. `{}` before anything was saved. */
export const OidcSettingsAnswer = v.object({
  enabled: v.optional(v.boolean()),
  discoverUrl: v.optional(v.string()),
  clientId: v.optional(v.string()),
  secret: v.optional(v.string()),
  autoCreate: v.optional(v.boolean()),
  defaultRootRole: v.optional(v.nullable(v.string())),
  defaultRootRoleId: v.optional(v.nullable(v.number())),
  emailDomains: v.optional(v.string()),
  enableSingleSignOut: v.optional(v.boolean()),
  enableGroupSyncing: v.optional(v.boolean()),
  groupJsonPath: v.optional(v.string()),
  addGroupsScope: v.optional(v.boolean()),
  acrValues: v.optional(v.string()),
  idTokenSigningAlgorithm: v.optional(v.string()),
  rootRoleMapping: v.optional(v.array(v.object({ group: v.string(), rootRole: v.union([v.number(), v.string()]) }))),
  secretFromEnvironment: v.optional(v.boolean()),
});

/** `GET/POST /api/admin/auth/simple/settings`: Unleash's password sign-in switch. */
export const SimpleSettings = v.object({ disabled: v.boolean() });
export type SimpleSettings = v.InferOutput<typeof SimpleSettings>;

/** `/auth/oidc/login?redirect=/path`: where to go once signed in (a path of ours). */
export const OidcLoginQuery = v.object({ redirect: v.optional(text(2048)) });

/** `/auth/oidc/callback`: the provider's answer. */
export const OidcCallbackQuery = v.object({
  code: v.optional(text(4096)),
  state: v.optional(text(512)),
  error: v.optional(text(255)),
  error_description: v.optional(text(1024)),
  iss: v.optional(text(2048)),
});

/**
 * `GET/POST /api/admin/auth/saml/settings`: SAML 2.0 is not offered here (OpenID Connect and
 * Cloudflare Access are), so the settings are always off. POST reads only `enabled`; the rest of
 * the page's form (entity id, URLs, certificates) is ignored and never stored.
 */
export const SamlSettingsInput = v.looseObject({ enabled: v.optional(v.boolean()) });
export const SamlSettingsAnswer = v.object({ enabled: v.literal(false) });
