import * as v from 'valibot';

/** A query parameter given once, or the first of several; anything unusable is left to the default. */
const single = v.pipe(
  v.union([v.string(), v.array(v.string())]),
  v.transform((value) => (typeof value === 'string' ? value : value[0]!)),
);

/** Unleash's `hoursBack`: 1 to 48; anything else (or nothing) means 24. */
export const HoursBackQuery = v.object({
  hoursBack: v.optional(
    v.pipe(
      single,
      v.transform((raw) => {
        const hours = Number(raw);
        return Number.isInteger(hours) && hours >= 1 && hours <= 48 ? hours : 24;
      }),
    ),
    '24',
  ),
});
export type HoursBackQuery = v.InferOutput<typeof HoursBackQuery>;

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
