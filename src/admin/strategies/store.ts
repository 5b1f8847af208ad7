/** The Drizzle queries of strategy definitions. */
import { asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { strategies, type StrategyParameterDoc } from '../../db/schema';

export type StrategyRow = typeof strategies.$inferSelect;

export async function listStrategies(db: Db): Promise<StrategyRow[]> {
  return db.select().from(strategies).orderBy(asc(strategies.sortOrder), asc(strategies.name));
}

export async function findStrategy(db: Db, name: string): Promise<StrategyRow | undefined> {
  const [row] = await db.select().from(strategies).where(eq(strategies.name, name)).limit(1);
  return row;
}

export interface StrategyValues {
  name: string;
  title: string | null;
  description: string | null;
  parameters: StrategyParameterDoc[];
}

export function insertStrategy(db: Db, values: StrategyValues) {
  return db.insert(strategies).values({ ...values, builtIn: false, deprecated: false });
}

/** Rewrites what a definition's form edits (not its deprecation). */
export function updateStrategy(db: Db, values: StrategyValues) {
  return db
    .update(strategies)
    .set({ title: values.title, description: values.description, parameters: values.parameters })
    .where(eq(strategies.name, values.name));
}

export function setDeprecated(db: Db, name: string, deprecated: boolean) {
  return db.update(strategies).set({ deprecated }).where(eq(strategies.name, name));
}

export function deleteStrategy(db: Db, name: string) {
  return db.delete(strategies).where(eq(strategies.name, name));
}
