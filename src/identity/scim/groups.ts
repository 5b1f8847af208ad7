/**
 * SCIM Groups: the rules between the routes and the stores. A write is one batch: the group
 * row, the membership changes through the shared read-model (src/db/groups.ts, which writes
 * `group-user-added` / `group-user-removed` as the groups API does) and the group's event;
 * every refusal (unknown member, taken name) is decided before it, so it writes nothing.
 */
import { runBatch, type Db, type Statement } from '../../db/client';
import { auditEvent } from '../../db/events';
import { addMembersStatements, forgetMembers, removeMembersStatements, type MembershipChange } from '../../db/groups';
import { isUniqueViolation } from '../../db/lookups';
import type { ScimSettings } from '../../db/scim';
import { invalidValue, resourceNotFound, uniqueness } from './errors';
import type { Filter } from './filter';
import { filterSql } from './filter-sql';
import * as store from './group-store';
import type { ScimGroupRow } from './group-store';
import { applyGroupPatch, groupResource, type GroupFields } from './group-resource';
import type { PatchOperation } from './patch';
import { SCIM_ACTOR } from './users';

/** `group_user.created_by` of memberships the directory made. */
const SCIM_MEMBERSHIP = 'SCIM';

async function requireGroup(db: Db, scimId: string): Promise<ScimGroupRow> {
  const row = await store.findScimGroup(db, scimId);
  if (!row) throw resourceNotFound('Group', scimId);
  return row;
}

async function resource(db: Db, row: ScimGroupRow, base: string) {
  return groupResource(row, (await store.membersOf(db, [row.id])).get(row.id) ?? [], base);
}

export async function getGroup(db: Db, scimId: string, base: string) {
  return resource(db, await requireGroup(db, scimId), base);
}

export async function listGroups(db: Db, filter: Filter | undefined, page: { startIndex: number; count: number }, base: string) {
  const where = filter === undefined ? undefined : filterSql(filter, store.GROUP_FILTER);
  const { total, rows } = await store.listScimGroups(db, where, page.startIndex - 1, page.count);
  const members = await store.membersOf(
    db,
    rows.map((row) => row.id),
  );
  return { total, resources: rows.map((row) => groupResource(row, members.get(row.id) ?? [], base)) };
}

/** The people the members name; 400 invalidValue naming the first that is not a provisioned User. */
async function memberIds(db: Db, fields: GroupFields): Promise<number[]> {
  const found = await store.usersByScimIds(db, fields.members);
  const missing = fields.members.find((id) => !found.has(id));
  if (missing !== undefined)
    throw invalidValue(`No User with id ${JSON.stringify(missing.slice(0, 100))}: members must be provisioned Users.`);
  return fields.members.map((id) => found.get(id)!);
}

function groupData(id: number, fields: Pick<GroupFields, 'displayName' | 'externalId'>, scimId: string) {
  return { id, name: fields.displayName, scimId, ...(fields.externalId !== null ? { scimExternalId: fields.externalId } : {}) };
}

/** The membership statements that take the group's provisioned members from `before` to `after` (user ids). */
function membershipStatements(db: Db, groupId: number, before: readonly number[], after: readonly number[]) {
  const had = new Set(before);
  const wanted = new Set(after);
  const added: MembershipChange[] = after.filter((userId) => !had.has(userId)).map((userId) => ({ groupId, userId }));
  const removed: MembershipChange[] = before.filter((userId) => !wanted.has(userId)).map((userId) => ({ groupId, userId }));
  return {
    statements: [...addMembersStatements(db, SCIM_ACTOR, added, SCIM_MEMBERSHIP), ...removeMembersStatements(db, SCIM_ACTOR, removed)],
    changed: [...added, ...removed].map((change) => change.userId),
  };
}

async function runGroupBatch(db: Db, statements: Statement[], name: string): Promise<void> {
  try {
    await runBatch(db, statements);
  } catch (error) {
    if (isUniqueViolation(error, 'groups.scim_id')) throw uniqueness(`The group "${name}" was provisioned meanwhile.`);
    throw error;
  }
}

/**
 * Creates a group (201), or with `assumeControlOfExisting` takes over the one group of that name
 * made by hand; 409 uniqueness when the name is taken otherwise.
 */
