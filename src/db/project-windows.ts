/**
 * The three counts both project overviews show for the last 30 days and the 30 before: flags
 * created, flags archived and events. Shared by the projects and project-insights modules,
 * which put the queries into their own batches.
 */
import { and, eq, gte, sql } from 'drizzle-orm';
import type { Db } from './client';
import { events, features } from './schema';

/** Queries for flags created, flags archived and events of the project: `current` starts the last window, `past` the one before. */
export function projectWindowQueries(db: Db, projectId: string, current: string, past: string) {
  const inProject = eq(features.project, projectId);
  return [
    db
      .select({
        current: sql<number>`coalesce(sum(${features.createdAt} >= ${current}), 0)`,
        past: sql<number>`coalesce(sum(${features.createdAt} >= ${past} AND ${features.createdAt} < ${current}), 0)`,
      })
      .from(features)
      .where(and(inProject, gte(features.createdAt, past))),
    db
      .select({
        current: sql<number>`coalesce(sum(${features.archivedAt} >= ${current}), 0)`,
        past: sql<number>`coalesce(sum(${features.archivedAt} >= ${past} AND ${features.archivedAt} < ${current}), 0)`,
      })
      .from(features)
      .where(and(inProject, gte(features.archivedAt, past))),
    db
      .select({
        current: sql<number>`coalesce(sum(${events.createdAt} >= ${current}), 0)`,
        past: sql<number>`coalesce(sum(${events.createdAt} < ${current}), 0)`,
      })
      .from(events)
      .where(and(eq(events.project, projectId), gte(events.createdAt, past))),
  ] as const;
}
