import { ADMIN, type Permission, type PermissionHolder } from './permissions';

export type ApiTokenType = 'admin' | 'client' | 'frontend';

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

/** The caller of a request. User credentials will add a `kind: 'user'` variant. */
export interface ApiTokenPrincipal extends PermissionHolder {
  readonly kind: 'api-token';
  readonly token: ApiTokenRecord;
  /** Recorded as the actor in audit events (`createdBy`). */
  readonly actorName: string;
  /** Unleash acts as user -42 ("Unleash Admin Token User") for admin tokens. */
  readonly userId: number;
}

export type Principal = ApiTokenPrincipal;

export const ADMIN_TOKEN_USER_ID = -42;
export const SYSTEM_USER_ID = -1337;

const ADMIN_PERMISSIONS: ReadonlySet<Permission> = new Set([ADMIN]);
const NO_PERMISSIONS: ReadonlySet<Permission> = new Set();

export function principalFor(token: ApiTokenRecord): ApiTokenPrincipal {
  return {
    kind: 'api-token',
    token,
    actorName: token.name,
    userId: token.type === 'admin' ? ADMIN_TOKEN_USER_ID : SYSTEM_USER_ID,
    permissions: token.type === 'admin' ? ADMIN_PERMISSIONS : NO_PERMISSIONS,
  };
}
