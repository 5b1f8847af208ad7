/**
 * What SDKs report back: registrations and usage counts. Counts roll up per feature, app,
 * environment and hour into client_metrics_env (adding to what is there), mark the feature
 * environment as seen, and move the lifecycle to pre-live / live as Unleash does.
 */
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { chunkedInsert, chunksOf, rowsPerStatement } from '../../db/chunk';
import { getDb, runBatch, type Db, type Statement } from '../../db/client';
import {
  clientApplications,
  clientInstances,
  clientMetricsEnv,
  environments,
  featureEnvironments,
  featureLifecycles,
  features,
} from '../../db/schema';
import type { BulkMetricsBody, EdgeInstanceBody, MetricsBody, RegisterBody } from './schema';

/** Names per `IN (...)` list, leaving room for a statement's other values (environment, time). */
const NAMES_PER_STATEMENT = rowsPerStatement(1, 10);
/** featureName, appName, environment, timestamp, yes, no, variants. */
const METRIC_ROW_PARAMS = 7;

function isStorableName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && name.isWellFormed() && !name.includes('\u0000');
}

function hourOf(iso: string): string {
  const date = new Date(iso);
  date.setUTCMinutes(0, 0, 0);
  return date.toISOString();
}

export interface SdkCaller {
  environment: string;
  clientIp: string | null;
  /** Set for a frontend key: public by design, so what it may write is bounded (see recordMetrics). */
  frontend?: { tokenId: string; projects: readonly string[] };
}

/** New client instances (each a new app name or instance id) one frontend key may create per day. */
export const FRONTEND_NEW_INSTANCES_PER_DAY = 100;
const DAY_MS = 24 * 60 * 60 * 1000;

function instanceUpsert(
  db: Db,
  caller: SdkCaller,
  appName: string,
  instanceId: string,
  sdkVersion: string | null,
  interval: number | null,
  now: string,
) {
  return db
    .insert(clientInstances)
    .values({
      appName,
      instanceId,
      environment: caller.environment,
      sdkVersion,
      clientIp: caller.clientIp,
      interval,
      lastSeen: now,
      createdByToken: caller.frontend?.tokenId ?? null,
    })
    .onConflictDoUpdate({
      target: [clientInstances.appName, clientInstances.instanceId, clientInstances.environment],
      set: {
        sdkVersion: sql`coalesce(excluded.sdk_version, ${clientInstances.sdkVersion})`,
        clientIp: sql`excluded.client_ip`,
        interval: sql`coalesce(excluded.interval, ${clientInstances.interval})`,
        lastSeen: sql`excluded.last_seen`,
      },
    });
}

export async function recordRegistration(dbEnv: { DB: D1Database }, caller: SdkCaller, body: RegisterBody): Promise<void> {
  const db = getDb(dbEnv);
  const now = new Date().toISOString();
  const strategies = [...new Set(body.strategies)];
  await runBatch(db, [
    db
      .insert(clientApplications)
      .values({ appName: body.appName, strategies, updatedAt: now, seenAt: now })
      .onConflictDoUpdate({ target: clientApplications.appName, set: { strategies, updatedAt: now, seenAt: now } }),
    instanceUpsert(db, caller, body.appName, body.instanceId ?? 'default', body.sdkVersion ?? null, Math.round(body.interval), now),
  ]);
}

/** An Edge reporting itself: seen as an instance of its app, its version as the SDK version. */
export async function recordEdgeInstance(dbEnv: { DB: D1Database }, caller: SdkCaller, body: EdgeInstanceBody): Promise<void> {
  const db = getDb(dbEnv);
  const now = new Date().toISOString();
  const sdkVersion = body.edgeVersion ? `unleash-edge:${body.edgeVersion}` : 'unleash-edge';
  await runBatch(db, [
    db
      .insert(clientApplications)
      .values({ appName: body.appName, strategies: [], updatedAt: now, seenAt: now })
      .onConflictDoUpdate({ target: clientApplications.appName, set: { seenAt: now } }),
    instanceUpsert(db, caller, body.appName, body.identifier, sdkVersion, null, now),
  ]);
}

/** Counts of one flag for one app in one hour, before they are added to what is stored. */
export interface UsageRecord {
  featureName: string;
  appName: string;
  /** Start of the hour, ISO. */
  timestamp: string;
  yes: number;
  no: number;
  variants: Record<string, number>;
}

type Counts = { yes: number; no: number; variants?: Record<string, number> | null };

