/**
 * `GET /api/admin/user-admin/:id/permissions`: what a user may do, root-wide, in a project
 * and in an environment (Unleash's `userAccessOverviewSchema`: overview, user, rootRole,
 * projectRoles). Every `hasPermission` goes through the same `Access.may` the routes use.
 */
import { GrantAccess, loadUserGrants } from '../../auth/access';
import type { Env } from '../../env';
import { getDb } from '../../db/client';
import { getRole } from '../roles/service';
import { getUser } from '../users/service';
import * as store from './store';
import { environmentExists } from '../../db/lookups';

export async function userAccessOverview(env: Env, userId: number | null, project?: string, environment?: string) {
  const db = getDb(env);
  const user = await getUser(db, userId);
  const [grants, permissions, rootRole, projectRoleIds, environmentKnown] = await Promise.all([
    loadUserGrants(env, user.id),
    store.allPermissions(db),
    getRole(db, user.rootRole),
    project === undefined ? Promise.resolve([]) : store.rolesOfUserInProject(db, project, user.id),
    environment === undefined ? Promise.resolve(false) : environmentExists(db, environment),
  ]);
  const access = new GrantAccess(grants);
  const of = (type: string) => permissions.filter((row) => row.type === type);
  const shape = (row: (typeof permissions)[number]) => ({
    id: row.id,
    name: row.permission,
    displayName: row.display_name,
    type: row.type,
  });
  const projectRoles = await Promise.all(projectRoleIds.map((id) => getRole(db, id)));
  return {
    overview: {
      root: of('root').map((row) => ({ ...shape(row), hasPermission: access.may(row.permission) })),
      project: of('project').map((row) => ({ ...shape(row), hasPermission: access.may(row.permission, project) })),
      environment:
        environmentKnown && environment !== undefined
          ? of('environment').map((row) => ({
              environment,
              ...shape(row),
              hasPermission: access.may(row.permission, project, environment),
            }))
          : [],
    },
    user,
    rootRole: { id: rootRole.id, name: rootRole.name, type: rootRole.type, description: rootRole.description },
    projectRoles,
  };
}
