/**
 * SCIM provisioning's settings (the `settings` row `scim`, as Unleash names it) and the rule
 * other modules share: while SCIM is enabled, a person or group the directory provisioned
 * (`scim_id` set) is changed only by the directory, so the admin API refuses hand edits
 * (Unleash Enterprise's `throwIfScimUser`). The token is kept only as its SHA-256.
 */
import { eq } from 'drizzle-orm';
import { ApiError } from '../http/errors';
import type { Db } from './client';
import { groups, groupUser, settings, users } from './schema';

export const SCIM_SETTINGS_NAME = 'scim';

export interface ScimSettings {
  enabled: boolean;
  assumeControlOfExisting: boolean;
  /** SHA-256 (hex) of the current SCIM token; null before one was generated. */
  tokenHash: string | null;
}

export async function readScimSettings(db: Db): Promise<ScimSettings> {
  const [row] = await db.select({ content: settings.content }).from(settings).where(eq(settings.name, SCIM_SETTINGS_NAME)).limit(1);
  const content = (row?.content ?? {}) as Partial<Record<keyof ScimSettings, unknown>>;
  return {
    enabled: content.enabled === true,
    assumeControlOfExisting: content.assumeControlOfExisting === true,
    tokenHash: typeof content.tokenHash === 'string' ? content.tokenHash : null,
  };
}

/** Unleash's 403 for a hand edit of a directory-managed person. */
function scimManagedUser(): ApiError {
  return new ApiError(403, 'ForbiddenError', 'This user is managed by your SCIM provider and cannot be changed manually');
}

/** Throws 403 when SCIM is enabled and the person was provisioned by it. */
export async function refuseHandEditOfScimUser(db: Db, userId: number | null): Promise<void> {
  if (userId === null) return;
  const [row] = await db.select({ scimId: users.scimId }).from(users).where(eq(users.id, userId)).limit(1);
  if (!row?.scimId) return;
  if ((await readScimSettings(db)).enabled) throw scimManagedUser();
}

/** What a hand edit of a group changes (the groups API's update). */
export interface GroupHandEdit {
  name?: string | undefined;
  /** The member user ids after the edit. */
  userIds?: readonly number[] | undefined;
  mappingsSSO?: readonly string[] | undefined;
}

/**
 * Throws 403 when SCIM is enabled, the group was provisioned by it, and the edit changes what
 * the directory owns: its name, its members or its SSO mappings. The root role, the description
 * and project access stay the admin's (the UI: "only the role and description can be changed
 * manually"). For the groups API's update.
 */
export async function refuseHandEditOfScimGroup(db: Db, groupId: number, edit: GroupHandEdit): Promise<void> {
  const [group] = await db
    .select({ scimId: groups.scimId, name: groups.name, mappingsSSO: groups.mappingsSso })
    .from(groups)
    .where(eq(groups.id, groupId))
    .limit(1);
  if (!group?.scimId || !(await readScimSettings(db)).enabled) return;
  const renamed = edit.name !== undefined && edit.name !== group.name;
  const remapped = edit.mappingsSSO !== undefined && JSON.stringify([...edit.mappingsSSO]) !== JSON.stringify(group.mappingsSSO);
  let regrouped = false;
  if (edit.userIds !== undefined) {
    const members = await db.select({ userId: groupUser.userId }).from(groupUser).where(eq(groupUser.groupId, groupId));
    const current = new Set(members.map((member) => member.userId));
    const wanted = new Set(edit.userIds);
    regrouped = current.size !== wanted.size || [...wanted].some((userId) => !current.has(userId));
  }
  if (renamed || remapped || regrouped) {
    throw new ApiError(
      403,
      'ForbiddenError',
      'This group is managed by your SCIM provider, only the role and description can be changed manually',
    );
  }
}