/** Adds counts into `into`, keyed per flag, app and hour; skips empty and unstorable entries. */
function addRecord(into: Map<string, UsageRecord>, featureName: string, appName: string, stop: string, counts: Counts): void {
  // No flag has such a name (names are validated when flags are written), so skip it
  // before it reaches SQL.
  if (counts.yes + counts.no === 0 || !isStorableName(featureName)) return;
  const timestamp = hourOf(stop);
  const key = JSON.stringify([featureName, appName, timestamp]);
  const record = into.get(key) ?? { featureName, appName, timestamp, yes: 0, no: 0, variants: {} };
  record.yes += counts.yes;
  record.no += counts.no;
  for (const [variant, value] of Object.entries(counts.variants ?? {})) {
    if (value > 0 && isStorableName(variant))
      record.variants[variant] = (Object.hasOwn(record.variants, variant) ? record.variants[variant]! : 0) + value;
  }
  into.set(key, record);
}

/** A browser's bucket end if it is within the last hour (or a few minutes ahead); else now. */
function plausibleStop(stop: string, now: string): string {
  const at = Date.parse(stop);
  const current = Date.parse(now);
  return at >= current - 60 * 60 * 1000 && at <= current + 5 * 60 * 1000 ? stop : now;
}

/**
 * Whether a frontend key may write for this instance: it exists already, or the key has
 * created fewer than FRONTEND_NEW_INSTANCES_PER_DAY in the last day. (Two reports racing can
 * pass the count together; the bound holds within the number of concurrent requests.)
 */
async function frontendMayWrite(
  db: Db,
  caller: SdkCaller & { frontend: object },
  tokenId: string,
  appName: string,
  instanceId: string,
  now: string,
): Promise<boolean> {
  const since = new Date(Date.parse(now) - DAY_MS).toISOString();
  const row = await db.get<{ known: number; created: number }>(sql`SELECT
      EXISTS (SELECT 1 FROM ${clientInstances} WHERE ${clientInstances.appName} = ${appName} AND ${clientInstances.instanceId} = ${instanceId} AND ${clientInstances.environment} = ${caller.environment}) AS known,
      (SELECT count(*) FROM ${clientInstances} WHERE ${clientInstances.createdByToken} = ${tokenId} AND ${clientInstances.createdAt} > ${since}) AS created`);
  return row.known === 1 || row.created < FRONTEND_NEW_INSTANCES_PER_DAY;
}

/**
 * Adds one SDK metrics report; returns how many feature counts were kept. A frontend key's
 * report is bounded: it counts in the last hour or two (a bucket end further off, from a
 * browser's clock or a forger, counts now), only
 * for flags of the key's projects, and only for an instance the key already has or may still
 * create today; otherwise it is dropped whole.
 */
export async function recordMetrics(dbEnv: { DB: D1Database }, caller: SdkCaller, body: MetricsBody): Promise<number> {
  const db = getDb(dbEnv);
  const now = new Date().toISOString();
  const frontend = caller.frontend;
  const instanceId = body.instanceId ?? (frontend ? 'default' : undefined);
  if (frontend && !(await frontendMayWrite(db, { ...caller, frontend }, frontend.tokenId, body.appName, instanceId!, now))) return 0;
  const records = new Map<string, UsageRecord>();
  const bucket = body.bucket;
  if (bucket) {
    const stop = frontend ? plausibleStop(bucket.stop, now) : bucket.stop;
    for (const [name, counts] of Object.entries(bucket.toggles)) addRecord(records, name, body.appName, stop, counts);
  }
  const statements: Statement[] = [];
  if (instanceId) statements.push(instanceUpsert(db, caller, body.appName, instanceId, body.sdkVersion ?? null, null, now));
  return recordUsage(db, caller, [...records.values()], statements, now);
}

/**
 * Adds what Unleash Edge forwards for many apps at once. Like Unleash, only counts for the
 * key's own environment are kept.
 */
export async function recordBulkMetrics(dbEnv: { DB: D1Database }, caller: SdkCaller, body: BulkMetricsBody): Promise<number> {
  const records = new Map<string, UsageRecord>();
  for (const metric of body.metrics) {
    if (metric.environment !== caller.environment) continue;
    addRecord(records, metric.featureName, metric.appName, metric.timestamp, metric);
  }
  const db = getDb(dbEnv);
  const now = new Date().toISOString();
  const statements: Statement[] = [];
  const seen = new Set<string>();
  for (const application of body.applications) {
    if (application.environment !== undefined && application.environment !== null && application.environment !== caller.environment)
      continue;
    const key = JSON.stringify([application.appName, application.instanceId ?? 'default']);
    if (seen.has(key)) continue;
    seen.add(key);
    statements.push(
      instanceUpsert(db, caller, application.appName, application.instanceId ?? 'default', application.sdkVersion ?? null, null, now),
    );
  }
  return recordUsage(db, caller, [...records.values()], statements, now);
}

