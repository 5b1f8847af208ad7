/** The usage counts SDKs report, and the applications they registered. */
import { and, asc, eq, gte, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { clientApplications, clientMetricsEnv } from '../../db/schema';

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

export interface ApplicationPage {
  limit: number;
  offset: number;
  query: string | undefined;
  descending: boolean;
}

/** One page of registered applications, sorted by name, and how many match in all. */
export async function applicationPage(db: Db, page: ApplicationPage) {
  const where = page.query ? sql`instr(lower(${clientApplications.appName}), ${page.query.toLowerCase()}) > 0` : undefined;
  const [rows, total] = await db.batch([
    db
      .select()
      .from(clientApplications)
      .where(where)
      .orderBy(page.descending ? sql`${clientApplications.appName} DESC` : asc(clientApplications.appName))
      .limit(page.limit)
      .offset(page.offset),
    db
      .select({ count: sql<number>`count(*)` })
      .from(clientApplications)
      .where(where),
  ]);
  return { rows, total: total[0]?.count ?? 0 };
}
