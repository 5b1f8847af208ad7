import * as v from 'valibot';

/** What `GET /api/admin/client-metrics/features/:name` answers with status 200. */
export const GetFeatureUsageSummaryResponse = v.object({
  version: v.number(),
  maturity: v.string(),
  featureName: v.string(),
  lastHourUsage: v.array(
    v.object({
      environment: v.nullable(v.string()),
      timestamp: v.string(),
      yes: v.number(),
      no: v.number(),
    }),
  ),
  seenApplications: v.array(v.string()),
});

/** What `GET /api/admin/client-metrics/features/:name/raw` answers with status 200. */
export const GetRawFeatureMetricsResponse = v.object({
  version: v.number(),
  maturity: v.string(),
  data: v.array(
    v.object({
      timestamp: v.string(),
      no: v.number(),
      yes: v.number(),
      appName: v.string(),
      environment: v.nullable(v.string()),
      featureName: v.string(),
    }),
  ),
});

/** What `GET /api/admin/metrics/applications` answers with status 200. */
export const GetApplicationsResponse = v.object({
  applications: v.array(
    v.object({
      appName: v.string(),
      usage: v.array(v.unknown()),
    }),
  ),
  total: v.number(),
});
