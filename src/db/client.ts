import type { BatchItem } from 'drizzle-orm/batch';
import { drizzle, type DrizzleD1Database } from 'drizzle-orm/d1';
import type { Env } from '../env';
import * as schema from './schema';

export type Db = DrizzleD1Database<typeof schema>;

/** A Drizzle handle over D1; cheap, so one per request. */
export function getDb(env: Pick<Env, 'DB'>): Db {
  return drizzle(env.DB, { schema });
}

export type Statement = BatchItem<'sqlite'>;

/**
 * Runs statements as one D1 batch: atomic, all or nothing (D1 has no interactive
 * transactions). An empty list does nothing.
 */
export async function runBatch(db: Db, statements: readonly Statement[]): Promise<void> {
  const [first, ...rest] = statements;
  if (first === undefined) return;
  await db.batch([first, ...rest]);
}
