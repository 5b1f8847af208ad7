/**
 * Permissions that routes declare. Names are Unleash's (table `permissions`, seeded in
 * migrations/0001_seed.sql). An admin API token holds ADMIN, which passes every check; user
 * credentials (personal access tokens, sessions) will carry their roles' permissions.
 */
import { noAccess } from '../http/errors';

export const ADMIN = 'ADMIN';
export const CREATE_CLIENT_API_TOKEN = 'CREATE_CLIENT_API_TOKEN';
export const READ_CLIENT_API_TOKEN = 'READ_CLIENT_API_TOKEN';
export const UPDATE_CLIENT_API_TOKEN = 'UPDATE_CLIENT_API_TOKEN';
export const DELETE_CLIENT_API_TOKEN = 'DELETE_CLIENT_API_TOKEN';
export const CREATE_FRONTEND_API_TOKEN = 'CREATE_FRONTEND_API_TOKEN';
export const READ_FRONTEND_API_TOKEN = 'READ_FRONTEND_API_TOKEN';
export const UPDATE_FRONTEND_API_TOKEN = 'UPDATE_FRONTEND_API_TOKEN';
export const DELETE_FRONTEND_API_TOKEN = 'DELETE_FRONTEND_API_TOKEN';
export const CREATE_FEATURE = 'CREATE_FEATURE';
export const UPDATE_FEATURE = 'UPDATE_FEATURE';
export const DELETE_FEATURE = 'DELETE_FEATURE';
export const CREATE_PROJECT = 'CREATE_PROJECT';
export const UPDATE_PROJECT = 'UPDATE_PROJECT';
export const CREATE_FEATURE_STRATEGY = 'CREATE_FEATURE_STRATEGY';
export const UPDATE_FEATURE_STRATEGY = 'UPDATE_FEATURE_STRATEGY';
export const DELETE_FEATURE_STRATEGY = 'DELETE_FEATURE_STRATEGY';
export const UPDATE_FEATURE_ENVIRONMENT = 'UPDATE_FEATURE_ENVIRONMENT';
export const UPDATE_FEATURE_ENVIRONMENT_VARIANTS = 'UPDATE_FEATURE_ENVIRONMENT_VARIANTS';
export const UPDATE_FEATURE_DEPENDENCY = 'UPDATE_FEATURE_DEPENDENCY';
export const CREATE_TAG_TYPE = 'CREATE_TAG_TYPE';
export const CREATE_CONTEXT_FIELD = 'CREATE_CONTEXT_FIELD';
export const UPDATE_CONTEXT_FIELD = 'UPDATE_CONTEXT_FIELD';
export const DELETE_CONTEXT_FIELD = 'DELETE_CONTEXT_FIELD';
export const CREATE_SEGMENT = 'CREATE_SEGMENT';
export const UPDATE_SEGMENT = 'UPDATE_SEGMENT';
export const DELETE_SEGMENT = 'DELETE_SEGMENT';
export const CREATE_STRATEGY = 'CREATE_STRATEGY';
export const UPDATE_STRATEGY = 'UPDATE_STRATEGY';
export const DELETE_STRATEGY = 'DELETE_STRATEGY';
export const DELETE_TAG_TYPE = 'DELETE_TAG_TYPE';
export const UPDATE_TAG_TYPE = 'UPDATE_TAG_TYPE';
export const UPDATE_FEATURE_VARIANTS = 'UPDATE_FEATURE_VARIANTS';
export const DELETE_PROJECT = 'DELETE_PROJECT';
export const UPDATE_PROJECT_SEGMENT = 'UPDATE_PROJECT_SEGMENT';
export const READ_PROJECT_API_TOKEN = 'READ_PROJECT_API_TOKEN';
export const CREATE_PROJECT_API_TOKEN = 'CREATE_PROJECT_API_TOKEN';
export const DELETE_PROJECT_API_TOKEN = 'DELETE_PROJECT_API_TOKEN';
export const PROJECT_USER_ACCESS_WRITE = 'PROJECT_USER_ACCESS_WRITE';
export const CREATE_ADDON = 'CREATE_ADDON';
export const UPDATE_ADDON = 'UPDATE_ADDON';
export const DELETE_ADDON = 'DELETE_ADDON';
export const UPDATE_MAINTENANCE_MODE = 'UPDATE_MAINTENANCE_MODE';
export const UPDATE_INSTANCE_BANNERS = 'UPDATE_INSTANCE_BANNERS';
export const PROJECT_DEFAULT_STRATEGY_WRITE = 'PROJECT_DEFAULT_STRATEGY_WRITE';
export const UPDATE_APPLICATION = 'UPDATE_APPLICATION';
export const APPROVE_CHANGE_REQUEST = 'APPROVE_CHANGE_REQUEST';
export const APPLY_CHANGE_REQUEST = 'APPLY_CHANGE_REQUEST';
export const SKIP_CHANGE_REQUEST = 'SKIP_CHANGE_REQUEST';
export const PROJECT_CHANGE_REQUEST_WRITE = 'PROJECT_CHANGE_REQUEST_WRITE';

export type Permission = string;

/** What a caller may do (implemented by `GrantAccess` in access.ts). */
export interface Access {
  /** Whether `permission` is held in `project` (and `environment`, for environment-scoped ones). */
  may(permission: Permission, project?: string, environment?: string): boolean;
  /** Whether `permission` is held somewhere (ADMIN passes): the guard's check before the body names the project. */
  mayAnywhere(permission: Permission): boolean;
  /** Every grant, for `GET /api/admin/user` and `/user-admin/:id/permissions`. */
  readonly grants: readonly Grant[];
}

/** One permission row of a user: `project` null for root-role rows, `environment` null unless scoped. */
export interface Grant {
  permission: Permission;
  project: string | null;
  environment: string | null;
}

/** Something that holds permissions: an API token's principal or a user. */
export interface PermissionHolder {
  readonly access: Access;
}

/** Whether the holder has `permission` where it applies: root-wide, in `project`, in `environment`. */
export function hasPermission(holder: PermissionHolder, permission: Permission, project?: string, environment?: string): boolean {
  return holder.access.may(permission, project, environment);
}

/**
 * Throws 403 NoAccessError unless the holder has at least one of `anyOf` (ADMIN passes) in
 * `project` and `environment` when given.
 */
export function requireAnyPermission(holder: PermissionHolder, anyOf: readonly Permission[], project?: string, environment?: string): void {
  if (anyOf.length === 0 || anyOf.some((permission) => hasPermission(holder, permission, project, environment))) return;
  const quoted = anyOf.map((permission) => `"${permission}"`).join(', ');
  const need = anyOf.length === 1 ? `the ${quoted} permission` : `one of the following permissions: ${quoted}`;
  throw noAccess(`You don't have the required permissions to perform this operation. To perform this action, you need ${need}.`, {
    permissions: [...anyOf],
  });
}

/**
 * The finer check done inside a handler once the body says what is asked for (Unleash's
 * `OperationDeniedError` text, under our error name).
 */
export function requirePermissionFor(holder: PermissionHolder, permission: Permission, project?: string, environment?: string): void {
  if (!hasPermission(holder, permission, project, environment)) {
    throw noAccess(`You don't have the necessary access [${permission}] to perform this operation`);
  }
}
