import type { Env } from '../../env';
import type { Db } from '../../db/client';
import { newSessionId, sessionTtlMs } from '../../auth/credentials';
import { sha256Hex } from '../../lib/encoding';
import { syncFromD1 } from '../../auth/token-records';
import { endSessions } from '../../auth/user-credentials';
import { log } from '../../log';
import * as store from './store';

export interface NewSession {
  /** The secret for the cookie; only its hash is stored. */
  sessionId: string;
  expiresAt: Date;
  activeSessions: number;
}

/** Opens a session for a user who just proved who they are. */
export async function createSession(env: Env, db: Db, userId: number): Promise<NewSession> {
  const sessionId = newSessionId();
  const idHash = await sha256Hex(sessionId);
  const now = new Date();
  const expiresAt = new Date(now.getTime() + sessionTtlMs(env));
  await db.batch([
    store.deleteExpiredStatement(db, userId, now.toISOString()),
    store.insertSessionStatement(db, {
      idHash,
      id: crypto.randomUUID(),
      userId,
      createdAt: now.toISOString(),
      expiresAt: expiresAt.toISOString(),
    }),
  ]);
  try {
    await syncFromD1(env, 'session', idHash);
  } catch (error) {
    log.warn('KV write for a new session failed; D1 fallback will serve it', { userId, error });
  }
  return { sessionId, expiresAt, activeSessions: await store.countActive(db, userId, now.toISOString()) };
}

/** Signing out ends every session of the user, as Unleash 6.10.1 does. */
export async function signOut(env: Env, db: Db, userId: number): Promise<void> {
  await endSessions(env, db, userId);
}
