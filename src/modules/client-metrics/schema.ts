import * as v from 'valibot';

/** A query parameter given once, or the first of several; anything unusable is left to the default. */
const single = v.pipe(
  v.union([v.string(), v.array(v.string())]),
  v.transform((value) => (typeof value === 'string' ? value : value[0]!)),
);

/** An integer query parameter within bounds, else the default (Unleash is as lenient). */
const boundedInteger = (min: number, max: number, fallback: number) =>
  v.optional(
    v.pipe(
      single,
      v.transform((raw) => {
        return Math.min(Math.max(Number.parseInt(raw, 10) || fallback, min), max);
      }),
    ),
    String(fallback),
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

/** The applications page: `limit` 1..1000 (default 1000), `offset`, a name filter and the order. */
export const ApplicationsQuery = v.pipe(
  v.object({
    limit: boundedInteger(1, 1000, 1000),
    offset: boundedInteger(0, Number.MAX_SAFE_INTEGER, 0),
    query: v.optional(single),
    sortOrder: v.optional(single),
  }),
  v.transform(({ limit, offset, query, sortOrder }) => ({
    limit,
    offset,
    query: query?.trim() || undefined,
    descending: sortOrder === 'desc',
  })),
);
export type ApplicationsQuery = v.InferOutput<typeof ApplicationsQuery>;

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
