/**
 * A user's credential (session or personal access token) -> UserPrincipal. The user's name
 * and grants are cached in the isolate for as long as credentials are (ISOLATE_CACHE_TTL_MS),
 * so a signed-in request costs no D1 query on the hot path; a role change or deletion is
 * seen within that bound, and at once in the isolate that made it (`forgetUser` for one
 * person's roles, `forgetAllUsers` for a role's permissions).
 */
import { and, eq, isNull } from 'drizzle-orm';
import type { Env } from '../env';
import { getDb } from '../db/client';
import { users } from '../db/schema';
import { BoundedMap } from '../lib/bounded-map';
import { loadUserAccess, type Access } from './access';
import type { UserPrincipal } from './principal';
import { ISOLATE_CACHE_TTL_MS, type UserCredentialRecord } from './token-records';

const MAX_USERS = 5_000;

interface CachedUser {
  actorName: string;
  access: Access;
  until: number;
}

const cachedUsers = new BoundedMap<number, CachedUser>({ entries: MAX_USERS });

/**
 * This isolate's grants generation: moved by every forget. A load that started before a write
 * finished may have read the old grants; it serves its own request (which began before the
 * write) but is kept only if no forget came meanwhile, so the next request reads again.
 */
let generation = 0;

/** Forgets what this isolate knows of a user (after a role change, a deletion). */
export function forgetUser(userId: number): void {
  generation++;
  cachedUsers.delete(userId);
}

/**
 * Forgets every user's grants in this isolate: after a role's permissions change, which
 * reaches everyone holding the role (root role or project role in any project). Role edits
 * are rare; each user's next request reloads their grants with one query.
 */
export function forgetAllUsers(): void {
  generation++;
  cachedUsers.clear();
}

async function loadUser(env: Env, userId: number): Promise<CachedUser | null> {
  const [row] = await getDb(env)
    .select({ username: users.username, email: users.email })
    .from(users)
    .where(and(eq(users.id, userId), isNull(users.deletedAt), eq(users.isSystem, false)))
    .limit(1);
  if (!row) return null;
  const access = await loadUserAccess(env, userId);
  return { actorName: row.username ?? row.email ?? String(userId), access, until: Date.now() + ISOLATE_CACHE_TTL_MS };
}

/** The principal of a valid, unexpired credential; null when its user no longer exists. */
export async function userPrincipalFor(env: Env, record: UserCredentialRecord, via: UserPrincipal['via']): Promise<UserPrincipal | null> {
  let user = cachedUsers.get(record.userId);
  if (!user || user.until <= Date.now()) {
    const loadedAt = generation;
    user = (await loadUser(env, record.userId)) ?? undefined;
    if (!user) {
      cachedUsers.delete(record.userId);
      return null;
    }
    if (generation === loadedAt) cachedUsers.set(record.userId, user);
  }
  return { kind: 'user', userId: record.userId, actorName: user.actorName, via, credentialId: record.id, access: user.access };
}
