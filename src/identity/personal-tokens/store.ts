/**
 * The Drizzle queries of personal access tokens: a person's, and a service account's (its
 * tokens are personal access tokens of the account, as in Unleash).
 */
import { and, asc, count, eq, inArray } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import { personalAccessTokens } from '../../db/schema';

const listed = {
  id: personalAccessTokens.id,
  description: personalAccessTokens.description,
  expiresAt: personalAccessTokens.expiresAt,
  userId: personalAccessTokens.userId,
  createdAt: personalAccessTokens.createdAt,
  seenAt: personalAccessTokens.seenAt,
};
export type PersonalTokenRow = {
  id: number;
  description: string;
  expiresAt: string;
  userId: number;
  createdAt: string;
  seenAt: string | null;
};

/** The tokens of these users, oldest first. */
export async function listOfUsers(db: Db, userIds: readonly number[]): Promise<PersonalTokenRow[]> {
  if (userIds.length === 0) return [];
  return db
    .select(listed)
    .from(personalAccessTokens)
    .where(inArray(personalAccessTokens.userId, [...userIds]))
    .orderBy(asc(personalAccessTokens.id));
}

export async function countOfUser(db: Db, userId: number): Promise<number> {
  const [row] = await db.select({ n: count() }).from(personalAccessTokens).where(eq(personalAccessTokens.userId, userId));
  return row?.n ?? 0;
}

export async function descriptionTaken(db: Db, userId: number, description: string): Promise<boolean> {
  const rows = await db
    .select({ id: personalAccessTokens.id })
    .from(personalAccessTokens)
    .where(and(eq(personalAccessTokens.userId, userId), eq(personalAccessTokens.description, description)))
    .limit(1);
  return rows.length > 0;
}

export function insertStatement(db: Db, token: typeof personalAccessTokens.$inferInsert) {
  return db.insert(personalAccessTokens).values(token).returning(listed);
}

/** The user's token by id: another user's token is as unknown as a missing one. */
export async function findOfUser(db: Db, userId: number, id: number): Promise<(PersonalTokenRow & { secretHash: string }) | undefined> {
  const [row] = await db
    .select({ ...listed, secretHash: personalAccessTokens.secretHash })
    .from(personalAccessTokens)
    .where(and(eq(personalAccessTokens.userId, userId), eq(personalAccessTokens.id, id)))
    .limit(1);
  return row;
}

export function removeStatement(db: Db, userId: number, id: number): Statement {
  return db.delete(personalAccessTokens).where(and(eq(personalAccessTokens.userId, userId), eq(personalAccessTokens.id, id)));
}
