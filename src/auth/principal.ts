import { ADMIN_ACCESS, NO_ACCESS } from './access';
import type { PermissionHolder } from './permissions';

/** `backend` is Unleash 7+'s name for `client` (kept as the deprecated spelling); both read the client API. */
export type ApiTokenType = 'admin' | 'client' | 'backend' | 'frontend';

/** The token types that may read the client API (`/api/client/*`). */
export const BACKEND_TOKEN_TYPES: readonly ApiTokenType[] = ['client', 'backend'];

/**
 * How a stored type is reported when read back (lists, `/edge/validate`): Unleash 8 answers
 * `client` for `backend` tokens so that older Edges and SDK tooling keep working.
 */
export function reportedTokenType(type: ApiTokenType): Exclude<ApiTokenType, 'backend'> {
  return type === 'backend' ? 'client' : type;
}

/** What KV stores under `apikey:<hash>`: everything needed to authorise without D1. */
export interface ApiTokenRecord {
  /** hex SHA-256 of the secret, compared in constant time with the presented key's hash. */
  hash: string;
  /** Public token id, `null` for INIT_ADMIN_API_TOKENS keys (they live in configuration). */
  id: string | null;
  type: ApiTokenType;
  name: string;
  /** `['*']` for all projects. */
  projects: string[];
  /** `*` for all environments. */
  environment: string;
  expiresAt: string | null;
}

/** The caller of a request with an API key. */
export interface ApiTokenPrincipal extends PermissionHolder {
  readonly kind: 'api-token';
  readonly token: ApiTokenRecord;
  /** Recorded as the actor in audit events (`createdBy`). */
  readonly actorName: string;
  /** Unleash acts as user -42 ("Unleash Admin Token User") for admin tokens. */
  readonly userId: number;
}

/** A person: signed in with a session cookie, or with a personal access token. */
export interface UserPrincipal extends PermissionHolder {
  readonly kind: 'user';
  readonly userId: number;
  /** Recorded as the actor in audit events and `createdBy`: the username, else the email. */
  readonly actorName: string;
  /**
   * How the person authenticated, and the id of that session or personal token (or Access
   * token's subject): a session cookie, a personal access token, or Cloudflare Access's JWT.
   */
  readonly via: 'session' | 'personal-token' | 'access';
  readonly credentialId: string;
}

export type Principal = ApiTokenPrincipal | UserPrincipal;

const ADMIN_TOKEN_USER_ID = -42;
export const SYSTEM_USER_ID = -1337;

export function principalFor(token: ApiTokenRecord): ApiTokenPrincipal {
  return {
    kind: 'api-token',
    token,
    actorName: token.name,
    userId: token.type === 'admin' ? ADMIN_TOKEN_USER_ID : SYSTEM_USER_ID,
    access: token.type === 'admin' ? ADMIN_ACCESS : NO_ACCESS,
  };
}
