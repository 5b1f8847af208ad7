/**
 * The Drizzle queries of context fields: the global ones (`project` null) and, where a
 * function takes a `project`, that project's own (Unleash 8). One name, one field: a name is
 * unique across both.
 */
import { and, asc, eq, isNull, not, sql } from 'drizzle-orm';
import { d1Statement, runD1Batch, type Db } from '../../db/client';
import { auditEventWhere, type Actor, type AuditEvent } from '../../db/events';
import { contextFields, features, featureStrategies } from '../../db/schema';

export type ContextFieldRow = typeof contextFields.$inferSelect;

// Unleash counts the projects and active features whose strategies constrain on the field.
const usage = {
  usedInFeatures: sql<number>`(SELECT count(DISTINCT fs.feature_name) FROM feature_strategies fs JOIN features f ON f.name = fs.feature_name
    WHERE f.archived_at IS NULL AND EXISTS (SELECT 1 FROM json_each(fs.constraints) c WHERE json_extract(c.value, '$.contextName') = context_fields.name))`,
  usedInProjects: sql<number>`(SELECT count(DISTINCT fs.project_name) FROM feature_strategies fs JOIN features f ON f.name = fs.feature_name
    WHERE f.archived_at IS NULL AND EXISTS (SELECT 1 FROM json_each(fs.constraints) c WHERE json_extract(c.value, '$.contextName') = context_fields.name))`,
};

/** The global context fields (or the project's own) by name, with how often strategies use them. */
export function listWithUsage(db: Db, project?: string) {
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
    .where(project === undefined ? isNull(contextFields.project) : eq(contextFields.project, project))
    .orderBy(asc(contextFields.name));
}

/** A field by name, global or of any project. */
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

/** The field by name, while it is still the project's when a project is given. */
function named(name: string, project: string | undefined) {
  return and(eq(contextFields.name, name), project === undefined ? undefined : eq(contextFields.project, project));
}

/** Inserts the field (global, or the project's) unless the name is taken by any field; false when it was. */
export function insert(
  db: Db,
  actor: Actor,
  name: string,
  values: ContextFieldValues,
  event: AuditEvent,
  project?: string,
): Promise<boolean> {
  return writeWithEvent(
    db,
    db
      .insert(contextFields)
      .values({ name, ...values, ...(project === undefined ? {} : { project }) })
      .onConflictDoNothing(),
    actor,
    event,
  );
}

/** Updates the field; false when it does not exist (any more), or is no longer the project's. */
export function update(
  db: Db,
  actor: Actor,
  name: string,
  values: Partial<ContextFieldValues>,
  event: AuditEvent,
  project?: string,
): Promise<boolean> {
  return writeWithEvent(
    db,
    db
      .update(contextFields)
      .set({ ...values, updatedAt: sql`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')` })
      .where(named(name, project)),
    actor,
    event,
  );
}

/** Whether a strategy of an active flag constrains on the field (Unleash 8 then refuses its deletion). */
const usedByActiveFlags = (name: string) =>
  sql`EXISTS (SELECT 1 FROM feature_strategies fs JOIN features f ON f.name = fs.feature_name
    WHERE f.archived_at IS NULL AND EXISTS (SELECT 1 FROM json_each(fs.constraints) c WHERE json_extract(c.value, '$.contextName') = ${name}))`;

export async function inUse(db: Db, name: string): Promise<boolean> {
  const [row] = await db
    .select({ used: usedByActiveFlags(name) })
    .from(contextFields)
    .where(eq(contextFields.name, name))
    .limit(1);
  return Boolean(row?.used);
}

/**
 * Deletes the field unless a strategy of an active flag uses it (re-checked in the delete);
 * false when it does not exist (any more), is no longer the project's, or is in use.
 */
export function remove(db: Db, actor: Actor, name: string, event: AuditEvent, project?: string): Promise<boolean> {
  return writeWithEvent(db, db.delete(contextFields).where(and(named(name, project), not(usedByActiveFlags(name)))), actor, event);
}

/** Every strategy of an active flag (in `project`, when given) with a constraint on the field, as 8.2.0 lists them. */
export function strategiesUsing(db: Db, name: string, project?: string) {
  return db
    .select({
      id: featureStrategies.id,
      projectId: featureStrategies.projectName,
      featureName: featureStrategies.featureName,
      strategyName: featureStrategies.strategyName,
      environment: featureStrategies.environment,
    })
    .from(featureStrategies)
    .innerJoin(features, eq(features.name, featureStrategies.featureName))
    .where(
      and(
        isNull(features.archivedAt),
        project === undefined ? undefined : eq(featureStrategies.projectName, project),
        sql`EXISTS (SELECT 1 FROM json_each(${featureStrategies.constraints}) c WHERE json_extract(c.value, '$.contextName') = ${name})`,
      ),
    )
    .orderBy(asc(featureStrategies.featureName), asc(featureStrategies.environment), asc(featureStrategies.sortOrder));
}
