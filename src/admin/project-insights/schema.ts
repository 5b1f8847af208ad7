import * as v from 'valibot';
import { applicationsQuery } from '../applications/schema';
import { DefaultStrategyResponse } from '../environments/schema';
import { FeatureOverview, ProjectStats } from '../projects/schema';

/** The project's Applications tab: `limit` 1..100 (default 50), the rest as the applications page. */
export const ProjectApplicationsQuery = applicationsQuery(100, 50);
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

/** What `GET /api/admin/projects/:projectId/insights` answers with status 200. */
export const GetProjectInsightsResponse = v.object({
  stats: ProjectStats,
  featureTypeCounts: v.array(v.object({ type: v.string(), count: v.number() })),
  technicalDebt: v.object({ rating: v.number(), activeCount: v.number(), potentiallyStaleCount: v.number(), staleCount: v.number() }),
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
  technicalDebt: v.object({ current: v.number() }),
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
  stats: ProjectStats,
  name: v.string(),
  description: nullableString,
  mode: v.string(),
  featureLimit: v.nullable(v.number()),
  featureNaming: v.object({ pattern: nullableString, example: nullableString, description: nullableString }),
  defaultStickiness: v.string(),
  health: v.number(),
  technicalDebt: v.number(),
  favorite: v.boolean(),
  updatedAt: nullableString,
  createdAt: v.string(),
  environments: v.array(v.object({ environment: v.string(), defaultStrategy: v.optional(DefaultStrategyResponse) })),
  features: v.array(v.omit(FeatureOverview, ['favorite'])),
  members: v.number(),
  version: v.number(),
  potentiallyStaleCount: v.number(),
  activeCount: v.number(),
  staleCount: v.number(),
});
