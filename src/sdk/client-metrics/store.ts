/** The usage counts SDKs report. */
import { and, asc, eq, gte } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { clientMetricsEnv } from '../../db/schema';

export interface Bucket {
  featureName: string;
  appName: string;
  environment: string;
  timestamp: string;
  yes: number;
  no: number;
  variants?: Record<string, number>;
}

/** A flag's hourly buckets from `since` on, oldest first. */
export async function bucketsSince(db: Db, featureName: string, since: number): Promise<Bucket[]> {
  const rows = await db
    .select()
    .from(clientMetricsEnv)
    .where(and(eq(clientMetricsEnv.featureName, featureName), gte(clientMetricsEnv.timestamp, new Date(since).toISOString())))
    .orderBy(asc(clientMetricsEnv.timestamp));
  return rows.map((row) => ({
    featureName: row.featureName,
    appName: row.appName,
    environment: row.environment,
    timestamp: new Date(row.timestamp).toISOString(),
    yes: row.yes,
    no: row.no,
    ...(Object.keys(row.variants).length > 0 ? { variants: row.variants } : {}),
  }));
}

/** Every application that ever reported the flag, by name. */
export async function applicationsOfFeature(db: Db, featureName: string): Promise<string[]> {
  const rows = await db
    .selectDistinct({ appName: clientMetricsEnv.appName })
    .from(clientMetricsEnv)
    .where(eq(clientMetricsEnv.featureName, featureName))
    .orderBy(asc(clientMetricsEnv.appName));
  return rows.map((row) => row.appName);
}
