import { is, SQL } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import { SQLiteAsyncDialect } from 'drizzle-orm/sqlite-core';
import { drizzle, type DrizzleD1Database } from 'drizzle-orm/d1';
import type { Env } from '../env';

export type Db = DrizzleD1Database & { $client: D1Database };

/**
 * A Drizzle handle over D1, one per call. Made without the schema: nothing here uses
 * Drizzle's relational queries (`db.query.*`), and with a schema every handle walked all
 * tables and relations again (`extractTablesRelationalConfig`), on every request.
 */
export function getDb(env: Pick<Env, 'DB'>): Db {
  return drizzle(env.DB);
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

const dialect = new SQLiteAsyncDialect();

/**
 * A statement for D1's own batch, from a drizzle query or from raw SQL. For conditional
 * writes (`INSERT … SELECT … WHERE`, `… RETURNING`) written as raw SQL: drizzle's batch cannot
 * bind parameters of raw SQL, and D1's results give each statement's `meta.changes`.
 */
export function d1Statement(db: Db, query: SQL | { toSQL(): { sql: string; params: unknown[] } }): D1PreparedStatement {
  const { sql, params } = is(query, SQL) ? dialect.sqlToQuery(query) : query.toSQL();
  return db.$client.prepare(sql).bind(...params);
}

/** Runs D1 statements as one atomic batch; each result says how many rows it changed. */
export async function runD1Batch(db: Db, statements: readonly D1PreparedStatement[]): Promise<D1Result[]> {
  return db.$client.batch([...statements]);
}
