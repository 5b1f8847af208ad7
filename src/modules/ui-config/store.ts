/** The Drizzle queries of the UI's configuration: rows of `settings` and splash screens seen. */
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { settings, userSplash } from '../../db/schema';

/** A row of `settings` by Unleash's key, or undefined. */
export async function readSetting(db: Db, name: string): Promise<unknown> {
  const [row] = await db.select({ content: settings.content }).from(settings).where(eq(settings.name, name)).limit(1);
  return row?.content;
}

/** Records that a person has seen a splash screen (again: no change). */
export async function markSplashSeen(db: Db, userId: number, splashId: string): Promise<void> {
  await db
    .insert(userSplash)
    .values({ userId, splashId, seen: true })
    .onConflictDoUpdate({ target: [userSplash.userId, userSplash.splashId], set: { seen: sql`excluded.seen` } });
}