/** Writes usage records and their side effects (last seen, lifecycle) in one batch. */
async function recordUsage(db: Db, caller: SdkCaller, records: UsageRecord[], statements: Statement[], now: string): Promise<number> {
  // Counts for flags that do not exist are dropped, as Unleash drops them; a frontend key's
  // also for flags outside its projects, which it cannot see.
  const names = [...new Set(records.map((record) => record.featureName))];
  const projects = caller.frontend && !caller.frontend.projects.includes('*') ? JSON.stringify(caller.frontend.projects) : undefined;
  const knownSet = new Set<string>();
  for (const part of chunksOf(names, NAMES_PER_STATEMENT)) {
    const visible = projects === undefined ? undefined : sql`${features.project} IN (SELECT value FROM json_each(${projects}))`;
    const rows = await db
      .select({ name: features.name })
      .from(features)
      .where(and(inArray(features.name, part), visible));
    for (const row of rows) knownSet.add(row.name);
  }
  const known = [...knownSet];
  const kept = records.filter((record) => knownSet.has(record.featureName));

  if (kept.length > 0) {
    const rows = kept.map((record) => ({ ...record, environment: caller.environment }));
    statements.push(
      ...chunkedInsert(rows, METRIC_ROW_PARAMS, (part) =>
        db
          .insert(clientMetricsEnv)
          .values(part)
          .onConflictDoUpdate({
            target: [clientMetricsEnv.featureName, clientMetricsEnv.appName, clientMetricsEnv.environment, clientMetricsEnv.timestamp],
            set: {
              yes: sql`${clientMetricsEnv.yes} + excluded.yes`,
              no: sql`${clientMetricsEnv.no} + excluded.no`,
              // Sum the per-variant counts key by key.
              variants: sql`(SELECT json_group_object(key, total) FROM (SELECT key, sum(value) AS total FROM (SELECT key, value FROM json_each(${clientMetricsEnv.variants}) UNION ALL SELECT key, value FROM json_each(excluded.variants)) GROUP BY key))`,
            },
          }),
      ),
    );
    // A live stage entered in the same report must sort after its pre-live stage.
    const liveAt = new Date(Date.parse(now) + 1).toISOString();
    for (const part of chunksOf(known, NAMES_PER_STATEMENT)) {
      statements.push(
        db
          .update(featureEnvironments)
          .set({ lastSeenAt: now })
          .where(and(eq(featureEnvironments.environment, caller.environment), inArray(featureEnvironments.featureName, part))),
        db.update(features).set({ lastSeenAt: now }).where(inArray(features.name, part)),
        db
          .insert(featureLifecycles)
          .select(
            db
              .select({
                feature: features.name,
                stage: sql<string>`'pre-live'`.as('stage'),
                status: sql<null>`NULL`.as('status'),
                statusValue: sql<null>`NULL`.as('status_value'),
                createdAt: sql<string>`${now}`.as('created_at'),
              })
              .from(features)
              .where(and(isNull(features.archivedAt), inArray(features.name, part))),
          )
          .onConflictDoNothing(),
        db
          .insert(featureLifecycles)
          .select(
            db
              .select({
                feature: featureEnvironments.featureName,
                stage: sql<string>`'live'`.as('stage'),
                status: sql<null>`NULL`.as('status'),
                statusValue: sql<null>`NULL`.as('status_value'),
                createdAt: sql<string>`${liveAt}`.as('created_at'),
              })
              .from(featureEnvironments)
              .innerJoin(environments, eq(environments.name, featureEnvironments.environment))
              .innerJoin(features, eq(features.name, featureEnvironments.featureName))
              .where(
                and(
                  eq(featureEnvironments.environment, caller.environment),
                  eq(environments.type, 'production'),
                  eq(featureEnvironments.enabled, true),
                  isNull(features.archivedAt),
                  inArray(featureEnvironments.featureName, part),
                ),
              ),
          )
          .onConflictDoNothing(),
      );
    }
  }
  await runBatch(db, statements);
  return kept.length;
}
