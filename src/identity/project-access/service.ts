/**
 * Who has which role in a project (Unleash 6's project access API), and who may hand out
 * project roles: an admin, the project's Owner, or someone who holds, in that project, every
 * permission of the roles being granted (Unleash's `canGrantProjectRole`).
 */
import type { Principal } from '../../auth/principal';
import { forgetUser } from '../../auth/user-principal';
import { ADMIN, hasPermission } from '../../auth/permissions';
import { runBatch, type Db, type Statement } from '../../db/client';
import { badRequest, noAccess } from '../../http/errors';
import { roleBody } from '../roles/service';
import { usersByIds } from '../users/service';
import * as groups from '../groups/service';
import * as store from './store';
import { requireProject } from '../../db/lookups';

/** Unleash's 404 of the project access API. */
const noSuchProject = (projectId: string) => `Could not find project with id ${projectId}`;

export async function projectAccess(db: Db, projectId: string) {
  await requireProject(db, projectId, noSuchProject(projectId));
  const [roles, rows, projectGroups] = await Promise.all([
    store.projectRoles(db),
    store.assignments(db, projectId),
    groups.projectGroups(db, projectId),
  ]);
  const byUser = new Map<number, { addedAt: string; roleId: number; roles: number[] }>();
  for (const row of rows) {
    const entry = byUser.get(row.userId);
    if (entry) entry.roles.push(row.roleId);
    else byUser.set(row.userId, { addedAt: row.addedAt, roleId: row.roleId, roles: [row.roleId] });
  }
  const people = await usersByIds(db, [...byUser.keys()]);
  return {
    roles: roles.map(roleBody),
    groups: projectGroups,
    users: people.map((person) => ({ ...person, ...byUser.get(person.id)! })),
  };
}

/** Whether `principal` may grant `roleIds` in `projectId`. */
async function mayGrant(db: Db, principal: Principal, projectId: string, roleIds: readonly number[]): Promise<boolean> {
  if (hasPermission(principal, ADMIN)) return true;
  if (principal.kind !== 'user') return false;
  if (await store.isOwner(db, projectId, principal.userId)) return true;
  const held = principal.access.grants.filter((grant) => grant.project === projectId);
  const wanted = await store.permissionsOfRoles(db, roleIds);
  return wanted.every((need) =>
    held.some((grant) =>
      grant.environment !== null
        ? grant.permission === need.permission && grant.environment === need.environment
        : grant.permission === need.permission,
    ),
  );
}

async function checkedRoles(db: Db, roleIds: readonly number[]): Promise<number[]> {
  const unique = [...new Set(roleIds)];
  const found = await store.projectRolesByIds(db, unique);
  const missing = unique.filter((id) => !found.some((role) => role.id === id));
  if (missing.length > 0) throw badRequest(`Could not find project role(s) with id ${missing.join(', ')}`);
  return unique.sort((a, b) => a - b);
}

async function checkedUsers(db: Db, userIds: readonly number[]): Promise<number[]> {
  const unique = [...new Set(userIds)];
  const live = new Set(await store.liveUserIds(db, unique));
  const missing = unique.filter((id) => !live.has(id));
  if (missing.length > 0) throw badRequest(`Could not find user(s) with id ${missing.join(', ')}`);
  return unique;
}

async function refuseUnlessMayGrant(db: Db, principal: Principal, projectId: string, roleIds: readonly number[], message: string) {
  if (!(await mayGrant(db, principal, projectId, roleIds))) throw noAccess(message);
}

export async function addAccess(
  db: Db,
  principal: Principal,
  projectId: string,
  input: { roles: number[]; users: number[]; groups: number[] },
) {
  await requireProject(db, projectId, noSuchProject(projectId));
  const roleIds = await checkedRoles(db, input.roles);
  const userIds = await checkedUsers(db, input.users);
  const groupIds = await groups.checkedGroups(db, input.groups);
  await refuseUnlessMayGrant(db, principal, projectId, roleIds, 'User tried to grant role they did not have access to');
  const statements: Statement[] = [];
  for (const roleId of roleIds)
    for (const userId of userIds) statements.push(store.grantStatement(db, projectId, roleId, userId, roleIds, principal));
  statements.push(...groups.grantGroupStatements(db, principal, projectId, roleIds, groupIds, store.rolesStillExist(roleIds)));
  statements.push(
    store.guardedEvent(
      db,
      principal,
      { type: 'project-access-added', project: projectId, data: { roles: roleIds.map((roleId) => ({ roleId, groupIds, userIds })) } },
      roleIds,
    ),
  );
  await runBatch(db, statements);
  // This isolate sees the new grants at once; others within the credential cache's bound.
  for (const userId of userIds) forgetUser(userId);
  await groups.forgetGroupMembers(db, groupIds);
}

/**
 * Who holds project roles directly: a person (`role_user`) or a group (`group_role`, held by its
 * members). Setting and removing their roles in a project is the same operation for both; only
 * the rows, the events' names and whose cached grants are forgotten differ.
 */
