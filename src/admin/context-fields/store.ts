/** The Drizzle queries of context fields. */
import { asc, eq, isNull, sql } from 'drizzle-orm';
import { d1Statement, runD1Batch, type Db } from '../../db/client';
import { auditEventWhere, type Actor, type AuditEvent } from '../../db/events';
import { contextFields, featureStrategies } from '../../db/schema';

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

export type ContextFieldValues = Pick<typeof contextFields.$inferInsert, 'description' | 'stickiness' | 'sortOrder' | 'legalValues'>;

/**
 * Writes `statement` and its event only together: the event is recorded only when the
 * statement changed a row (a concurrent create or delete makes it change none). Returns
 * whether it did.
 */
async function writeWithEvent(db: Db, statement: { toSQL(): { sql: string; params: unknown[] } }, actor: Actor, event: AuditEvent) {
  const [result] = await runD1Batch(db, [d1Statement(db, statement), d1Statement(db, auditEventWhere(actor, event, sql`changes() = 1`))]);
  return result!.meta.changes > 0;
}

/** Inserts the field unless the name is taken; false when it was. */
export function insert(db: Db, actor: Actor, name: string, values: ContextFieldValues, event: AuditEvent): Promise<boolean> {
  return writeWithEvent(
    db,
    db
      .insert(contextFields)
      .values({ name, ...values })
      .onConflictDoNothing(),
    actor,
    event,
  );
}

/** Updates the field; false when it does not exist (any more). */
export function update(db: Db, actor: Actor, name: string, values: Partial<ContextFieldValues>, event: AuditEvent): Promise<boolean> {
  return writeWithEvent(
    db,
    db
      .update(contextFields)
      .set({ ...values, updatedAt: sql`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')` })
      .where(eq(contextFields.name, name)),
    actor,
    event,
  );
}

/** Deletes the field; false when it does not exist (any more). */
export function remove(db: Db, actor: Actor, name: string, event: AuditEvent): Promise<boolean> {
  return writeWithEvent(db, db.delete(contextFields).where(eq(contextFields.name, name)), actor, event);
}

/** Every strategy (archived flags' too, as Unleash lists them) with a constraint on the field. */
export function strategiesUsing(db: Db, name: string) {
  return db
    .select({
      id: featureStrategies.id,
      projectId: featureStrategies.projectName,
      featureName: featureStrategies.featureName,
      strategyName: featureStrategies.strategyName,
      environment: featureStrategies.environment,
    })
    .from(featureStrategies)
    .where(sql`EXISTS (SELECT 1 FROM json_each(${featureStrategies.constraints}) c WHERE json_extract(c.value, '$.contextName') = ${name})`)
    .orderBy(asc(featureStrategies.featureName), asc(featureStrategies.environment), asc(featureStrategies.sortOrder));
}
