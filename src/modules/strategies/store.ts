/** The Drizzle queries of strategy definitions. */
import { asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { strategies } from '../../db/schema';

export type StrategyRow = typeof strategies.$inferSelect;

export async function listStrategies(db: Db): Promise<StrategyRow[]> {
  return db.select().from(strategies).orderBy(asc(strategies.sortOrder), asc(strategies.name));
}

export async function findStrategy(db: Db, name: string): Promise<StrategyRow | undefined> {
  const [row] = await db.select().from(strategies).where(eq(strategies.name, name)).limit(1);
  return row;
}
