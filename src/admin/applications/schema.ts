import * as v from 'valibot';
import { text } from '../../http/validation';

/** A query parameter given once, or the first of several. */
const single = v.pipe(
  v.union([v.string(), v.array(v.string())]),
  v.transform((value) => (typeof value === 'string' ? value : value[0]!)),
);

/** An integer query parameter within bounds, else the default (Unleash is as lenient). */
const boundedInteger = (min: number, max: number, fallback: number) =>
  v.optional(
    v.pipe(
      single,
      v.transform((raw) => Math.min(Math.max(Number.parseInt(raw, 10) || fallback, min), max)),
    ),
    String(fallback),
  );

/**
 * A page of applications: `limit` 1..`maxLimit` (else `defaultLimit`), `offset`, a name filter and
 * the order, normalised as Unleash does. The applications page and a project's Applications tab
 * differ only in the limits.
 */
export const applicationsQuery = (maxLimit: number, defaultLimit: number) =>
  v.pipe(
    v.object({
      limit: boundedInteger(1, maxLimit, defaultLimit),
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

/** The applications page: `limit` 1..1000 (default 1000). */
export const ApplicationsQuery = applicationsQuery(1000, 1000);
export type ApplicationsQuery = v.InferOutput<typeof ApplicationsQuery>;

/**
 * `POST /api/admin/metrics/applications/:appName`: what an admin may say about an application.
 * Unleash's schema (createApplicationSchema) also lists `appName` and `sdkVersion`, which it
 * ignores (the name is the path's); `description` it stores although it is not listed.
 */
export const CreateApplicationSchema = v.pipe(
  v.object({
    appName: v.optional(text(255)),
    sdkVersion: v.optional(text(255)),
    description: v.optional(text(1000)),
    strategies: v.optional(v.pipe(v.array(text(255)), v.maxLength(100, 'must have at most 100 items'))),
    url: v.optional(text(1000)),
    color: v.optional(text(100)),
    icon: v.optional(text(1000)),
  }),
  v.transform(({ description, strategies, url, color, icon }) =>
    Object.fromEntries(Object.entries({ description, strategies, url, color, icon }).filter(([, value]) => value !== undefined)),
  ),
);
export type CreateApplicationInput = { description?: string; strategies?: string[]; url?: string; color?: string; icon?: string };

const nullableString = v.nullable(v.string());

/** What `GET /api/admin/metrics/applications` answers with status 200. */
export const GetApplicationsResponse = v.object({
  applications: v.array(
    v.object({
      appName: v.string(),
      createdAt: v.string(),
      updatedAt: nullableString,
      description: nullableString,
      strategies: v.array(v.string()),
      createdBy: nullableString,
      url: nullableString,
      color: nullableString,
      icon: nullableString,
      usage: v.array(v.object({ project: v.string(), environments: v.array(v.string()) })),
    }),
  ),
  total: v.number(),
});

const Instance = v.object({
  appName: v.string(),
  instanceId: v.string(),
  sdkVersion: nullableString,
  clientIp: nullableString,
  lastSeen: nullableString,
  createdAt: v.string(),
  environment: v.string(),
});

/** What `GET /api/admin/metrics/applications/:appName` answers with status 200. */
export const GetApplicationResponse = v.object({
  appName: v.string(),
  createdAt: v.string(),
  description: nullableString,
  url: nullableString,
  color: nullableString,
  icon: nullableString,
  strategies: v.array(v.object({ name: v.string() })),
  instances: v.array(Instance),
  seenToggles: v.array(v.object({ name: v.string() })),
  links: v.object({ self: v.string() }),
});

/** What `GET /api/admin/metrics/applications/:appName/overview` answers with status 200. */
export const GetApplicationOverviewResponse = v.object({
  projects: v.array(v.string()),
  featureCount: v.number(),
  environments: v.array(
    v.object({
      name: v.string(),
      instanceCount: v.number(),
      sdks: v.array(v.string()),
      frontendSdks: v.array(v.string()),
      backendSdks: v.array(v.string()),
      lastSeen: nullableString,
      issues: v.object({ missingFeatures: v.array(v.string()), outdatedSdks: v.array(v.string()) }),
    }),
  ),
  issues: v.object({ missingStrategies: v.array(v.string()) }),
});

/** What `GET /api/admin/metrics/instances/:appName/environment/:environment` answers with status 200. */
export const GetApplicationEnvironmentInstancesResponse = v.object({
  instances: v.array(
    v.object({
      instanceId: v.string(),
      clientIp: nullableString,
      sdkVersion: nullableString,
      lastSeen: nullableString,
    }),
  ),
});

/** What `GET /api/admin/metrics/sdks/outdated` (and a project's) answers with status 200. */
export const GetOutdatedSdksResponse = v.object({
  sdks: v.array(v.object({ sdkVersion: v.string(), applications: v.array(v.string()) })),
});
