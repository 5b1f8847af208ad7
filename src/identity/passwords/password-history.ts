/**
 * A person's latest passwords, as Unleash 6 keeps them: every password set is recorded, the
 * last PASSWORD_HISTORY are kept, and a person changing their own password (or setting one
 * through a reset link) may not pick any of them again. Only hashes are stored.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import { usedPasswords, users } from '../../db/schema';
import { ApiError } from '../../http/errors';
import { verifyPassword } from './password';

/** How many of a person's latest passwords may not be used again (Unleash's disallowNPreviousPasswords). */
const PASSWORD_HISTORY = 5;

/** Unleash's PasswordPreviouslyUsedError message, under the seed's error name. */
const PASSWORD_PREVIOUSLY_USED = "You've previously used this password. Please use a new password.";

/**
 * Records `passwordHash` as the person's newest password and forgets all but the latest
 * PASSWORD_HISTORY. The insert happens only if the user row holds that hash by then, so it can
 * share a batch with a conditional update (a reset link spent by a concurrent request).
 */
export function recordPasswordStatements(db: Db, userId: number, passwordHash: string, now: string): Statement[] {
  return [
    db
      .insert(usedPasswords)
      .select(
        db
          .select({
            userId: users.id,
            passwordHash: sql<string>`${passwordHash}`.as('password_hash'),
            usedAt: sql<string>`${now}`.as('used_at'),
          })
          .from(users)
          .where(and(eq(users.id, userId), eq(users.passwordHash, passwordHash))),
      )
      .onConflictDoNothing(),
    db.delete(usedPasswords).where(
      and(
        eq(usedPasswords.userId, userId),
        sql`rowid NOT IN (SELECT rowid FROM ${usedPasswords} WHERE ${usedPasswords.userId} = ${userId}
            ORDER BY ${usedPasswords.usedAt} DESC, rowid DESC LIMIT ${PASSWORD_HISTORY})`,
      ),
    ),
  ];
}

/** Statements forgetting a person's passwords (their account is deleted). */
export function forgetPasswordsStatement(db: Db, userId: number): Statement {
  return db.delete(usedPasswords).where(eq(usedPasswords.userId, userId));
}

/**
 * 400 ValidationError with Unleash's message when `password` is one of the person's latest
 * passwords; the current one always counts, even if it was set where nothing recorded it. Each
 * stored hash costs one PBKDF2 check (at most PASSWORD_HISTORY + 1).
 */
export async function requireUnusedPassword(db: Db, userId: number, password: string): Promise<void> {
  const [recorded, [current]] = await Promise.all([
    db.select({ hash: usedPasswords.passwordHash }).from(usedPasswords).where(eq(usedPasswords.userId, userId)),
    db.select({ hash: users.passwordHash }).from(users).where(eq(users.id, userId)).limit(1),
  ]);
  const hashes = new Set(recorded.map((row) => row.hash));
  if (current?.hash) hashes.add(current.hash);
  for (const hash of hashes) {
    if (await verifyPassword(password, hash)) throw new ApiError(400, 'ValidationError', PASSWORD_PREVIOUSLY_USED);
  }
}
