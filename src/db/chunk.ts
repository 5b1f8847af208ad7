/**
 * D1 binds at most 100 parameters per statement: a multi-row insert (or an `IN (...)` list)
 * past that fails, and the request with it. Every multi-row write goes through `chunkedInsert`,
 * which cuts the rows into as many statements as the bound needs; put them all in one
 * `db.batch` to keep the write atomic.
 */
export const D1_MAX_BOUND_PARAMETERS = 100;

/**
 * How many rows fit one statement when each row binds `paramsPerRow` parameters and the rest of
 * the statement binds `fixedParams` (an ON CONFLICT … SET or WHERE with values, say).
 * `paramsPerRow` counts every column the insert writes for a row.
 */
export function rowsPerStatement(paramsPerRow: number, fixedParams = 0): number {
  const rows = Math.floor((D1_MAX_BOUND_PARAMETERS - fixedParams) / paramsPerRow);
  if (!Number.isInteger(paramsPerRow) || paramsPerRow < 1 || rows < 1) {
    throw new Error(`no row of ${paramsPerRow} parameters fits a statement with ${fixedParams} fixed ones`);
  }
  return rows;
}

/** `items` in runs of at most `size`. */
export function chunksOf<T>(items: readonly T[], size: number): T[][] {
  const runs: T[][] = [];
  for (let i = 0; i < items.length; i += size) runs.push(items.slice(i, i + size));
  return runs;
}

/** One statement per run of rows that fits D1's parameter bound; none for no rows. */
export function chunkedInsert<Row, S>(rows: readonly Row[], paramsPerRow: number, build: (run: Row[]) => S, fixedParams = 0): S[] {
  return chunksOf(rows, rowsPerStatement(paramsPerRow, fixedParams)).map(build);
}
