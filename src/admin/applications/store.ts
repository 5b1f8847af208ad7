/**
 * Reads and admin writes of the applications SDKs registered (client_applications), their
 * instances (client_instances) and the flags they reported (client_metrics_env). What SDKs
 * write lands here through the ingestion path (src/sdk/client-api/usage.ts); this module
 * only reads it, and lets an admin describe or remove an application.
 */
import { and, asc, desc, eq, gte, inArray, isNull, sql } from 'drizzle-orm';
import { d1Statement, runD1Batch, type Db } from '../../db/client';
import { announceApplicationIfNew, type AnnouncedApplication } from '../../db/events';
import { clientApplications, clientInstances, clientMetricsEnv, features, strategies } from '../../db/schema';

export type ApplicationRow = typeof clientApplications.$inferSelect;
export type InstanceRow = typeof clientInstances.$inferSelect;

export async function application(db: Db, appName: string): Promise<ApplicationRow | undefined> {
  const rows = await db.select().from(clientApplications).where(eq(clientApplications.appName, appName)).limit(1);
  return rows[0];
}

/** An application's instances, the most recently seen first. */
export async function instancesOf(db: Db, appName: string): Promise<InstanceRow[]> {
  return db
    .select()
    .from(clientInstances)
    .where(eq(clientInstances.appName, appName))
    .orderBy(desc(clientInstances.lastSeen), asc(clientInstances.instanceId));
}

/** Instances of an application in one environment seen since `since`, the most recent first (at most 1000, as Unleash). */
export async function recentInstances(db: Db, appName: string, environment: string, since: string): Promise<InstanceRow[]> {
  return db
    .select()
    .from(clientInstances)
    .where(and(eq(clientInstances.appName, appName), eq(clientInstances.environment, environment), gte(clientInstances.lastSeen, since)))
    .orderBy(desc(clientInstances.lastSeen), asc(clientInstances.instanceId))
    .limit(1000);
}

/** The names of the flags the application reported in hourly buckets from `since` on, by name. */
export async function seenFlagNames(db: Db, appName: string, since: string): Promise<string[]> {
  const rows = await db
    .selectDistinct({ featureName: clientMetricsEnv.featureName })
    .from(clientMetricsEnv)
    .where(and(eq(clientMetricsEnv.appName, appName), gte(clientMetricsEnv.timestamp, since)))
    .orderBy(asc(clientMetricsEnv.featureName));
  return rows.map((row) => row.featureName);
}

/** Live (not archived) flags among `names`. */
export async function liveFlags(db: Db, names: readonly string[]) {
  if (names.length === 0) return [];
  const found: (typeof features.$inferSelect)[] = [];
  for (let at = 0; at < names.length; at += 90) {
    found.push(
      ...(await db
        .select()
        .from(features)
        .where(and(inArray(features.name, names.slice(at, at + 90)), isNull(features.archivedAt)))),
    );
  }
  return found;
}

export async function allStrategies(db: Db) {
  return db.select().from(strategies);
}

/**
 * Creates the application, or sets the given descriptive fields of an existing one. A new one is
 * announced with an `application-created` event, in the same batch and only if the row did not
 * exist (Unleash announces every new application once, as its system user).
 */
export async function upsertApplication(
  db: Db,
  appName: string,
  fields: { description?: string; strategies?: string[]; url?: string; color?: string; icon?: string },
  now: string,
): Promise<void> {
  const set = { ...fields, updatedAt: now };
  const announced: AnnouncedApplication = {
    appName,
    createdAt: now,
    updatedAt: now,
    description: fields.description ?? null,
    strategies: fields.strategies ?? [],
    createdBy: null,
    url: fields.url ?? null,
    color: fields.color ?? null,
    icon: fields.icon ?? null,
  };
  await runD1Batch(db, [
    announceApplicationIfNew(db, announced),
    d1Statement(
      db,
      db
        .insert(clientApplications)
        .values({ appName, createdAt: now, ...set })
        .onConflictDoUpdate({ target: clientApplications.appName, set }),
    ),
  ]);
}

/** Removes the application and its instances in one batch; its metrics stay, as in Unleash. */
export async function deleteApplication(db: Db, appName: string): Promise<void> {
  await db.batch([
    db.delete(clientInstances).where(eq(clientInstances.appName, appName)),
    db.delete(clientApplications).where(eq(clientApplications.appName, appName)),
  ]);
}

export interface ApplicationPage {
  limit: number;
  offset: number;
  query: string | undefined;
  descending: boolean;
}

/** One page of applications sorted by name, how many match in all, and the environments each was seen in. */
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
  const names = rows.map((row) => row.appName);
  const environments = new Map<string, string[]>();
  for (let at = 0; at < names.length; at += 90) {
    const seen = await db
      .selectDistinct({ appName: clientInstances.appName, environment: clientInstances.environment })
      .from(clientInstances)
      .where(inArray(clientInstances.appName, names.slice(at, at + 90)))
      .orderBy(asc(clientInstances.appName), asc(clientInstances.environment));
    for (const row of seen) environments.set(row.appName, [...(environments.get(row.appName) ?? []), row.environment]);
  }
  return { rows, total: total[0]?.count ?? 0, environments };
}

/** Per environment the application reported in: the flags it named and their projects (null: no such flag). */
export async function reportedFlags(db: Db, appName: string) {
  return db
    .selectDistinct({ environment: clientMetricsEnv.environment, featureName: clientMetricsEnv.featureName, project: features.project })
    .from(clientMetricsEnv)
    .leftJoin(features, eq(features.name, clientMetricsEnv.featureName))
    .where(eq(clientMetricsEnv.appName, appName))
    .orderBy(asc(clientMetricsEnv.environment), asc(clientMetricsEnv.featureName));
}

/** Every SDK version instances report, with the applications using it. */
export async function applicationsBySdkVersion(db: Db): Promise<{ sdkVersion: string | null; appName: string }[]> {
  return db
    .selectDistinct({ sdkVersion: clientInstances.sdkVersion, appName: clientInstances.appName })
    .from(clientInstances)
    .orderBy(asc(clientInstances.sdkVersion), asc(clientInstances.appName));
}
