/**
 * What a principal may do. A user's access is the union of the permission rows of their
 * roles (table `role_permission`, seeded from Unleash 6.10.1): a root role's rows apply to
 * every project, a project role's rows to the project it was granted in, and rows with an
 * environment only to that environment. The check is Unleash's: a row matches when its
 * project is unset or equal, and its environment is unset or equal; ADMIN matches anything.
 */
import { sql } from 'drizzle-orm';
import type { Env } from '../env';
import { getDb } from '../db/client';
import type { Permission } from './permissions';

const ADMIN_PERMISSION = 'ADMIN';

export interface Access {
  /** Whether `permission` is held in `project` (and `environment`, for environment-scoped ones). */
  may(permission: Permission, project?: string, environment?: string): boolean;
  /** Every grant, for `GET /api/admin/user` and `/user-admin/:id/permissions`. */
  readonly grants: readonly Grant[];
}

/** One permission row of a user: `project` null for root-role rows, `environment` null unless scoped. */
export interface Grant {
  permission: Permission;
  project: string | null;
  environment: string | null;
}

export class GrantAccess implements Access {
  private readonly isAdmin: boolean;
  private readonly byPermission = new Map<Permission, Grant[]>();

  constructor(readonly grants: readonly Grant[]) {
    this.isAdmin = grants.some((grant) => grant.permission === ADMIN_PERMISSION);
    for (const grant of grants) {
      const list = this.byPermission.get(grant.permission);
      if (list) list.push(grant);
      else this.byPermission.set(grant.permission, [grant]);
    }
  }

  may(permission: Permission, project?: string, environment?: string): boolean {
    if (this.isAdmin) return true;
    const grants = this.byPermission.get(permission);
    if (!grants) return false;
    return grants.some(
      (grant) =>
        (grant.project === null || grant.project === project || grant.project === '*') &&
        (grant.environment === null || grant.environment === environment || grant.environment === '*'),
    );
  }
}

export const ADMIN_ACCESS: Access = new GrantAccess([{ permission: ADMIN_PERMISSION, project: null, environment: null }]);
export const NO_ACCESS: Access = new GrantAccess([]);

interface GrantRow {
  permission: string;
  project: string;
  environment: string;
  role_type: string;
}

/** Reads a user's grants from D1 (one query). Root and root-custom roles apply everywhere. */
export async function loadUserAccess(env: Env, userId: number): Promise<Access> {
  const rows = await getDb(env).all<GrantRow>(sql`
    SELECT rp.permission AS permission, ru.project AS project, rp.environment AS environment, r.type AS role_type
    FROM role_user ru
    JOIN roles r ON r.id = ru.role_id
    JOIN role_permission rp ON rp.role_id = ru.role_id
    WHERE ru.user_id = ${userId}`);
  return new GrantAccess(
    rows.map((row) => ({
      permission: row.permission,
      project: row.role_type === 'root' || row.role_type === 'root-custom' ? null : row.project,
      environment: row.environment === '' ? null : row.environment,
    })),
  );
}
