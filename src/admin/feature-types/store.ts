/** The Drizzle queries of feature flag types. */
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { featureTypes } from '../../db/schema';

export type FeatureTypeRow = typeof featureTypes.$inferSelect;

/** Seed order (release, experiment, operational, kill-switch, permission, then 8.0's sunset), as Unleash's. */
export async function listFeatureTypes(db: Db): Promise<FeatureTypeRow[]> {
  return db
    .select()
    .from(featureTypes)
    .orderBy(sql`rowid`);
}

export async function findFeatureType(db: Db, id: string): Promise<FeatureTypeRow | undefined> {
  const [row] = await db.select().from(featureTypes).where(eq(featureTypes.id, id)).limit(1);
  return row;
}

export function setLifetime(db: Db, id: string, lifetimeDays: number | null) {
  return db.update(featureTypes).set({ lifetimeDays }).where(eq(featureTypes.id, id));
}
