import { and, asc, count, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
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

export async function listOfUser(db: Db, userId: number): Promise<PersonalTokenRow[]> {
  return db.select(listed).from(personalAccessTokens).where(eq(personalAccessTokens.userId, userId)).orderBy(asc(personalAccessTokens.id));
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

export async function insert(db: Db, token: typeof personalAccessTokens.$inferInsert): Promise<PersonalTokenRow> {
  const [row] = await db.insert(personalAccessTokens).values(token).returning(listed);
  return row!;
}

/** The user's token by id: another user's token is as unknown as a missing one. */
export async function findOfUser(db: Db, userId: number, id: number): Promise<{ secretHash: string } | undefined> {
  const [row] = await db
    .select({ secretHash: personalAccessTokens.secretHash })
    .from(personalAccessTokens)
    .where(and(eq(personalAccessTokens.userId, userId), eq(personalAccessTokens.id, id)))
    .limit(1);
  return row;
}

export async function remove(db: Db, userId: number, id: number): Promise<void> {
  await db.delete(personalAccessTokens).where(and(eq(personalAccessTokens.userId, userId), eq(personalAccessTokens.id, id)));
}
