/** The Drizzle queries of context fields. */
import { asc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { contextFields } from '../../db/schema';

export type ContextFieldRow = typeof contextFields.$inferSelect;

// Unleash counts the projects and active features whose strategies constrain on the field.
const usage = {
  usedInFeatures: sql<number>`(SELECT count(DISTINCT fs.feature_name) FROM feature_strategies fs JOIN features f ON f.name = fs.feature_name
    WHERE f.archived_at IS NULL AND EXISTS (SELECT 1 FROM json_each(fs.constraints) c WHERE json_extract(c.value, '$.contextName') = context_fields.name))`,
  usedInProjects: sql<number>`(SELECT count(DISTINCT fs.project_name) FROM feature_strategies fs JOIN features f ON f.name = fs.feature_name
    WHERE f.archived_at IS NULL AND EXISTS (SELECT 1 FROM json_each(fs.constraints) c WHERE json_extract(c.value, '$.contextName') = context_fields.name))`,
};

/** The global context fields by name, with how often strategies use them. */
export function listWithUsage(db: Db) {
  return db
    .select({
      name: contextFields.name,
      description: contextFields.description,
      stickiness: contextFields.stickiness,
      sortOrder: contextFields.sortOrder,
      legalValues: contextFields.legalValues,
      createdAt: contextFields.createdAt,
      project: contextFields.project,
      updatedAt: contextFields.updatedAt,
      ...usage,
    })
    .from(contextFields)
    .where(isNull(contextFields.project))
    .orderBy(asc(contextFields.name));
}

export async function byName(db: Db, name: string): Promise<ContextFieldRow | undefined> {
  const [row] = await db.select().from(contextFields).where(eq(contextFields.name, name)).limit(1);
  return row;
}
