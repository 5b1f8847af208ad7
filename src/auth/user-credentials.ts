/**
 * Ending a person's credentials: their sessions (sign-out, password change) and, when the
 * person is deleted, their personal access tokens too. D1 rows go first, in the caller's
 * batch or here; then KV and this isolate forget them (`revokeCached` fails loudly).
 */
import { eq } from 'drizzle-orm';
import type { Env } from '../env';
import type { Db, Statement } from '../db/client';
import { personalAccessTokens, sessions } from '../db/schema';
import { revokeCached } from './token-records';
import { forgetUser } from './user-principal';

export interface UserCredentialHashes {
  sessions: string[];
  personalTokens: string[];
}

/** The hashes of a user's sessions and, if asked, personal tokens. */
export async function credentialHashesOf(
  db: Db,
  userId: number,
  options: { personalTokens?: boolean } = {},
): Promise<UserCredentialHashes> {
  const sessionRows = await db.select({ hash: sessions.idHash }).from(sessions).where(eq(sessions.userId, userId));
  const tokenRows = options.personalTokens
    ? await db.select({ hash: personalAccessTokens.secretHash }).from(personalAccessTokens).where(eq(personalAccessTokens.userId, userId))
    : [];
  return { sessions: sessionRows.map((row) => row.hash), personalTokens: tokenRows.map((row) => row.hash) };
}

/** Statements deleting the user's sessions and, if asked, personal tokens. */
export function deleteCredentialStatements(db: Db, userId: number, options: { personalTokens?: boolean } = {}): Statement[] {
  const statements: Statement[] = [db.delete(sessions).where(eq(sessions.userId, userId))];
  if (options.personalTokens) statements.push(db.delete(personalAccessTokens).where(eq(personalAccessTokens.userId, userId)));
  return statements;
}

/** After the D1 rows are gone: KV and this isolate forget the credentials (and the user's grants). */
export async function revokeCredentials(env: Env, userId: number, hashes: UserCredentialHashes): Promise<void> {
  forgetUser(userId);
  await Promise.all([
    ...hashes.sessions.map((hash) => revokeCached(env, 'session', hash)),
    ...hashes.personalTokens.map((hash) => revokeCached(env, 'pat', hash)),
  ]);
}

/** Ends every session of a user now: D1, then KV and this isolate. */
export async function endSessions(env: Env, db: Db, userId: number): Promise<number> {
  const hashes = await credentialHashesOf(db, userId);
  const [first, ...rest] = deleteCredentialStatements(db, userId);
  await db.batch([first!, ...rest]);
  await revokeCredentials(env, userId, hashes);
  return hashes.sessions.length;
}
