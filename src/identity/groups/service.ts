/**
 * Groups (Unleash Enterprise's user groups): people gathered under a name, with an optional
 * root role and project roles that every member holds on top of their own (src/auth/access.ts
 * loads the union). Events and messages are Unleash's: `group-created` carries the input with
 * the member ids, `group-updated` the group before and after, `group-deleted` the group before.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Principal } from '../../auth/principal';
import { chunksOf } from '../../db/chunk';
import { runBatch, type Db, type Statement } from '../../db/client';
import { auditEvent, type Actor } from '../../db/events';
import { forgetMembers, membershipsOf, removeMembersStatements, type Membership } from '../../db/groups';
import { groupUser } from '../../db/schema';
import { refuseHandEditOfScimGroup } from '../../db/scim';
import { badData, badRequest, conflict, notFound } from '../../http/errors';
import { usersByIds, type UserBody } from '../users/service';
import type { GroupInput } from './schema';
import * as store from './store';

const noSuchGroup = (id: number | null) => `Could not find group with id ${id}`;

/** A group as Unleash's groupSchema shows it, without members. */
function groupBody(row: store.GroupRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    mappingsSSO: row.mappingsSso,
    rootRole: row.rootRoleId,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    scimId: row.scimId,
  };
}

/** Groups with their members (`{user, joinedAt, createdBy}`) and member counts. */
async function withMembers(db: Db, rows: readonly store.GroupRow[]) {
  const memberships = await membershipsOf(
    db,
    rows.map((row) => row.id),
  );
  const people = new Map((await usersByIds(db, [...new Set(memberships.map((m) => m.userId))])).map((user) => [user.id, user]));
  return rows.map((row) => {
    const users = memberships
      .filter((m) => m.groupId === row.id && people.has(m.userId))
      .map((m) => ({ user: people.get(m.userId)!, joinedAt: m.createdAt, createdBy: m.createdBy }));
    return { ...groupBody(row), users, userCount: users.length };
  });
}

export async function listGroups(db: Db) {
  const [rows, projects] = await Promise.all([store.allGroups(db), store.projectsOfGroups(db)]);
  const listed = await withMembers(db, rows);
  return {
    groups: listed.map((group) => ({ ...group, projects: projects.filter((p) => p.groupId === group.id).map((p) => p.project) })),
  };
}

async function requireGroup(db: Db, id: number | null): Promise<store.GroupRow> {
  const row = id === null ? undefined : await store.groupById(db, id);
  if (!row) throw notFound(noSuchGroup(id));
  return row;
}

export async function getGroup(db: Db, id: number | null) {
  const [group] = await withMembers(db, [await requireGroup(db, id)]);
  return group!;
}

/** The checks of Unleash's validateGroup, then ours: the root role and the members exist. */
async function validate(db: Db, input: GroupInput, existing?: store.GroupRow): Promise<{ name: string; userIds: number[] }> {
  const name = input.name.trim();
  if (name === '') throw badData('Group name cannot be empty');
  if ((!existing || existing.name !== name) && (await store.nameTaken(db, name, existing?.id))) throw conflict('Group name already exists');
  if (input.rootRole !== undefined && input.rootRole !== null && !(await store.rootRoleExists(db, input.rootRole))) {
    throw badRequest(`Could not find rootRole=${input.rootRole}`, { path: '/body/rootRole' });
  }
  const userIds = [...new Set(input.users.map((entry) => entry.user.id))];
  const found = new Set((await usersByIds(db, userIds)).map((user: UserBody) => user.id));
  const missing = userIds.filter((id) => !found.has(id));
  if (missing.length > 0) throw badRequest(`Could not find user(s) with id ${missing.join(', ')}`, { path: '/body/users' });
  return { name, userIds };
}

/** The SSO group names a group maps to: unique, none empty. */
function ssoMappings(input: GroupInput): string[] {
  return [...new Set(input.mappingsSSO.filter((m) => m !== ''))];
}

/** Adds members to the group the batch names by `groupSql` (a sub-select of its id). */
function addByGroupSql(db: Db, groupSql: SQL, userIds: readonly number[], createdBy: string): Statement[] {
  return chunksOf(userIds, 90).map((run) =>
    db
      .insert(groupUser)
      .select(
        sql`SELECT (${groupSql}) AS group_id, u.id AS user_id, ${createdBy} AS created_by, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS created_at
          FROM users u WHERE u.id IN (${sql.join(
            run.map((id) => sql`${id}`),
            sql`, `,
          )}) AND u.deleted_at IS NULL AND (${groupSql}) IS NOT NULL`,
      )
      .onConflictDoNothing(),
  );
}

export async function createGroup(db: Db, actor: Actor, input: GroupInput) {
  const { name, userIds } = await validate(db, input);
  const mappingsSSO = ssoMappings(input);
  const rootRole = input.rootRole ?? null;
  const insert = store.insertGroup(db, {
    name,
    description: input.description ?? null,
    mappingsSso: mappingsSSO,
    rootRoleId: rootRole,
    createdBy: actor.actorName,
  });
  const newest = sql`SELECT id FROM groups WHERE name = ${name} ORDER BY id DESC LIMIT 1`;
  const [[row]] = await db.batch([
    insert,
    ...addByGroupSql(db, newest, userIds, actor.actorName),
    auditEvent(db, actor, {
      type: 'group-created',
      data: { name, description: input.description ?? null, mappingsSSO, rootRole, users: userIds },
    }),
  ] as [typeof insert, ...Statement[]]);
  forgetMembers(userIds);
  return groupBody(row!);
}

