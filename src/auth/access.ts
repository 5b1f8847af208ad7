/**
 * What a principal may do. A user's access is the union of the permission rows of their
 * roles (table `role_permission`, seeded from Unleash 6.10.1), placed as Unleash's access
 * store places them: a permission of type `root` applies everywhere; any other applies in
 * the project of the role assignment (`role_user.project`, which is `default` for a root
 * role: an Editor's project permissions hold in project `default`, and elsewhere only
 * through a project role such as the Owner role a project's creator gets); an `environment`
 * permission only in its row's environment. A member of a group also holds the group's roles
 * (tables `group_user`, `groups.root_role_id`, `group_role`). The check is Unleash's: a row matches when its
 * project is unset or equal, and its environment is unset or equal; ADMIN matches anything.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Env } from '../env';
import { getDb, type Db } from '../db/client';
import { users } from '../db/schema';
import type { Access, Grant, Permission } from './permissions';

// The vocabulary lives in permissions.ts (which this file implements); re-exported for readers of grants.
export type { Access, Grant };

const ADMIN_PERMISSION = 'ADMIN';

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

  mayAnywhere(permission: Permission): boolean {
    return this.isAdmin || this.byPermission.has(permission);
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
  project: string | null;
  environment: string | null;
}

/**
 * Reads a user's grants from D1 (one query): their own roles' and, as Unleash does, those of
 * every group they belong to (a group's root role holds where a root role does, its project
 * roles in their projects). The role assignments are collapsed first (50 groups holding the
 * same role on a project are one assignment), then joined with the roles' permissions once,
 * placed (`project` null for root permissions, `environment` null unless environment-scoped)
 * and made distinct in SQL: each grant arrives once.
 */
export async function loadUserGrants(env: Env, userId: number): Promise<Grant[]> {
  return grantsOf(getDb(env), userId);
}

function grantsOf(db: Db, userId: number): Promise<Grant[]> {
  return db.all<GrantRow>(sql`
    WITH assignment(role_id, project) AS (
      SELECT role_id, project FROM role_user WHERE user_id = ${userId}
      UNION
      SELECT g.root_role_id, 'default' FROM group_user gu JOIN groups g ON g.id = gu.group_id
      WHERE gu.user_id = ${userId} AND g.root_role_id IS NOT NULL
      UNION
      SELECT gr.role_id, gr.project FROM group_user gu JOIN group_role gr ON gr.group_id = gu.group_id
      WHERE gu.user_id = ${userId}
    )
    SELECT DISTINCT
      rp.permission AS permission,
      CASE WHEN p.type = 'root' THEN NULL ELSE a.project END AS project,
      CASE WHEN p.type = 'environment' AND rp.environment <> '' THEN rp.environment END AS environment
    FROM assignment a
    JOIN role_permission rp ON rp.role_id = a.role_id
    JOIN permissions p ON p.permission = rp.permission`);
}

export async function loadUserAccess(env: Env, userId: number): Promise<Access> {
  return new GrantAccess(await loadUserGrants(env, userId));
}

/**
 * What a person may do now, read afresh (no isolate cache): for work done later in their name,
 * such as a scheduled change request. Null when the person is gone (deleted, or never was).
 */
export async function currentUserAccess(db: Db, userId: number): Promise<Access | null> {
  const [row] = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.id, userId), isNull(users.deletedAt)))
    .limit(1);
  return row ? new GrantAccess(await grantsOf(db, userId)) : null;
}
