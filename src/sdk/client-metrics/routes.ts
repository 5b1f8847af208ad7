/**
 * What the flag page's metrics tab and the applications page read: hourly SDK evaluations
 * of a flag (the buckets SDKs report to /api/client/metrics). The applications pages are in
 * src/admin/applications.
 */
import { getDb } from '../../db/client';
import { json } from '../../http/responses';
import { authenticated, route, type Route } from '../../http/route';
import { GetFeatureUsageSummaryResponse, GetRawFeatureMetricsResponse, HoursBackQuery } from './schema';
import * as store from './store';

const HOUR_MS = 60 * 60 * 1000;

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
    /** The summary: the last hour per environment, and every application that ever reported the flag. */
    handler: async ({ env, params }) => {
      const featureName = params.name!;
      const db = getDb(env);
      const [buckets, seenApplications] = await Promise.all([
        store.bucketsSince(db, featureName, Date.now() - HOUR_MS),
        store.applicationsOfFeature(db, featureName),
      ]);
      const lastHour = new Map<string, { environment: string; timestamp: string; yes: number; no: number }>();
      for (const bucket of buckets) {
        const seen = lastHour.get(bucket.environment);
        if (seen) {
          seen.yes += bucket.yes;
          seen.no += bucket.no;
        } else {
          lastHour.set(bucket.environment, {
            environment: bucket.environment,
            timestamp: bucket.timestamp,
            yes: bucket.yes,
            no: bucket.no,
          });
        }
      }
      return json({ version: 1, maturity: 'stable', featureName, lastHourUsage: [...lastHour.values()], seenApplications });
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/client-metrics/features/:name/raw',
    access: authenticated(),
    tag: 'Metrics',
    operationId: 'getRawFeatureMetrics',
    summary: "A flag's usage, hour by hour",
    query: HoursBackQuery,
    responses: { 200: { description: 'Success', schema: GetRawFeatureMetricsResponse } },
    errors: [400],
    /** `raw`: every hour of the window for each environment and application seen, zeros filled in, oldest first. */
    handler: async ({ env, params, query }) => {
      const featureName = params.name!;
      const hours = query.hoursBack;
      const startOfHour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
      const buckets = await store.bucketsSince(getDb(env), featureName, startOfHour - (hours - 1) * HOUR_MS);
      const byKey = new Map(buckets.map((bucket) => [`${bucket.environment}\u0000${bucket.appName}\u0000${bucket.timestamp}`, bucket]));
      const environments = [...new Set(buckets.map((bucket) => bucket.environment))];
      const applications = [...new Set(buckets.map((bucket) => bucket.appName))].slice(0, 100);
      const data: store.Bucket[] = [];
      for (const environment of environments) {
        for (const appName of applications) {
          for (let hour = 0; hour < hours; hour += 1) {
            const timestamp = new Date(startOfHour - hour * HOUR_MS).toISOString();
            data.push(
              byKey.get(`${environment}\u0000${appName}\u0000${timestamp}`) ?? {
                timestamp,
                no: 0,
                yes: 0,
                appName,
                environment,
                featureName,
              },
            );
          }
        }
      }
      data.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
      return json({ version: 1, maturity: 'stable', data });
    },
  }),
];
