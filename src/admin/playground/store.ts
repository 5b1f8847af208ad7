/**
 * What the playground shows beyond what SDKs are served: every strategy of an environment
 * with its id, title and disabled flag (SDKs never see disabled strategies), and the names
 * of the segments they use. The flags themselves and their evaluation come from the SDK
 * snapshot (client-api/snapshot.ts), the very data the frontend API evaluates.
 */
import { eq, inArray } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { featureStrategies, featureStrategySegment, segments } from '../../db/schema';
import { segmentLinksOfStrategies, STRATEGY_ORDER } from '../../db/lookups';

export async function readPlaygroundRows(db: Db, environment: string) {
  const [strategyRows, linkRows, segmentRows] = await db.batch([
    db
      .select({
        id: featureStrategies.id,
        featureName: featureStrategies.featureName,
        name: featureStrategies.strategyName,
        title: featureStrategies.title,
        parameters: featureStrategies.parameters,
        constraints: featureStrategies.constraints,
        variants: featureStrategies.variants,
        disabled: featureStrategies.disabled,
      })
      .from(featureStrategies)
      .where(eq(featureStrategies.environment, environment))
      .orderBy(...STRATEGY_ORDER),
    segmentLinksOfStrategies(db, eq(featureStrategies.environment, environment)),
    db
      .select({ id: segments.id, name: segments.name, constraints: segments.constraints })
      .from(segments)
      .where(inArray(segments.id, db.selectDistinct({ id: featureStrategySegment.segmentId }).from(featureStrategySegment))),
  ]);
  return { strategyRows, linkRows, segmentRows };
}

export type PlaygroundRows = Awaited<ReturnType<typeof readPlaygroundRows>>;
