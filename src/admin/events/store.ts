/** Reads of the audit log (`events`), newest first. */
import { and, desc, gte, inArray, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { events, featureTag } from '../../db/schema';
import type { EventSearch } from './params';

export type EventRow = typeof events.$inferSelect;

/** What to search for: the search page's filters, or the deprecated search's (`anyText`). */
export type EventFilters = Partial<EventSearch> & { anyText?: string };

function conditions(search: EventFilters): SQL | undefined {
  const parts: (SQL | undefined)[] = [];
  if (search.feature) parts.push(inArray(events.featureName, search.feature));
  if (search.project) parts.push(inArray(events.project, search.project));
  if (search.type) parts.push(inArray(events.type, search.type));
  if (search.createdBy) parts.push(inArray(events.createdByUserId, search.createdBy));
  if (search.from) parts.push(gte(events.createdAt, search.from));
  if (search.before) parts.push(lt(events.createdAt, search.before));
  if (search.anyText) {
    // The deprecated search's free text: also the type and who acted (Unleash: ILIKE on each).
    const needle = search.anyText.toLowerCase();
    parts.push(
      or(
        sql`instr(lower(${events.type}), ${needle}) > 0`,
        sql`instr(lower(${events.createdBy}), ${needle}) > 0`,
        sql`instr(lower(coalesce(${events.data}, '')), ${needle}) > 0`,
        sql`instr(lower(coalesce(${events.preData}, '')), ${needle}) > 0`,
      ),
    );
  }
  if (search.query) {
    // Case-insensitive substring of the event's data (Unleash: data/pre_data/tags ILIKE).
    const needle = search.query.toLowerCase();
    parts.push(
      or(sql`instr(lower(coalesce(${events.data}, '')), ${needle}) > 0`, sql`instr(lower(coalesce(${events.preData}, '')), ${needle}) > 0`),
    );
  }
  return and(...parts);
}

export async function searchEvents(
  db: Db,
  search: EventFilters & { offset: number; limit: number },
  /** What the total counts; by default the same events as the page. */
  countOf: EventFilters = search,
): Promise<{ rows: EventRow[]; total: number }> {
  const where = conditions(search);
  const [rows, totals] = await db.batch([
    db.select().from(events).where(where).orderBy(desc(events.createdAt), desc(events.id)).limit(search.limit).offset(search.offset),
    db
      .select({ total: sql<number>`count(*)` })
      .from(events)
      .where(countOf === search ? where : conditions(countOf)),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

/** Current tags of the features the events name, by feature. */
export async function tagsOf(db: Db, featureNames: readonly string[]): Promise<Map<string, { value: string; type: string }[]>> {
  const names = [...new Set(featureNames)].slice(0, 90);
  const byFeature = new Map<string, { value: string; type: string }[]>();
  if (names.length === 0) return byFeature;
  const rows = await db.select().from(featureTag).where(inArray(featureTag.featureName, names));
  for (const row of rows) {
    const list = byFeature.get(row.featureName) ?? [];
    list.push({ value: row.tagValue, type: row.tagType });
    byFeature.set(row.featureName, list);
  }
  return byFeature;
}

/** Everyone who has acted, by user id: a person's name, else the name they acted under (Unleash's rule). */
export async function creators(db: Db): Promise<{ id: number; name: string }[]> {
  const rows = await db.all<{ id: number; name: string | null; username: string | null; email: string | null }>(sql`
    SELECT e.created_by_user_id AS id, COALESCE(u.name, MIN(e.created_by)) AS name, u.username AS username, u.email AS email
    FROM events e LEFT JOIN users u ON u.id = e.created_by_user_id
    WHERE e.created_by_user_id IS NOT NULL
    GROUP BY e.created_by_user_id
    ORDER BY e.created_by_user_id`);
  return rows.flatMap((row) => {
    const name = row.name || row.username || row.email;
    return name ? [{ id: Number(row.id), name: String(name) }] : [];
  });
}
