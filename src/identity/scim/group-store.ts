/**
 * The Drizzle queries of SCIM Groups, on the groups tables (src/db/schema.ts) and the shared
 * membership read-model (src/db/groups.ts). A SCIM Group is a `groups` row with `scim_id`;
 * its SCIM members are the members that are provisioned people (their `scim_id` is the
 * member's `value`).
 */
import { and, asc, count, eq, inArray, isNotNull, ne, sql, type SQL } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import { groups, groupUser, users } from '../../db/schema';
import { chunksOf, D1_MAX_BOUND_PARAMETERS } from '../../db/chunk';
import { invalidFilter } from './errors';
import { filterSql, type FilterColumns } from './filter-sql';

export interface ScimGroupRow {
  id: number;
  scimId: string | null;
  externalId: string | null;
  name: string;
  createdAt: string;
}

export interface ScimMember {
  userId: number;
  /** The member's SCIM User id. */
  value: string;
  display: string | null;
}

const groupColumns = {
  id: groups.id,
  scimId: groups.scimId,
  externalId: groups.scimExternalId,
  name: groups.name,
  createdAt: groups.createdAt,
};

const MEMBER_FILTER: FilterColumns = {
  columns: {
    value: { expr: sql`${users.scimId}`, type: 'string', caseExact: true },
    display: { expr: sql`coalesce(${users.name}, ${users.username})`, type: 'string' },
  },
};

/** The attributes a Groups filter may name; `members[value eq "…"]` looks the members up. */
export const GROUP_FILTER: FilterColumns = {
  columns: {
    id: { expr: sql`${groups.scimId}`, type: 'string', caseExact: true },
    displayname: { expr: sql`${groups.name}`, type: 'string' },
    externalid: { expr: sql`${groups.scimExternalId}`, type: 'string', caseExact: true },
  },
  some: (attribute, filter) => {
    if (attribute !== 'members') throw invalidFilter(`Filtering on "${attribute.slice(0, 100)}" is not supported.`);
    return sql`EXISTS (SELECT 1 FROM ${groupUser} JOIN ${users} ON ${users.id} = ${groupUser.userId}
      WHERE ${groupUser.groupId} = ${groups.id} AND ${filterSql(filter, MEMBER_FILTER)})`;
  },
};

export async function findScimGroup(db: Db, scimId: string): Promise<ScimGroupRow | undefined> {
  const [row] = await db.select(groupColumns).from(groups).where(eq(groups.scimId, scimId)).limit(1);
  return row;
}

export async function listScimGroups(db: Db, where: SQL | undefined, offset: number, limit: number) {
  const condition = and(isNotNull(groups.scimId), where);
  const [total] = await db.select({ n: count() }).from(groups).where(condition);
  const rows =
    limit === 0 ? [] : await db.select(groupColumns).from(groups).where(condition).orderBy(asc(groups.id)).limit(limit).offset(offset);
  return { total: total?.n ?? 0, rows };
}

/** Groups (but `exceptId`) named `name`, compared case-insensitively. */
export async function groupsNamed(db: Db, name: string, exceptId?: number) {
  return db
    .select(groupColumns)
    .from(groups)
    .where(and(sql`lower(${groups.name}) = ${name.toLowerCase()}`, exceptId === undefined ? undefined : ne(groups.id, exceptId)))
    .limit(2);
}

/** The provisioned members of these groups, by group id. */
export async function membersOf(db: Db, groupIds: readonly number[]): Promise<Map<number, ScimMember[]>> {
  const members = new Map<number, ScimMember[]>(groupIds.map((id) => [id, []]));
  for (const run of chunksOf(groupIds, D1_MAX_BOUND_PARAMETERS)) {
    if (run.length === 0) continue;
    const rows = await db
      .select({
        groupId: groupUser.groupId,
        userId: users.id,
        value: users.scimId,
        display: sql<string | null>`coalesce(${users.name}, ${users.username})`,
      })
      .from(groupUser)
      .innerJoin(users, eq(users.id, groupUser.userId))
      .where(and(inArray(groupUser.groupId, run), isNotNull(users.scimId), isNotNull(users.username)))
      .orderBy(asc(groupUser.createdAt), asc(users.id));
    for (const row of rows) members.get(row.groupId)?.push({ userId: row.userId, value: row.value ?? '', display: row.display });
  }
  return members;
}

/** Provisioned people by SCIM id (the `value` of members), among `scimIds`. */
export async function usersByScimIds(db: Db, scimIds: readonly string[]): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const run of chunksOf(scimIds, D1_MAX_BOUND_PARAMETERS)) {
    if (run.length === 0) continue;
    const rows = await db
      .select({ id: users.id, scimId: users.scimId })
      .from(users)
      .where(and(inArray(users.scimId, run), isNotNull(users.username)));
    for (const row of rows) if (row.scimId !== null) found.set(row.scimId, row.id);
  }
  return found;
}

export async function nextGroupId(db: Db): Promise<number> {
  const [row] = await db.select({ next: sql<number>`COALESCE(MAX(${groups.id}), 0) + 1` }).from(groups);
  return Math.max(row?.next ?? 1, 1);
}

export function insertGroupStatement(
  db: Db,
  group: { id: number; scimId: string; name: string; externalId: string | null; createdAt: string },
) {
  return db.insert(groups).values({
    id: group.id,
    scimId: group.scimId,
    name: group.name,
    scimExternalId: group.externalId,
    createdAt: group.createdAt,
    createdBy: 'SCIM',
  });
}

export function updateGroupStatement(db: Db, id: number, change: { name: string; externalId: string | null; scimId?: string }): Statement {
  return db
    .update(groups)
    .set({ name: change.name, scimExternalId: change.externalId, ...(change.scimId !== undefined ? { scimId: change.scimId } : {}) })
    .where(eq(groups.id, id));
}

/** Deletes the group; its memberships and project roles go with it (ON DELETE CASCADE). */
export function deleteGroupStatement(db: Db, id: number): Statement {
  return db.delete(groups).where(eq(groups.id, id));
}

/** Ids of every member of a group (provisioned or not), for their cached grants. */
export async function memberIdsOf(db: Db, groupId: number): Promise<number[]> {
  const rows = await db.select({ userId: groupUser.userId }).from(groupUser).where(eq(groupUser.groupId, groupId));
  return rows.map((row) => row.userId);
}
