/** D1 reads for assertions: what the Worker stored, seen by the tests directly. */
import { env } from 'cloudflare:workers';

export async function rows<T = Record<string, unknown>>(query: string, ...params: unknown[]): Promise<T[]> {
  return (
    await env.DB.prepare(query)
      .bind(...params)
      .all<T>()
  ).results;
}

/** The `n` of the first row of `query` (`SELECT count(*) AS n …` and the like); fails when there is no row. */
export async function count(query: string, ...params: unknown[]): Promise<number> {
  const row = await env.DB.prepare(query)
    .bind(...params)
    .first<{ n: number }>();
  if (row === null) throw new Error(`no row for ${query}`);
  return row.n;
}
