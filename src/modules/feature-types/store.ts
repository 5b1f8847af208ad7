/** The Drizzle queries of feature flag types. */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { featureTypes } from '../../db/schema';

export type FeatureTypeRow = typeof featureTypes.$inferSelect;

/** Seed order (release, experiment, operational, kill-switch, permission), as Unleash's. */
export async function listFeatureTypes(db: Db): Promise<FeatureTypeRow[]> {
  return db
    .select()
    .from(featureTypes)
    .orderBy(sql`rowid`);
}
