/**
 * Group membership, the shared read-model: the groups admin API, sign-in sync (SSO) and SCIM
 * all add and remove members through these functions, so that each change writes its
 * `group-user-added` / `group-user-removed` events (Unleash's data shapes: `{groupId, userId}`)
 * in the same batch, and the member's cached grants in this isolate are forgotten at once (a
 * removal takes effect on their next request).
 */
import { and, asc, eq, inArray } from 'drizzle-orm';
import { SYSTEM_USER_ID } from '../auth/principal';
import { forgetUser } from '../auth/user-principal';
import { chunkedInsert, chunksOf, D1_MAX_BOUND_PARAMETERS } from './chunk';
import { runBatch, type Db, type Statement } from './client';
import { auditEvents, type Actor } from './events';
import { groups, groupUser } from './schema';

/** `group_user.created_by` of memberships sign-in sync made: the only ones sync removes (as Unleash). */
export const SSO_SYNC_USER = 'SSO';

const GROUP_USER_ADDED = 'group-user-added';
const GROUP_USER_REMOVED = 'group-user-removed';

interface GroupRef {
  id: number;
  name: string;
  mappingsSSO: string[];
  rootRoleId: number | null;
  scimId: string | null;
}

export interface Membership {
  groupId: number;
  userId: number;
  createdBy: string | null;
  createdAt: string;
}

const groupRef = {
  id: groups.id,
  name: groups.name,
  mappingsSSO: groups.mappingsSso,
  rootRoleId: groups.rootRoleId,
  scimId: groups.scimId,
};

/** The groups a user is a member of, by name. */
export async function groupsOfUser(db: Db, userId: number): Promise<GroupRef[]> {
  return db
    .select(groupRef)
    .from(groupUser)
    .innerJoin(groups, eq(groups.id, groupUser.groupId))
    .where(eq(groupUser.userId, userId))
    .orderBy(asc(groups.name), asc(groups.id));
}

/** Every membership row of these groups (oldest first). */
export async function membershipsOf(db: Db, groupIds: readonly number[]): Promise<Membership[]> {
  const rows: Membership[] = [];
  for (const run of chunksOf(groupIds, D1_MAX_BOUND_PARAMETERS)) {
    if (run.length === 0) continue;
    rows.push(
      ...(await db
        .select({ groupId: groupUser.groupId, userId: groupUser.userId, createdBy: groupUser.createdBy, createdAt: groupUser.createdAt })
        .from(groupUser)
        .where(inArray(groupUser.groupId, run))
        .orderBy(asc(groupUser.createdAt), asc(groupUser.userId))),
    );
  }
  return rows;
}

/** One membership change: a member added to, or removed from, a group. */
export interface MembershipChange {
  groupId: number;
  userId: number;
}

/**
 * The statements that add these memberships (ignoring ones that exist) with their events: put
 * them in the caller's batch; `createdBy` is written on each row (`SSO_SYNC_USER` for sync).
 * Call `forgetMembers` after the batch ran.
 */
export function addMembersStatements(db: Db, actor: Actor, added: readonly MembershipChange[], createdBy: string): Statement[] {
  const inserts = chunkedInsert(added, 3, (run) =>
    db
      .insert(groupUser)
      .values(run.map(({ groupId, userId }) => ({ groupId, userId, createdBy })))
      .onConflictDoNothing(),
  );
  const events = auditEvents(
    db,
    actor,
    added.map(({ groupId, userId }) => ({ type: GROUP_USER_ADDED, data: { groupId, userId } })),
  );
  return [...inserts, ...events];
}

/** The statements that remove these memberships with their events (see `addMembersStatements`). */
export function removeMembersStatements(db: Db, actor: Actor, removed: readonly MembershipChange[]): Statement[] {
  const deletes = removed.map(({ groupId, userId }) =>
    db.delete(groupUser).where(and(eq(groupUser.groupId, groupId), eq(groupUser.userId, userId))),
  );
  const events = auditEvents(
    db,
    actor,
    removed.map(({ groupId, userId }) => ({ type: GROUP_USER_REMOVED, preData: { groupId, userId } })),
  );
  return [...deletes, ...events];
}

/** Forgets the cached grants of these people in this isolate: their next request reloads them. */
export function forgetMembers(userIds: Iterable<number>): void {
  for (const userId of userIds) forgetUser(userId);
}

/**
 * Adds and removes memberships in one batch with their events; memberships that already exist
 * (or are already gone) are skipped, so each event names a change that happened.
 */
export async function changeMemberships(
  db: Db,
  actor: Actor,
  change: { add?: readonly MembershipChange[]; remove?: readonly MembershipChange[]; createdBy?: string },
): Promise<{ added: MembershipChange[]; removed: MembershipChange[] }> {
  const wanted = [...(change.add ?? []), ...(change.remove ?? [])];
  const existing = new Set((await membershipsOf(db, [...new Set(wanted.map((m) => m.groupId))])).map((m) => `${m.groupId}:${m.userId}`));
  const key = (m: MembershipChange) => `${m.groupId}:${m.userId}`;
  const added = dedupe(change.add ?? []).filter((m) => !existing.has(key(m)));
  const removed = dedupe(change.remove ?? []).filter((m) => existing.has(key(m)));
  await runBatch(db, [
    ...addMembersStatements(db, actor, added, change.createdBy ?? actor.actorName),
    ...removeMembersStatements(db, actor, removed),
  ]);
  forgetMembers([...added, ...removed].map((m) => m.userId));
  return { added, removed };
}

function dedupe(list: readonly MembershipChange[]): MembershipChange[] {
  const seen = new Map<string, MembershipChange>();
  for (const m of list) seen.set(`${m.groupId}:${m.userId}`, { groupId: m.groupId, userId: m.userId });
  return [...seen.values()];
}

/**
 * Sign-in sync (Unleash's `syncExternalGroups`): the person joins every group one of whose
 * `mappingsSSO` is among the identity provider's `externalGroups`, and leaves the groups sync
 * put them in (`created_by = 'SSO'`) whose mappings no longer match. Memberships an admin or
 * SCIM made are never removed by sync; groups without mappings are left alone.
 */
export async function syncSsoMemberships(db: Db, userId: number, externalGroups: readonly string[]) {
  const claimed = new Set(externalGroups);
  const [mapped, mine] = await Promise.all([
    db.select({ id: groups.id, mappingsSSO: groups.mappingsSso }).from(groups),
    db.select({ groupId: groupUser.groupId, createdBy: groupUser.createdBy }).from(groupUser).where(eq(groupUser.userId, userId)),
  ]);
  const matching = new Set(mapped.filter((g) => g.mappingsSSO.some((m) => claimed.has(m))).map((g) => g.id));
  const withMappings = new Set(mapped.filter((g) => g.mappingsSSO.length > 0).map((g) => g.id));
  const memberOf = new Set(mine.map((m) => m.groupId));
  const add = [...matching].filter((id) => !memberOf.has(id)).map((groupId) => ({ groupId, userId }));
  const remove = mine
    .filter((m) => m.createdBy === SSO_SYNC_USER && withMappings.has(m.groupId) && !matching.has(m.groupId))
    .map((m) => ({ groupId: m.groupId, userId }));
  if (add.length === 0 && remove.length === 0) return { added: [], removed: [] };
  return changeMemberships(db, SSO_SYNC_ACTOR, { add, remove, createdBy: SSO_SYNC_USER });
}

const SSO_SYNC_ACTOR: Actor = { actorName: SSO_SYNC_USER, userId: SYSTEM_USER_ID };
