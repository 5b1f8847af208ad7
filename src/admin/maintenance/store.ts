/** The Drizzle queries of maintenance mode: one row of `settings`. */
import { eq } from 'drizzle-orm';
import { runBatch, type Db } from '../../db/client';
import { auditEvent, type Actor, type AuditEvent } from '../../db/events';
import { settings } from '../../db/schema';

/** Unleash's settings key. */
export const MAINTENANCE_KEY = 'maintenance.mode';

export async function read(db: Db): Promise<{ enabled?: unknown } | undefined> {
  const [row] = await db.select({ content: settings.content }).from(settings).where(eq(settings.name, MAINTENANCE_KEY)).limit(1);
  return row?.content as { enabled?: unknown } | undefined;
}

export async function write(db: Db, actor: Actor, content: { enabled: boolean }, event: AuditEvent): Promise<void> {
  await runBatch(db, [
    db.insert(settings).values({ name: MAINTENANCE_KEY, content }).onConflictDoUpdate({ target: settings.name, set: { content } }),
    auditEvent(db, actor, event),
  ]);
}
