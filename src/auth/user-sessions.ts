/**
 * A signed-in person's sessions: opened by every way of signing in (password, single sign-on),
 * so they live here with the other credentials rather than in one sign-in module. Only the
 * hash of a session's secret is stored; KV holds a copy for the hot path (token-records.ts).
 */
import { and, count, eq, gt, lte } from 'drizzle-orm';
import type { Env } from '../env';
import type { Db } from '../db/client';
import { sessions } from '../db/schema';
import { sha256Hex } from '../lib/encoding';
import { log } from '../log';
import { newSessionId, sessionTtlMs } from './credentials';
import { syncFromD1 } from './token-records';

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
    // Expired sessions are useless: they go when their user signs in again (and by the sweep).
    db.delete(sessions).where(and(eq(sessions.userId, userId), lte(sessions.expiresAt, now.toISOString()))),
    db
      .insert(sessions)
      .values({ idHash, id: crypto.randomUUID(), userId, createdAt: now.toISOString(), expiresAt: expiresAt.toISOString() }),
  ]);
  try {
    await syncFromD1(env, 'session', idHash);
  } catch (error) {
    log.warn('KV write for a new session failed; D1 fallback will serve it', { userId, error });
  }
  return { sessionId, expiresAt, activeSessions: await countActive(db, userId, now.toISOString()) };
}

async function countActive(db: Db, userId: number, now: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(sessions)
    .where(and(eq(sessions.userId, userId), gt(sessions.expiresAt, now)));
  return row?.n ?? 0;
}
