/**
 * SCIM provisioning's settings (the `settings` row `scim`, as Unleash names it) and the rule
 * other modules share: while SCIM is enabled, a person or group the directory provisioned
 * (`scim_id` set) is changed only by the directory, so the admin API refuses hand edits
 * (Unleash Enterprise's `throwIfScimUser`). The token is kept only as its SHA-256.
 */
import { eq } from 'drizzle-orm';
import { ApiError } from '../http/errors';
import type { Db } from './client';
import { settings, users } from './schema';

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
export function scimManagedUser(): ApiError {
  return new ApiError(403, 'ForbiddenError', 'This user is managed by your SCIM provider and cannot be changed manually');
}

/** Throws 403 when SCIM is enabled and the person was provisioned by it. */
export async function refuseHandEditOfScimUser(db: Db, userId: number | null): Promise<void> {
  if (userId === null) return;
  const [row] = await db.select({ scimId: users.scimId }).from(users).where(eq(users.id, userId)).limit(1);
  if (!row?.scimId) return;
  if ((await readScimSettings(db)).enabled) throw scimManagedUser();
}
