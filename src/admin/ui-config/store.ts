/** The Drizzle queries of the UI's configuration: rows of `settings` and splash screens seen. */
import { eq, sql } from 'drizzle-orm';
import { runBatch, type Db } from '../../db/client';
import { auditEvent, type Actor, type AuditEvent } from '../../db/events';
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

/** Writes a row of `settings` and its audit event in one batch. */
export async function writeSetting(db: Db, actor: Actor, name: string, content: unknown, event: AuditEvent): Promise<void> {
  await runBatch(db, [
    db.insert(settings).values({ name, content }).onConflictDoUpdate({ target: settings.name, set: { content } }),
    auditEvent(db, actor, event),
  ]);
}
