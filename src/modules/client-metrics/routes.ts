/**
 * What the flag page's metrics tab and the applications page read: hourly SDK evaluations
 * of a flag (the buckets SDKs report to /api/client/metrics) and the applications known.
 */
import { and, asc, eq, gte, sql } from 'drizzle-orm';
import { getDb } from '../../db/client';
import { clientApplications, clientMetricsEnv } from '../../db/schema';
import { pathParam } from '../../http/params';
import { json } from '../../http/responses';
import { authenticated, route, type Route, type AdminContext } from '../../http/route';
import { GetFeatureUsageSummaryResponse, GetRawFeatureMetricsResponse, GetApplicationsResponse } from './schema';

const HOUR_MS = 60 * 60 * 1000;

/** Unleash's `hoursBack`: 1 to 48, anything else (or nothing) means 24. */
function hoursBack(request: Request): number {
  const raw = new URL(request.url).searchParams.get('hoursBack');
  const hours = raw === null ? Number.NaN : Number(raw);
  return Number.isInteger(hours) && hours >= 1 && hours <= 48 ? hours : 24;
}

interface Bucket {
  featureName: string;
  appName: string;
  environment: string;
  timestamp: string;
  yes: number;
  no: number;
  variants?: Record<string, number>;
}

async function bucketsSince(env: AdminContext['env'], featureName: string, since: number): Promise<Bucket[]> {
  const rows = await getDb(env)
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

/** `raw`: every hour of the window for each environment and application seen, zeros filled in, oldest first. */
export async function featureRaw({ request, env }: AdminContext): Promise<Response> {
  const featureName = pathParam(request, 'name');
  const hours = hoursBack(request);
  const startOfHour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
  const buckets = await bucketsSince(env, featureName, startOfHour - (hours - 1) * HOUR_MS);
  const byKey = new Map(buckets.map((bucket) => [`${bucket.environment}\u0000${bucket.appName}\u0000${bucket.timestamp}`, bucket]));
  const environments = [...new Set(buckets.map((bucket) => bucket.environment))];
  const applications = [...new Set(buckets.map((bucket) => bucket.appName))].slice(0, 100);
  const data: Bucket[] = [];
  for (const environment of environments) {
    for (const appName of applications) {
      for (let hour = 0; hour < hours; hour += 1) {
        const timestamp = new Date(startOfHour - hour * HOUR_MS).toISOString();
        data.push(
          byKey.get(`${environment}\u0000${appName}\u0000${timestamp}`) ?? { timestamp, no: 0, yes: 0, appName, environment, featureName },
        );
      }
    }
  }
  data.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  return json({ version: 1, maturity: 'stable', data });
}

/** The summary: the last hour per environment, and every application that ever reported the flag. */
export async function featureSummary({ request, env }: AdminContext): Promise<Response> {
  const featureName = pathParam(request, 'name');
  const [buckets, apps] = await Promise.all([
    bucketsSince(env, featureName, Date.now() - HOUR_MS),
    getDb(env)
      .selectDistinct({ appName: clientMetricsEnv.appName })
      .from(clientMetricsEnv)
      .where(eq(clientMetricsEnv.featureName, featureName))
      .orderBy(asc(clientMetricsEnv.appName)),
  ]);
  const lastHour = new Map<string, { environment: string; timestamp: string; yes: number; no: number }>();
  for (const bucket of buckets) {
    const seen = lastHour.get(bucket.environment);
    if (seen) {
      seen.yes += bucket.yes;
      seen.no += bucket.no;
    } else {
      lastHour.set(bucket.environment, { environment: bucket.environment, timestamp: bucket.timestamp, yes: bucket.yes, no: bucket.no });
    }
  }
  return json({
    version: 1,
    maturity: 'stable',
    featureName,
    lastHourUsage: [...lastHour.values()],
    seenApplications: apps.map((app) => app.appName),
  });
}

/** The applications page: registered applications, paged and sorted by name. */
export async function applications({ request, env }: AdminContext): Promise<Response> {
  const params = new URL(request.url).searchParams;
  const limit = Math.min(Math.max(Number.parseInt(params.get('limit') ?? '1000', 10) || 1000, 1), 1000);
  const offset = Math.max(Number.parseInt(params.get('offset') ?? '0', 10) || 0, 0);
  const query = params.get('query')?.trim();
  const descending = params.get('sortOrder') === 'desc';
  const db = getDb(env);
  const where = query ? sql`instr(lower(${clientApplications.appName}), ${query.toLowerCase()}) > 0` : undefined;
  const [rows, total] = await db.batch([
    db
      .select()
      .from(clientApplications)
      .where(where)
      .orderBy(descending ? sql`${clientApplications.appName} DESC` : asc(clientApplications.appName))
      .limit(limit)
      .offset(offset),
    db
      .select({ count: sql<number>`count(*)` })
      .from(clientApplications)
      .where(where),
  ]);
  return json({
    applications: rows.map((row) => ({
      appName: row.appName,
      description: row.description ?? undefined,
      url: row.url ?? undefined,
      color: row.color ?? undefined,
      icon: row.icon ?? undefined,
      usage: [],
    })),
    total: total[0]?.count ?? 0,
  });
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/client-metrics/features/:name',
    access: authenticated(),
    tag: 'Metrics',
    operationId: 'getFeatureUsageSummary',
    summary: "A flag's usage per environment and application",
    responses: { 200: { description: 'Success', schema: GetFeatureUsageSummaryResponse } },
    errors: [400],
    handler: featureSummary,
  }),
  route({
    method: 'GET',
    path: '/api/admin/client-metrics/features/:name/raw',
    access: authenticated(),
    tag: 'Metrics',
    operationId: 'getRawFeatureMetrics',
    summary: "A flag's usage, hour by hour",
    responses: { 200: { description: 'Success', schema: GetRawFeatureMetricsResponse } },
    errors: [400],
    handler: featureRaw,
  }),
  route({
    method: 'GET',
    path: '/api/admin/metrics/applications',
    access: authenticated(),
    tag: 'Metrics',
    operationId: 'getApplications',
    summary: 'List the applications that have reported',
    responses: { 200: { description: 'Success', schema: GetApplicationsResponse } },
    handler: applications,
  }),
];
