/**
 * Reset tokens: the link Unleash gives a new user (`/new-user?token=<secret>`, the create-user
 * answer's `inviteLink`), on which they choose their password. The UI's new-user page reads
 * `GET /auth/reset/validate?token=` and posts `/auth/reset/password`. The secret is shown
 * once; D1 keeps its SHA-256. A token works once, until it expires.
 */
import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import { randomHex } from '../../auth/secrets';
import { sha256Hex } from '../../lib/encoding';
import { endSessions } from '../../auth/user-credentials';
import type { Db } from '../../db/client';
import type { Actor } from '../../db/events';
import { resetTokens, roles, roleUser, users } from '../../db/schema';
import type { Env } from '../../env';
import { ApiError } from '../../http/errors';
import { hashPassword } from '../passwords/password';
import { recordPasswordStatements, requireUnusedPassword } from '../passwords/password-history';
import { clearFailuresStatement } from '../passwords/login-limits';
import { requireStrongPassword } from '../passwords/password-policy';

/** How long a new user's link works (Unleash's own default is not documented; a week fits an invite). */
const RESET_TOKEN_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface NewResetToken {
  secret: string;
  /** The insert, to run in the same batch as the user it belongs to. */
  statement: ReturnType<typeof insertStatement>;
}

function insertStatement(db: Db, row: typeof resetTokens.$inferInsert) {
  return db.insert(resetTokens).values(row);
}

export async function newResetToken(db: Db, userId: number, actor: Actor, now = Date.now()): Promise<NewResetToken> {
  const secret = randomHex(32);
  const statement = insertStatement(db, {
    secretHash: await sha256Hex(secret),
    userId,
    expiresAt: new Date(now + RESET_TOKEN_TTL_MS).toISOString(),
    createdBy: actor.actorName,
  });
  return { secret, statement };
}

/**
 * Ends the person's open links (expiry set to now), as Unleash does whenever their password
 * changes: a link handed out before must not set another password afterwards.
 */
export function expireResetTokensStatement(db: Db, userId: number, now: string) {
  return db
    .update(resetTokens)
    .set({ expiresAt: now })
    .where(and(eq(resetTokens.userId, userId), isNull(resetTokens.usedAt), gt(resetTokens.expiresAt, now)));
}

/** Unleash's answer for a token that is unknown, used or expired. */
function invalidToken(): ApiError {
  return new ApiError(401, 'InvalidTokenError', 'Token was not valid');
}

async function liveToken(db: Db, secret: string) {
  if (secret.length === 0 || secret.length > 256 || !secret.isWellFormed()) throw invalidToken();
  const secretHash = await sha256Hex(secret);
  const [row] = await db
    .select({ secretHash: resetTokens.secretHash, userId: resetTokens.userId, createdBy: resetTokens.createdBy })
    .from(resetTokens)
    .innerJoin(users, eq(users.id, resetTokens.userId))
    .where(
      and(
        eq(resetTokens.secretHash, secretHash),
        isNull(resetTokens.usedAt),
        gt(resetTokens.expiresAt, new Date().toISOString()),
        isNull(users.deletedAt),
      ),
    )
    .limit(1);
  if (!row) throw invalidToken();
  return row;
}

/** `GET /auth/reset/validate?token=`: who the link is for, in Unleash's tokenUserSchema. */
export async function validateResetToken(db: Db, secret: string) {
  const token = await liveToken(db, secret);
  const [user] = await db.select({ id: users.id, name: users.name, email: users.email }).from(users).where(eq(users.id, token.userId));
  const [role] = await db
    .select({ id: roles.id, description: roles.description, type: roles.type, name: roles.name })
    .from(roleUser)
    .innerJoin(roles, eq(roles.id, roleUser.roleId))
    .where(and(eq(roleUser.userId, token.userId), sql`${roles.type} IN ('root', 'root-custom')`))
    .limit(1);
  return {
    token: secret,
    createdBy: token.createdBy,
    email: user?.email ?? null,
    name: user?.name ?? null,
    id: token.userId,
    ...(role ? { role } : {}),
  };
}

/**
 * `POST /auth/reset/password`: sets the password and spends the token in one batch whose
 * statements re-check that the token is still unused, so two requests with one token cannot
 * both set a password. As in Unleash, the password may not be one of the person's last 5;
 * their sessions end and their other open links expire.
 */
export async function resetPassword(env: Env, db: Db, secret: string, password: string): Promise<void> {
  const token = await liveToken(db, secret);
  requireStrongPassword(password);
  await requireUnusedPassword(db, token.userId, password);
  const passwordHash = await hashPassword(password);
  const now = new Date().toISOString();
  const unspent = and(eq(resetTokens.secretHash, token.secretHash), isNull(resetTokens.usedAt), gt(resetTokens.expiresAt, now));
  const [, spent] = await db.batch([
    db
      .update(users)
      .set({ passwordHash, loginAttempts: 0, lastFailedLoginAt: null, updatedAt: now })
      .where(and(eq(users.id, token.userId), sql`EXISTS (SELECT 1 FROM ${resetTokens} WHERE ${unspent})`)),
    db.update(resetTokens).set({ usedAt: now }).where(unspent),
    ...recordPasswordStatements(db, token.userId, passwordHash, now),
    clearFailuresStatement(db, token.userId),
    expireResetTokensStatement(db, token.userId, now),
  ]);
  if (spent.meta.changes === 0) throw invalidToken();
  await endSessions(env, db, token.userId);
}
