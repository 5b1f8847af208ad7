/** The Drizzle queries of a project's context fields (rows of `context_fields` with a `project`). */
import { and, asc, eq, sql } from 'drizzle-orm';
import { d1Statement, runD1Batch, type Db } from '../../db/client';
import { auditEventWhere, type Actor, type AuditEvent } from '../../db/events';
import { contextFields, featureStrategies, projects } from '../../db/schema';

export type ContextFieldRow = typeof contextFields.$inferSelect;
export type ContextFieldValues = Pick<typeof contextFields.$inferInsert, 'description' | 'stickiness' | 'sortOrder' | 'legalValues'>;

// As for global fields: the projects and active flags whose strategies constrain on the field.
const usage = {
  usedInFeatures: sql<number>`(SELECT count(DISTINCT fs.feature_name) FROM feature_strategies fs JOIN features f ON f.name = fs.feature_name
    WHERE f.archived_at IS NULL AND EXISTS (SELECT 1 FROM json_each(fs.constraints) c WHERE json_extract(c.value, '$.contextName') = context_fields.name))`,
  usedInProjects: sql<number>`(SELECT count(DISTINCT fs.project_name) FROM feature_strategies fs JOIN features f ON f.name = fs.feature_name
    WHERE f.archived_at IS NULL AND EXISTS (SELECT 1 FROM json_each(fs.constraints) c WHERE json_extract(c.value, '$.contextName') = context_fields.name))`,
};

/** The project's own fields by name, with how often strategies use them. */
export function listWithUsage(db: Db, project: string) {
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
    .where(eq(contextFields.project, project))
    .orderBy(asc(contextFields.name));
}

/** A field by name, global or of any project. */
export async function byName(db: Db, name: string): Promise<ContextFieldRow | undefined> {
  const [row] = await db.select().from(contextFields).where(eq(contextFields.name, name)).limit(1);
  return row;
}

export async function projectExists(db: Db, project: string): Promise<boolean> {
  const [row] = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, project)).limit(1);
  return row !== undefined;
}

async function writeWithEvent(db: Db, statement: { toSQL(): { sql: string; params: unknown[] } }, actor: Actor, event: AuditEvent) {
  const [result] = await runD1Batch(db, [d1Statement(db, statement), d1Statement(db, auditEventWhere(actor, event, sql`changes() = 1`))]);
  return result!.meta.changes > 0;
}

/** Inserts the project's field unless the name is taken (by any field); false when it was. */
export function insert(db: Db, actor: Actor, name: string, project: string, values: ContextFieldValues, event: AuditEvent) {
  return writeWithEvent(
    db,
    db
      .insert(contextFields)
      .values({ name, project, ...values })
      .onConflictDoNothing(),
    actor,
    event,
  );
}

/** Updates the field while it is still the project's; false otherwise. */
export function update(db: Db, actor: Actor, name: string, project: string, values: Partial<ContextFieldValues>, event: AuditEvent) {
  return writeWithEvent(
    db,
    db
      .update(contextFields)
      .set({ ...values, updatedAt: sql`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')` })
      .where(and(eq(contextFields.name, name), eq(contextFields.project, project))),
    actor,
    event,
  );
}

/** Deletes the field while it is still the project's; false otherwise. */
export function remove(db: Db, actor: Actor, name: string, project: string, event: AuditEvent) {
  return writeWithEvent(
    db,
    db.delete(contextFields).where(and(eq(contextFields.name, name), eq(contextFields.project, project))),
    actor,
    event,
  );
}

/** The project's strategies (archived flags' too) with a constraint on the field. */
export function strategiesUsing(db: Db, name: string, project: string) {
  return db
    .select({
      id: featureStrategies.id,
      projectId: featureStrategies.projectName,
      featureName: featureStrategies.featureName,
      strategyName: featureStrategies.strategyName,
      environment: featureStrategies.environment,
    })
    .from(featureStrategies)
    .where(
      and(
        eq(featureStrategies.projectName, project),
        sql`EXISTS (SELECT 1 FROM json_each(${featureStrategies.constraints}) c WHERE json_extract(c.value, '$.contextName') = ${name})`,
      ),
    )
    .orderBy(asc(featureStrategies.featureName), asc(featureStrategies.environment), asc(featureStrategies.sortOrder));
}
