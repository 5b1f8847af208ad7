/**
 * How a flag's strategies are read wherever they are read (the admin API, the playground, the
 * SDK engine): Unleash's order, and their segment links.
 */
import { asc, eq, type SQL } from 'drizzle-orm';
import type { Db } from './client';
import { featureStrategies, featureStrategySegment } from './schema';

/** Unleash's order of a feature's strategies: sort order, then creation, then id. */
export const STRATEGY_ORDER = [asc(featureStrategies.sortOrder), asc(featureStrategies.createdAt), asc(featureStrategies.id)] as const;

/** The segments used by the strategies `where` picks, as (strategy, segment) links by segment id. */
export function segmentLinksOfStrategies(db: Db, where: SQL | undefined) {
  return db
    .select({ strategyId: featureStrategySegment.featureStrategyId, segmentId: featureStrategySegment.segmentId })
    .from(featureStrategySegment)
    .innerJoin(featureStrategies, eq(featureStrategies.id, featureStrategySegment.featureStrategyId))
    .where(where)
    .orderBy(asc(featureStrategySegment.segmentId));
}
