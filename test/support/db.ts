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

/** An audit event as stored (column names as in D1; `data` and `pre_data` are JSON text). */
export interface StoredEvent {
  id: number;
  type: string;
  created_by: string;
  created_by_user_id: number | null;
  created_at: string;
  project: string | null;
  environment: string | null;
  feature_name: string | null;
  data: string | null;
  pre_data: string | null;
}

/** The newest audit event of `type`, or null. */
export async function lastEvent(type: string): Promise<StoredEvent | null> {
  return env.DB.prepare('SELECT * FROM events WHERE type = ? ORDER BY id DESC LIMIT 1').bind(type).first<StoredEvent>();
}

/** The audit events written after event `id` (see `maxEventId`), oldest first. */
export async function eventsSince(id: number): Promise<StoredEvent[]> {
  return rows<StoredEvent>('SELECT * FROM events WHERE id > ? ORDER BY id', id);
}

/** A stored event's JSON read back: `data`, `preData` and who made it. */
export function parsedEvent(event: StoredEvent | null) {
  return (
    event && {
      type: event.type,
      createdBy: event.created_by,
      data: event.data === null ? null : JSON.parse(event.data),
      preData: event.pre_data === null ? null : JSON.parse(event.pre_data),
    }
  );
}