export async function updateGroup(db: Db, actor: Actor, id: number | null, input: GroupInput) {
  const existing = await requireGroup(db, id);
  // While SCIM is on, the directory owns a provisioned group's name, members and SSO mappings.
  await refuseHandEditOfScimGroup(db, existing.id, {
    name: input.name.trim(),
    userIds: input.users.map((entry) => entry.user.id),
    mappingsSSO: ssoMappings(input),
  });
  const { name, userIds } = await validate(db, input, existing);
  const before = await membershipsOf(db, [existing.id]);
  const beforeIds = before.map((m) => m.userId);
  const added = userIds.filter((userId) => !beforeIds.includes(userId));
  const removed = before.filter((m) => !userIds.includes(m.userId));
  const changes = {
    name,
    description: input.description === undefined ? existing.description : input.description,
    mappingsSso: ssoMappings(input),
    rootRoleId: input.rootRole === undefined ? existing.rootRoleId : input.rootRole,
  };
  const after = { ...existing, ...changes };
  await runBatch(db, [
    store.updateGroup(db, existing.id, changes),
    ...addByGroupSql(db, sql`SELECT ${existing.id}`, added, actor.actorName),
    ...removed.map((m) => removalStatement(db, m)),
    auditEvent(db, actor, {
      type: 'group-updated',
      data: { ...groupBody(after), users: userIds },
      preData: { ...groupBody(existing), users: beforeIds },
    }),
  ]);
  // A root role change reaches every member; a membership change the people added or removed.
  forgetMembers(new Set([...beforeIds, ...userIds]));
  return groupBody(after);
}

function removalStatement(db: Db, m: Membership): Statement {
  // The membership delete alone, without its own event: `group-updated` names the change.
  return removeMembersStatements(db, { actorName: '', userId: 0 }, [m])[0]!;
}

export async function deleteGroup(db: Db, actor: Actor, id: number | null) {
  const existing = await requireGroup(db, id);
  const members = (await membershipsOf(db, [existing.id])).map((m) => m.userId);
  await runBatch(db, [
    store.deleteGroup(db, existing.id),
    auditEvent(db, actor, { type: 'group-deleted', preData: { ...groupBody(existing), users: members } }),
  ]);
  forgetMembers(members);
}

/**
 * Deletes every group a SCIM directory provisioned (`DELETE /api/admin/groups/scim-groups`),
 * as its people counterpart does: one `scim-groups-deleted` event, none per group. Their
 * memberships and project roles go with them (cascade), so their members' rights shrink.
 */
export async function deleteScimGroups(db: Db, actor: Actor) {
  const ids = await store.scimGroupIds(db);
  const members = (await membershipsOf(db, ids)).map((m) => m.userId);
  await runBatch(db, [store.deleteScimGroups(db), auditEvent(db, actor, { type: 'scim-groups-deleted', data: null })]);
  forgetMembers(members);
}

// ---------------------------------------------------------------------------------------
// Groups in project access

/** The groups with roles in a project, as Unleash's project access lists them. */
export async function projectGroups(db: Db, projectId: string) {
  const rows = await store.projectGroupRoles(db, projectId);
  const byGroup = new Map<number, { roleId: number; addedAt: string; roles: number[] }>();
  for (const row of rows) {
    const entry = byGroup.get(row.groupId);
    if (entry) entry.roles.push(row.roleId);
    else byGroup.set(row.groupId, { roleId: row.roleId, addedAt: row.addedAt, roles: [row.roleId] });
  }
  const listed = await withMembers(db, await store.groupsByIds(db, [...byGroup.keys()]));
  return listed.map((group) => ({ ...group, ...byGroup.get(group.id)! }));
}

/** The groups a picker offers (`GET /api/admin/user-admin/access`): Unleash's short form. */
export async function groupsForPicker(db: Db) {
  const listed = await withMembers(db, await store.allGroups(db));
  return listed.map((group) => ({ id: group.id, name: group.name, userCount: group.userCount, rootRole: group.rootRole }));
}

/** 400 unless every group exists; the ids, unique. */
export async function checkedGroups(db: Db, groupIds: readonly number[]): Promise<number[]> {
  const unique = [...new Set(groupIds)];
  const found = new Set((await store.groupsByIds(db, unique)).map((row) => row.id));
  const missing = unique.filter((id) => !found.has(id));
  if (missing.length > 0) throw badRequest(`Could not find group(s) with id ${missing.join(', ')}`);
  return unique;
}

/** The grants of `roleIds` to each group, each written only while `rolesExist` holds. */
export function grantGroupStatements(
  db: Db,
  principal: Principal,
  projectId: string,
  roleIds: readonly number[],
  groupIds: readonly number[],
  rolesExist: SQL,
) {
  return roleIds.flatMap((roleId) =>
    groupIds.map((groupId) => store.grantGroupStatement(db, projectId, roleId, groupId, principal.actorName, rolesExist)),
  );
}

export const rolesOfGroupInProject = store.rolesOfGroupInProject;
export const revokeGroupStatement = store.revokeGroupStatement;

/** Forgets the grants of a group's members (after its project roles changed). */
export async function forgetGroupMembers(db: Db, groupIds: readonly number[]): Promise<void> {
  forgetMembers((await membershipsOf(db, groupIds)).map((m) => m.userId));
}
