/**
 * Drizzle queries of flag dependencies (`dependent_features`: one row per child and parent).
 * The link write re-checks its conditions in SQL, in the batch that writes it.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import { d1Statement, runD1Batch } from '../../db/client';
import { auditEvent, auditEventWhere, type Actor, type AuditEvent } from '../../db/events';
import { dependentFeatures, features } from '../../db/schema';

export async function dependencyLinks(db: Db, name: string) {
  const [asChild, asParent] = await db.batch([
    db.select().from(dependentFeatures).where(eq(dependentFeatures.child, name)),
    db.select().from(dependentFeatures).where(eq(dependentFeatures.parent, name)),
  ]);
  return { asChild, asParent };
}

/** The flags a child may depend on: active flags of its project, not itself and not children themselves. */
export async function possibleParents(db: Db, child: string): Promise<string[]> {
  const rows = await db.all<{ name: string }>(sql`SELECT f.name FROM features f
    WHERE f.project = (SELECT project FROM features WHERE name = ${child}) AND f.name <> ${child} AND f.archived_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM dependent_features d WHERE d.child = f.name)
    ORDER BY f.name`);
  return rows.map((row) => row.name);
}

/** The variant names of a flag's strategies and environments. */
export async function variantNames(db: Db, parent: string): Promise<string[]> {
  const rows = await db.all<{ name: string }>(sql`
    SELECT DISTINCT name FROM (
      SELECT json_extract(v.value, '$.name') AS name FROM feature_strategies fs, json_each(fs.variants) v WHERE fs.feature_name = ${parent}
      UNION ALL
      SELECT json_extract(v.value, '$.name') AS name FROM feature_environments fe, json_each(fe.variants) v WHERE fe.feature_name = ${parent}
    ) WHERE name IS NOT NULL ORDER BY name`);
  return rows.map((row) => row.name);
}

export interface Link {
  parent: string;
  child: string;
  enabled: boolean;
  variants: string[];
}

/**
 * Gives the child its one parent (replacing any other, as in Unleash) and records `event`,
 * only if both flags are still active and neither link would be transitive: every statement
 * re-checks that, so a parent archived (or a child made a parent) since the caller's checks
 * leaves nothing written. Returns whether it wrote.
 */
/** Whether the link may still be written: both flags active, neither link transitive. */
function stillAllowed(parent: string, child: string) {
  return sql`(SELECT count(*) FROM ${features} WHERE ${features.name} IN (${parent}, ${child}) AND ${features.archivedAt} IS NULL) = 2
    AND NOT EXISTS (SELECT 1 FROM ${dependentFeatures} WHERE ${dependentFeatures.parent} = ${child} OR ${dependentFeatures.child} = ${parent})`;
}

/**
 * The same link as statements of a larger batch (a change request's), which it aborts unless
 * the link was written (a parent archived or a child made a parent meanwhile).
 */
export function linkStatements(db: Db, actor: Actor, link: Link, event: AuditEvent): Statement[] {
  const { parent, child, enabled, variants } = link;
  return [
    db.delete(dependentFeatures).where(and(eq(dependentFeatures.child, child), stillAllowed(parent, child))),
    db
      .insert(dependentFeatures)
      .select(sql`SELECT ${parent}, ${child}, ${enabled ? 1 : 0}, ${JSON.stringify(variants)} WHERE ${stillAllowed(parent, child)}`),
    db.run(sql`SELECT CASE WHEN changes() = 1 THEN 1 ELSE json('dependency not written: it changed meanwhile') END`),
    auditEvent(db, actor, event),
  ];
}

export async function linkIfAllowed(db: Db, actor: Actor, link: Link, event: AuditEvent): Promise<boolean> {
  const { parent, child, enabled, variants } = link;
  const allowed = stillAllowed(parent, child);
  const [, added] = await runD1Batch(db, [
    d1Statement(db, db.delete(dependentFeatures).where(and(eq(dependentFeatures.child, child), allowed))),
    d1Statement(
      db,
      sql`INSERT INTO ${dependentFeatures} (parent, child, enabled, variants)
        SELECT ${parent}, ${child}, ${enabled ? 1 : 0}, ${JSON.stringify(variants)} WHERE ${allowed}`,
    ),
    // changes(): the rows the insert just above wrote, in this same batch.
    d1Statement(db, auditEventWhere(actor, event, sql`changes() = 1`)),
  ]);
  return added!.meta.changes > 0;
}

/** Removes the child's link to `parent`, or, without one, all its links. */
export function unlink(db: Db, child: string, parent?: string): Statement {
  return parent === undefined
    ? db.delete(dependentFeatures).where(eq(dependentFeatures.child, child))
    : db.delete(dependentFeatures).where(and(eq(dependentFeatures.child, child), eq(dependentFeatures.parent, parent)));
}

/** Links a new child (a clone) to a parent, for the caller's batch. */
export function insertLink(db: Db, link: Link): Statement {
  return db.insert(dependentFeatures).values(link);
}
