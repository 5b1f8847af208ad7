import * as v from 'valibot';

/** A query parameter given once, or the first of several. */
const single = v.pipe(
  v.union([v.string(), v.array(v.string())]),
  v.transform((value) => (typeof value === 'string' ? value : value[0]!)),
);

const boundedInteger = (min: number, max: number, fallback: number) =>
  v.optional(
    v.pipe(
      single,
      v.transform((raw) => Math.min(Math.max(Number.parseInt(raw, 10) || fallback, min), max)),
    ),
    String(fallback),
  );

/** The project's Applications tab: `limit` 1..100 (default 50), `offset`, a filter and the order (Unleash's normalisation). */
export const ProjectApplicationsQuery = v.pipe(
  v.object({
    limit: boundedInteger(1, 100, 50),
    offset: boundedInteger(0, Number.MAX_SAFE_INTEGER, 0),
    query: v.optional(single),
    sortBy: v.optional(single),
    sortOrder: v.optional(single),
  }),
  v.transform(({ limit, offset, query, sortOrder }) => ({
    limit,
    offset,
    query: query?.trim() || undefined,
    descending: sortOrder === 'desc',
  })),
);
export type ProjectApplicationsQuery = v.InferOutput<typeof ProjectApplicationsQuery>;

const nullableString = v.nullable(v.string());

/** What `GET /api/admin/projects/:projectId/applications` answers with status 200. */
export const GetProjectApplicationsResponse = v.object({
  applications: v.array(
    v.object({
      name: v.string(),
      environments: v.array(v.string()),
      instances: v.array(v.string()),
      sdks: v.array(v.object({ name: v.string(), versions: v.array(v.string()) })),
    }),
  ),
  total: v.number(),
});

const DoraMetrics = v.object({
  features: v.array(v.object({ name: v.string(), timeToProduction: v.number() })),
  projectAverage: v.number(),
});

/** What `GET /api/admin/projects/:projectId/dora` answers with status 200. */
export const GetProjectDoraResponse = DoraMetrics;

const Stats = v.object({
  avgTimeToProdCurrentWindow: v.number(),
  createdCurrentWindow: v.number(),
  createdPastWindow: v.number(),
  archivedCurrentWindow: v.number(),
  archivedPastWindow: v.number(),
  projectActivityCurrentWindow: v.number(),
  projectActivityPastWindow: v.number(),
  projectMembersAddedCurrentWindow: v.number(),
});

/** What `GET /api/admin/projects/:projectId/insights` answers with status 200. */
export const GetProjectInsightsResponse = v.object({
  stats: Stats,
  featureTypeCounts: v.array(v.object({ type: v.string(), count: v.number() })),
  health: v.object({ activeCount: v.number(), potentiallyStaleCount: v.number(), staleCount: v.number(), rating: v.number() }),
  leadTime: DoraMetrics,
  members: v.object({ currentMembers: v.number(), change: v.number() }),
});

const Stage = v.object({ averageDays: v.nullable(v.number()), currentFlags: v.number() });

/** What `GET /api/admin/projects/:projectId/status` answers with status 200. */
export const GetProjectStatusResponse = v.object({
  resources: v.object({ members: v.number(), apiTokens: v.number(), segments: v.number() }),
  activityCountByDate: v.array(v.object({ date: v.string(), count: v.number() })),
  health: v.object({ current: v.number() }),
  lifecycleSummary: v.object({
    initial: Stage,
    preLive: Stage,
    live: Stage,
    completed: Stage,
    archived: v.object({ currentFlags: v.number(), last30Days: v.number() }),
  }),
  staleFlags: v.object({ total: v.number() }),
});

/** What `GET /api/admin/projects/:projectId/health-report` answers with status 200. */
export const GetProjectHealthReportResponse = v.object({
  stats: Stats,
  name: v.string(),
  description: nullableString,
  mode: v.string(),
  featureLimit: v.nullable(v.number()),
  featureNaming: v.object({ pattern: nullableString, example: nullableString, description: nullableString }),
  defaultStickiness: v.string(),
  health: v.number(),
  favorite: v.boolean(),
  updatedAt: nullableString,
  createdAt: v.string(),
  environments: v.array(v.object({ environment: v.string(), defaultStrategy: v.optional(v.unknown()) })),
  features: v.array(
    v.object({
      type: v.string(),
      description: nullableString,
      name: v.string(),
      createdAt: v.string(),
      stale: v.boolean(),
      impressionData: v.boolean(),
      lastSeenAt: nullableString,
      environments: v.array(
        v.object({
          name: v.string(),
          enabled: v.boolean(),
          type: v.string(),
          sortOrder: v.number(),
          variantCount: v.number(),
          lastSeenAt: nullableString,
          hasStrategies: v.boolean(),
          hasEnabledStrategies: v.boolean(),
        }),
      ),
      tags: v.optional(v.array(v.object({ value: v.string(), type: v.string() }))),
    }),
  ),
  members: v.number(),
  version: v.number(),
  potentiallyStaleCount: v.number(),
  activeCount: v.number(),
  staleCount: v.number(),
});