export async function createGroup(db: Db, fields: GroupFields, settings: ScimSettings, base: string) {
  const [taken, ...more] = await store.groupsNamed(db, fields.displayName);
  const members = await memberIds(db, fields);
  const scimId = crypto.randomUUID();
  if (taken !== undefined) {
    if (!settings.assumeControlOfExisting || taken.scimId !== null || more.length > 0) {
      throw uniqueness(`A group named "${fields.displayName}" already exists.`);
    }
    const current = [...((await store.membersOf(db, [taken.id])).get(taken.id) ?? [])].map((member) => member.userId);
    const membership = membershipStatements(db, taken.id, current, members);
    await runGroupBatch(
      db,
      [
        store.updateGroupStatement(db, taken.id, { name: fields.displayName, externalId: fields.externalId, scimId }),
        ...membership.statements,
        auditEvent(db, SCIM_ACTOR, {
          type: 'group-updated',
          data: groupData(taken.id, fields, scimId),
          preData: { id: taken.id, name: taken.name },
        }),
      ],
      fields.displayName,
    );
    forgetMembers(membership.changed);
    return resource(db, (await store.findScimGroup(db, scimId))!, base);
  }
  for (let attempt = 0; ; attempt++) {
    const group = {
      id: await store.nextGroupId(db),
      scimId,
      name: fields.displayName,
      externalId: fields.externalId,
      createdAt: new Date().toISOString(),
    };
    const membership = membershipStatements(db, group.id, [], members);
    try {
      await runGroupBatch(
        db,
        [
          store.insertGroupStatement(db, group),
          auditEvent(db, SCIM_ACTOR, { type: 'group-created', data: groupData(group.id, fields, scimId) }),
          ...membership.statements,
        ],
        fields.displayName,
      );
      forgetMembers(membership.changed);
      return resource(db, (await store.findScimGroup(db, scimId))!, base);
    } catch (error) {
      if (!isUniqueViolation(error, 'groups.id') || attempt >= 4) throw error;
    }
  }
}

async function saveGroup(db: Db, row: ScimGroupRow, fields: GroupFields, base: string) {
  if (fields.displayName.toLowerCase() !== row.name.toLowerCase() && (await store.groupsNamed(db, fields.displayName, row.id)).length > 0) {
    throw uniqueness(`A group named "${fields.displayName}" already exists.`);
  }
  const members = await memberIds(db, fields);
  const current = ((await store.membersOf(db, [row.id])).get(row.id) ?? []).map((member) => member.userId);
  const membership = membershipStatements(db, row.id, current, members);
  const renamed = fields.displayName !== row.name || fields.externalId !== row.externalId;
  await runGroupBatch(
    db,
    [
      ...(renamed
        ? [
            store.updateGroupStatement(db, row.id, { name: fields.displayName, externalId: fields.externalId }),
            auditEvent(db, SCIM_ACTOR, {
              type: 'group-updated',
              data: groupData(row.id, fields, row.scimId ?? ''),
              preData: groupData(row.id, { displayName: row.name, externalId: row.externalId }, row.scimId ?? ''),
            }),
          ]
        : []),
      ...membership.statements,
    ],
    fields.displayName,
  );
  forgetMembers(membership.changed);
  return resource(db, { ...row, name: fields.displayName, externalId: fields.externalId }, base);
}

export async function replaceGroup(db: Db, scimId: string, fields: GroupFields, base: string) {
  return saveGroup(db, await requireGroup(db, scimId), fields, base);
}

export async function patchGroup(db: Db, scimId: string, operations: readonly PatchOperation[], base: string) {
  const row = await requireGroup(db, scimId);
  const members = ((await store.membersOf(db, [row.id])).get(row.id) ?? []).map((member) => member.value);
  const fields = applyGroupPatch({ displayName: row.name, externalId: row.externalId, members }, operations);
  return saveGroup(db, row, fields, base);
}

/** Deletes the group with its memberships and project roles (`group-deleted`); its members' grants are read again. */
export async function deleteGroup(db: Db, scimId: string): Promise<void> {
  const row = await requireGroup(db, scimId);
  const members = await store.memberIdsOf(db, row.id);
  await runBatch(db, [
    store.deleteGroupStatement(db, row.id),
    auditEvent(db, SCIM_ACTOR, {
      type: 'group-deleted',
      preData: groupData(row.id, { displayName: row.name, externalId: row.externalId }, scimId),
    }),
  ]);
  forgetMembers(members);
}
