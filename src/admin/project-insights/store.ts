/**
 * Reads behind a project's Applications, Health and Insights pages: which applications
 * reported the project's flags, its flags' health and lifecycle, and its activity.
 */
import { and, asc, desc, eq, gte, inArray, isNull, ne, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { projectWindowQueries } from '../../db/project-windows';
import {
  apiTokenProject,
  clientApplications,
  clientInstances,
  clientMetricsEnv,
  environments,
  events,
  featureEnvironments,
  featureLifecycles,
  featureStrategies,
  featureTag,
  featureTypes,
  features,
  projectEnvironments,
  projects,
  roles,
  roleUser,
  segments,
} from '../../db/schema';

export type ProjectRow = typeof projects.$inferSelect;
export type FeatureRow = typeof features.$inferSelect;

/** The project, if it exists and is not archived. */
export async function liveProject(db: Db, projectId: string): Promise<ProjectRow | undefined> {
  const rows = await db
    .select()
    .from(projects)
    .where(and(eq(projects.id, projectId), isNull(projects.archivedAt)))
    .limit(1);
  return rows[0];
}

/**
 * Every (application, environment, instance, SDK version) of the registered applications that
 * reported one of the project's flags; an application with no instance there has one row with
 * a null instance.
 */
export async function applicationRows(db: Db, projectId: string) {
  return db.all<{ appName: string; environment: string; instanceId: string | null; sdkVersion: string | null }>(sql`
    WITH reported AS (
      SELECT DISTINCT ${clientMetricsEnv.appName} AS app_name, ${clientMetricsEnv.environment} AS environment
      FROM ${clientMetricsEnv} JOIN ${features} ON ${features.name} = ${clientMetricsEnv.featureName}
      WHERE ${features.project} = ${projectId}
    )
    SELECT r.app_name AS appName, r.environment AS environment, ci.instance_id AS instanceId, ci.sdk_version AS sdkVersion
    FROM reported r
    JOIN ${clientApplications} ca ON ca.app_name = r.app_name
    LEFT JOIN ${clientInstances} ci ON ci.app_name = r.app_name AND ci.environment = r.environment
    ORDER BY r.app_name, r.environment, ci.instance_id`);
}

/** SDK versions of the applications that reported the project's flags, with those applications. */
export async function sdkVersionsOfProject(db: Db, projectId: string) {
  return db.all<{ sdkVersion: string | null; appName: string }>(sql`
    SELECT DISTINCT ci.sdk_version AS sdkVersion, ci.app_name AS appName
    FROM ${clientInstances} ci
    WHERE ci.app_name IN (
      SELECT ${clientMetricsEnv.appName} FROM ${clientMetricsEnv} JOIN ${features} ON ${features.name} = ${clientMetricsEnv.featureName}
      WHERE ${features.project} = ${projectId}
    )
    ORDER BY ci.sdk_version, ci.app_name`);
}

/** The project's flags, live or archived. */
export async function flagsOf(db: Db, projectId: string, archived: boolean): Promise<FeatureRow[]> {
  return db
    .select()
    .from(features)
    .where(and(eq(features.project, projectId), archived ? sql`${features.archivedAt} IS NOT NULL` : isNull(features.archivedAt)))
    .orderBy(asc(features.createdAt), asc(features.name));
}

export async function lifetimes(db: Db): Promise<Map<string, number | null>> {
  const rows = await db.select({ id: featureTypes.id, lifetimeDays: featureTypes.lifetimeDays }).from(featureTypes);
  return new Map(rows.map((row) => [row.id, row.lifetimeDays]));
}

/** For each release flag of the project: when it was created and first enabled in a production environment after that. */
export async function timeToProductionDates(db: Db, projectId: string) {
  return db.all<{ name: string; enabled: string; created: string }>(sql`
    SELECT ${events.featureName} AS name, min(${events.createdAt}) AS enabled, ${features.createdAt} AS created
    FROM ${events}
    JOIN ${environments} ON ${environments.name} = ${events.environment}
    JOIN ${features} ON ${features.name} = ${events.featureName}
    WHERE ${events.type} = 'feature-environment-enabled' AND ${environments.type} = 'production'
      AND ${features.type} = 'release' AND ${events.createdAt} > ${features.createdAt} AND ${features.project} = ${projectId}
    GROUP BY ${events.featureName}
    ORDER BY ${events.featureName}`);
}

/** Users holding a project role in the project, and how many of them were added since `since`. */
export async function memberCounts(db: Db, projectId: string, since: string) {
  const rows = await db
    .select({
      members: sql<number>`count(DISTINCT ${roleUser.userId})`,
      added: sql<number>`count(DISTINCT CASE WHEN ${roleUser.createdAt} >= ${since} THEN ${roleUser.userId} END)`,
    })
    .from(roleUser)
    .innerJoin(roles, eq(roles.id, roleUser.roleId))
    .where(and(eq(roleUser.project, projectId), ne(roles.type, 'root'), ne(roles.type, 'root-custom')));
  return { members: rows[0]?.members ?? 0, added: rows[0]?.added ?? 0 };
}

/** Flags created and archived, and events, in the last 30 days and the 30 before. */
export async function windowCounts(db: Db, projectId: string, current: string, past: string) {
  const [created, archived, activity] = await db.batch(projectWindowQueries(db, projectId, current, past));
  return { created: created[0]!, archived: archived[0]!, activity: activity[0]! };
}

/** Live flags per type, the most common first. */
export async function typeCounts(db: Db, projectId: string) {
  return db
    .select({ type: features.type, count: sql<number>`count(*)` })
    .from(features)
    .where(and(eq(features.project, projectId), isNull(features.archivedAt)))
    .groupBy(features.type)
    .orderBy(desc(sql`count(*)`), asc(features.type));
}

/** Events of the project per day since `since`, oldest day first. */
export async function activityByDate(db: Db, projectId: string, since: string) {
  return db
    .select({ date: sql<string>`substr(${events.createdAt}, 1, 10)`, count: sql<number>`count(*)` })
    .from(events)
    .where(and(eq(events.project, projectId), gte(events.createdAt, since)))
    .groupBy(sql`substr(${events.createdAt}, 1, 10)`)
    .orderBy(asc(sql`substr(${events.createdAt}, 1, 10)`));
}

export async function resourceCounts(db: Db, projectId: string) {
  const [tokens, projectSegments] = await db.batch([
    db
      .select({ count: sql<number>`count(*)` })
      .from(apiTokenProject)
      .where(eq(apiTokenProject.project, projectId)),
    db
      .select({ count: sql<number>`count(*)` })
      .from(segments)
      .where(eq(segments.segmentProjectId, projectId)),
  ]);
  return { apiTokens: tokens[0]?.count ?? 0, segments: projectSegments[0]?.count ?? 0 };
}

/** Each lifecycle stage entry of the project's flags (live or archived), oldest first per flag. */
export async function lifecycleEntries(db: Db, projectId: string) {
  return db
    .select({
      feature: featureLifecycles.feature,
      stage: featureLifecycles.stage,
      createdAt: featureLifecycles.createdAt,
      archivedAt: features.archivedAt,
    })
    .from(featureLifecycles)
    .innerJoin(features, eq(features.name, featureLifecycles.feature))
    .where(eq(features.project, projectId))
    .orderBy(asc(featureLifecycles.feature), asc(featureLifecycles.createdAt));
}

/** The project's environments in display order, with their default strategies. */
export async function projectEnvironmentRows(db: Db, projectId: string) {
  return db
    .select({ environment: projectEnvironments.environmentName, defaultStrategy: projectEnvironments.defaultStrategy })
    .from(projectEnvironments)
    .innerJoin(environments, eq(environments.name, projectEnvironments.environmentName))
    .where(eq(projectEnvironments.projectId, projectId))
    .orderBy(asc(environments.sortOrder), asc(environments.name));
}

/** Per flag and environment: enabled, variants, last seen, and whether it has (enabled) strategies. */
export async function flagEnvironments(db: Db, names: readonly string[]) {
  const rows: {
    featureName: string;
    name: string;
    enabled: boolean;
    type: string;
    sortOrder: number;
    variants: unknown[];
    lastSeenAt: string | null;
    strategies: number;
    enabledStrategies: number;
  }[] = [];
  for (let at = 0; at < names.length; at += 90) {
    rows.push(
      ...(await db
        .select({
          featureName: featureEnvironments.featureName,
          name: featureEnvironments.environment,
          enabled: featureEnvironments.enabled,
          type: environments.type,
          sortOrder: environments.sortOrder,
          variants: featureEnvironments.variants,
          lastSeenAt: featureEnvironments.lastSeenAt,
          strategies: sql<number>`(SELECT count(*) FROM ${featureStrategies} WHERE ${featureStrategies.featureName} = ${featureEnvironments.featureName} AND ${featureStrategies.environment} = ${featureEnvironments.environment})`,
          enabledStrategies: sql<number>`(SELECT count(*) FROM ${featureStrategies} WHERE ${featureStrategies.featureName} = ${featureEnvironments.featureName} AND ${featureStrategies.environment} = ${featureEnvironments.environment} AND ${featureStrategies.disabled} = 0)`,
        })
        .from(featureEnvironments)
        .innerJoin(environments, eq(environments.name, featureEnvironments.environment))
        .where(inArray(featureEnvironments.featureName, names.slice(at, at + 90)))
        .orderBy(asc(environments.sortOrder), asc(environments.name))),
    );
  }
  return rows;
}

export async function tagsOfFlags(db: Db, names: readonly string[]) {
  const rows: { featureName: string; value: string; type: string }[] = [];
  for (let at = 0; at < names.length; at += 90) {
    rows.push(
      ...(await db
        .select({ featureName: featureTag.featureName, value: featureTag.tagValue, type: featureTag.tagType })
        .from(featureTag)
        .where(inArray(featureTag.featureName, names.slice(at, at + 90)))
        .orderBy(asc(featureTag.createdAt))),
    );
  }
  return rows;
}
