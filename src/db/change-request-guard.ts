/**
 * The rule every direct write of a flag in an environment obeys: where the project's
 * environment has change requests on, only a caller holding SKIP_CHANGE_REQUEST there (an
 * admin, an admin API token) may write directly; everyone else goes through a change request.
 * Shared by the flag modules and the change-request module, which applies through the same
 * statement builders without this check.
 */
import { and, eq } from 'drizzle-orm';
import type { Db } from './client';
import { changeRequestSettings } from './schema';
import { requireAnyPermission, SKIP_CHANGE_REQUEST, type PermissionHolder } from '../auth/permissions';

/** Whether change requests are on in the project's environment. */
async function changeRequestsEnabled(db: Db, project: string, environment: string): Promise<boolean> {
  const [row] = await db
    .select({ enabled: changeRequestSettings.enabled })
    .from(changeRequestSettings)
    .where(and(eq(changeRequestSettings.project, project), eq(changeRequestSettings.environment, environment)))
    .limit(1);
  return row?.enabled === true;
}

/** Refuses (Unleash's 403 naming SKIP_CHANGE_REQUEST) a direct write where change requests govern it. */
export async function refuseUnlessMaySkipChangeRequests(db: Db, holder: PermissionHolder, project: string, environment: string) {
  if (!(await changeRequestsEnabled(db, project, environment))) return;
  requireAnyPermission(holder, [SKIP_CHANGE_REQUEST], project, environment);
}

/**
 * Refuses a direct write that touches a flag in every environment of the project (its archive)
 * where change requests are on in any of them, unless the caller may skip them in each, as
 * Unleash Enterprise's bypass check for the whole project does.
 */
export async function refuseUnlessMaySkipChangeRequestsInProject(db: Db, holder: PermissionHolder, project: string) {
  const rows = await db
    .select({ environment: changeRequestSettings.environment })
    .from(changeRequestSettings)
    .where(and(eq(changeRequestSettings.project, project), eq(changeRequestSettings.enabled, true)));
  for (const { environment } of rows) requireAnyPermission(holder, [SKIP_CHANGE_REQUEST], project, environment);
}
