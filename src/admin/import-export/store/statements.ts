/** How import and export hand drizzle `sql` to D1: one prepared statement, one atomic batch, the rows of an answer. */
import type { SQL } from 'drizzle-orm';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';

// Drizzle's D1 batch cannot carry raw SQL with parameters, so these statements are built
// with drizzle's `sql` template and handed to D1 directly.
const dialect = new SQLiteSyncDialect();

export type Statement = D1PreparedStatement;

/** A D1 statement from a drizzle `sql` template (or a drizzle query builder). */
export function prepare(d1: D1Database, query: SQL | { toSQL(): { sql: string; params: unknown[] } }): Statement {
  const built = 'toSQL' in query ? query.toSQL() : dialect.sqlToQuery(query);
  return d1.prepare(built.sql).bind(...built.params);
}

/** Runs statements as one atomic D1 batch. */
export async function runStatements(d1: D1Database, statements: Statement[]): Promise<D1Result[]> {
  if (statements.length === 0) return [];
  return d1.batch(statements);
}

export function rowsOf<T>(result: D1Result | undefined): T[] {
  return (result?.results ?? []) as T[];
}