interface RoleHolder {
  kind: 'user' | 'group';
  requireExists(db: Db, id: number): Promise<unknown>;
  rolesIn(db: Db, projectId: string, id: number): Promise<number[]>;
  /** Removes the holder's project roles in the project; with `roleIds`, only while those still exist. */
  revoke(db: Db, projectId: string, id: number, roleIds?: readonly number[]): Statement;
  /** Grants `roleIds`, only while all of them still exist. */
  grant(db: Db, principal: Principal, projectId: string, roleIds: readonly number[], id: number): Statement[];
  /** After the batch: the affected people's next request reads their grants again. */
  forget(db: Db, id: number): void | Promise<void>;
}

const USER: RoleHolder = {
  kind: 'user',
  requireExists: (db, id) => checkedUsers(db, [id]),
  rolesIn: store.rolesOfUserInProject,
  revoke: store.revokeStatement,
  grant: (db, principal, projectId, roleIds, id) =>
    roleIds.map((roleId) => store.grantStatement(db, projectId, roleId, id, roleIds, principal)),
  forget: (_db, id) => forgetUser(id),
};

const GROUP: RoleHolder = {
  kind: 'group',
  requireExists: (db, id) => groups.checkedGroups(db, [id]),
  rolesIn: groups.rolesOfGroupInProject,
  revoke: (db, projectId, id, roleIds) =>
    groups.revokeGroupStatement(db, projectId, id, roleIds === undefined ? undefined : store.rolesStillExist(roleIds)),
  grant: (db, principal, projectId, roleIds, id) =>
    groups.grantGroupStatements(db, principal, projectId, roleIds, [id], store.rolesStillExist(roleIds)),
  forget: (db, id) => groups.forgetGroupMembers(db, [id]),
};

const HOLDERS = { user: USER, group: GROUP } as const;

/**
 * The batch of a role replacement, built after its checks: the old project roles removed, the
 * new ones granted and the event recorded, each only while every new role still exists, so a
 * role deleted meanwhile leaves a person and a group alike as they were.
 */
export function replaceRolesStatements(
  db: Db,
  principal: Principal,
  kind: RoleHolder['kind'],
  projectId: string,
  id: number,
  roleIds: readonly number[],
  before: readonly number[],
): Statement[] {
  const holder = HOLDERS[kind];
  const who = kind === 'user' ? { userId: id } : { groupId: id };
  return [
    holder.revoke(db, projectId, id, roleIds),
    ...holder.grant(db, principal, projectId, roleIds, id),
    store.guardedEvent(
      db,
      principal,
      {
        type: `project-access-${kind}-roles-updated`,
        project: projectId,
        data: { roles: roleIds, ...who },
        preData: { roles: before, ...who },
      },
      roleIds,
    ),
  ];
}

/** `PUT /projects/:projectId/{users|groups}/:id/roles`: the holder's project roles, replaced. */
async function setRoles(db: Db, principal: Principal, holder: RoleHolder, projectId: string, id: number, roles: number[]) {
  await requireProject(db, projectId, noSuchProject(projectId));
  const roleIds = await checkedRoles(db, roles);
  await holder.requireExists(db, id);
  await refuseUnlessMayGrant(db, principal, projectId, roleIds, 'User tried to assign a role they did not have access to');
  const before = await holder.rolesIn(db, projectId, id);
  await runBatch(db, replaceRolesStatements(db, principal, holder.kind, projectId, id, roleIds, before));
  await holder.forget(db, id);
}

/** `DELETE /projects/:projectId/{users|groups}/:id/roles`: the holder leaves the project. */
async function removeAccess(db: Db, principal: Principal, holder: RoleHolder, projectId: string, id: number) {
  await requireProject(db, projectId, noSuchProject(projectId));
  const before = await holder.rolesIn(db, projectId, id);
  const who = holder.kind === 'user' ? { userId: id } : { groupId: id };
  await runBatch(db, [
    holder.revoke(db, projectId, id),
    store.guardedEvent(
      db,
      principal,
      { type: `project-access-${holder.kind}-roles-deleted`, project: projectId, preData: { roles: before, ...who } },
      [],
    ),
  ]);
  await holder.forget(db, id);
}

export const setUserRoles = (db: Db, principal: Principal, projectId: string, userId: number, roles: number[]) =>
  setRoles(db, principal, USER, projectId, userId, roles);
export const removeUserAccess = (db: Db, principal: Principal, projectId: string, userId: number) =>
  removeAccess(db, principal, USER, projectId, userId);
export const setGroupRoles = (db: Db, principal: Principal, projectId: string, groupId: number, roles: number[]) =>
  setRoles(db, principal, GROUP, projectId, groupId, roles);
export const removeGroupAccess = (db: Db, principal: Principal, projectId: string, groupId: number) =>
  removeAccess(db, principal, GROUP, projectId, groupId);
