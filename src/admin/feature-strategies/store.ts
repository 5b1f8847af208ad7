/**
 * Drizzle queries of a flag's strategies in its environments and their segment links. The
 * reads keep Unleash's order (src/db/strategy-order.ts); the writes are statements for the
 * caller's batch, which ends in the audit event.
 */
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import { chunkedInsert } from '../../db/chunk';
import { featureStrategies, featureStrategySegment, projectEnvironments, segments, strategies } from '../../db/schema';
import { segmentLinksOfStrategies, STRATEGY_ORDER } from '../../db/lookups';

export type NewStrategyRow = typeof featureStrategies.$inferInsert;
export type StrategyChanges = Partial<NewStrategyRow>;

export async function strategyWithSegments(db: Db, featureName: string, environment: string, id: string) {
  const [rows, links] = await db.batch([
    db
      .select()
      .from(featureStrategies)
      .where(
        and(eq(featureStrategies.id, id), eq(featureStrategies.featureName, featureName), eq(featureStrategies.environment, environment)),
      )
      .limit(1),
    db
      .select({ segmentId: featureStrategySegment.segmentId })
      .from(featureStrategySegment)
      .where(eq(featureStrategySegment.featureStrategyId, id))
      .orderBy(asc(featureStrategySegment.segmentId)),
  ]);
  const row = rows[0];
  return row ? { row, segmentIds: links.map((link) => link.segmentId) } : undefined;
}

export async function strategiesWithSegments(db: Db, featureName: string, environment: string) {
  const [rows, links] = await db.batch([
    db
      .select()
      .from(featureStrategies)
      .where(and(eq(featureStrategies.featureName, featureName), eq(featureStrategies.environment, environment)))
      .orderBy(...STRATEGY_ORDER),
    segmentLinksOfStrategies(db, and(eq(featureStrategies.featureName, featureName), eq(featureStrategies.environment, environment))),
  ]);
  return { rows, links };
}

export async function strategyExists(db: Db, name: string): Promise<boolean> {
  const rows = await db.select({ name: strategies.name }).from(strategies).where(eq(strategies.name, name)).limit(1);
  return rows.length > 0;
}

/** The segments among `ids` that exist, by id, with their name and project (null: global). */
export async function existingSegments(db: Db, ids: readonly number[]): Promise<Map<number, { name: string; project: string | null }>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: segments.id, name: segments.name, project: segments.segmentProjectId })
    .from(segments)
    .where(inArray(segments.id, [...ids]));
  return new Map(rows.map((row) => [row.id, { name: row.name, project: row.project }]));
}

export async function nextStrategySortOrder(db: Db, featureName: string, environment: string): Promise<number> {
  const [row] = await db
    .select({ next: sql<number>`coalesce(max(${featureStrategies.sortOrder}) + 1, 0)` })
    .from(featureStrategies)
    .where(and(eq(featureStrategies.featureName, featureName), eq(featureStrategies.environment, environment)));
  return row?.next ?? 0;
}

export async function strategyCount(db: Db, featureName: string, environment: string): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)` })
    .from(featureStrategies)
    .where(and(eq(featureStrategies.featureName, featureName), eq(featureStrategies.environment, environment)));
  return row?.count ?? 0;
}

/** The project's settings for an environment, among them its default strategy. */
export async function projectEnvironment(db: Db, projectId: string, environment: string) {
  const [row] = await db
    .select()
    .from(projectEnvironments)
    .where(and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environmentName, environment)))
    .limit(1);
  return row;
}

export function insertStrategy(db: Db, row: NewStrategyRow): Statement {
  return db.insert(featureStrategies).values(row);
}

export function updateStrategy(db: Db, id: string, changes: StrategyChanges): Statement {
  return db.update(featureStrategies).set(changes).where(eq(featureStrategies.id, id));
}

/** Deletes the strategy; its segment links go with it (foreign key cascade). */
export function deleteStrategy(db: Db, id: string): Statement {
  return db.delete(featureStrategies).where(eq(featureStrategies.id, id));
}

/** Links a strategy to its segments (each once), in as few inserts as D1's parameter limit allows. */
export function linkSegments(db: Db, strategyId: string, segmentIds: readonly number[]): Statement[] {
  const links = [...new Set(segmentIds)].map((segmentId) => ({ featureStrategyId: strategyId, segmentId }));
  return chunkedInsert(links, 2, (run) => db.insert(featureStrategySegment).values(run));
}

export function unlinkSegments(db: Db, strategyId: string): Statement {
  return db.delete(featureStrategySegment).where(eq(featureStrategySegment.featureStrategyId, strategyId));
}

export function setStrategySortOrder(db: Db, featureName: string, environment: string, id: string, sortOrder: number): Statement {
  return db
    .update(featureStrategies)
    .set({ sortOrder })
    .where(
      and(eq(featureStrategies.id, id), eq(featureStrategies.featureName, featureName), eq(featureStrategies.environment, environment)),
    );
}
