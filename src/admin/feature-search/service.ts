/**
 * The flag search: the page of names (query.ts plans it) and each flag's details (details.ts),
 * read in one statement, put together in Unleash's answer shape.
 */
import { creatorOf } from '../features/shapes';
import type { SearchParams } from './params';
import { pageWithDetails, unpackPage } from './details';
import { pagePlan } from './query';

interface FeatureRow {
  name: string;
  type: string;
  description: string | null;
  project: string;
  stale: number;
  created_at: string;
  archived_at: string | null;
  impression_data: number;
  last_seen_at: string | null;
  created_by_user_id: number | null;
  user_id: number | null;
  user_name: string | null;
  user_username: string | null;
  user_email: string | null;
}
interface EnvironmentRow {
  feature_name: string;
  name: string;
  type: string;
  sort_order: number;
  enabled: number;
  variant_count: number;
  last_seen_at: string | null;
  has_strategies: number;
  has_enabled_strategies: number;
}
interface TagRow {
  feature_name: string;
  tag_value: string;
  tag_type: string;
  color: string | null;
}
interface SegmentRow {
  feature_name: string;
  name: string;
}
interface LifecycleRow {
  feature: string;
  stage: string;
  status: string | null;
  created_at: string;
}
interface MetricsRow {
  feature_name: string;
  environment: string;
  yes: number;
  no: number;
}
interface DependencyRow {
  parent: string;
  child: string;
}

function groupBy<T, K extends keyof T>(rows: T[], key: K): Map<T[K], T[]> {
  const groups = new Map<T[K], T[]>();
  for (const row of rows) {
    const list = groups.get(row[key]);
    if (list) list.push(row);
    else groups.set(row[key], [row]);
  }
  return groups;
}

const HOUR_MS = 60 * 60 * 1000;

/** The page's names, the total and what the page shows, in one statement. */
async function readPage(d1: D1Database, params: SearchParams, userId: number) {
  const plan = pagePlan(params, userId);
  const metricsSince = new Date(Date.now() - HOUR_MS).toISOString();
  const statement = pageWithDetails(d1, plan.page, plan.total, userId, metricsSince);
  const page = unpackPage((await statement.first<Record<string, unknown>>())!);
  // A page past the end still reports the real total (unlike Unleash, which says 0).
  if (plan.pastEnd && page.names.length === 0 && params.offset > 0) {
    const count = await d1
      .prepare(plan.pastEnd.sql)
      .bind(...plan.pastEnd.params)
      .first<{ total: number }>();
    page.total = count?.total ?? 0;
  }
  return page;
}

/** One page of flags matching the filters, and the total (`GET /api/admin/search/features`). */
export async function searchFeatures(env: { DB: D1Database }, params: SearchParams, userId: number) {
  // Raw D1 rather than drizzle: the plan's statements are prepared SQL, run as they are.
  const { names, total, details } = await readPage(env.DB, params, userId);
  if (names.length === 0) return { features: [], total };
  const featureRows = details.features as unknown as FeatureRow[];
  const environmentRows = details.environments as unknown as EnvironmentRow[];
  const tagRows = details.tags as unknown as TagRow[];
  const segmentRows = details.segments as unknown as SegmentRow[];
  const lifecycleRows = details.lifecycle as unknown as LifecycleRow[];
  const metricsRows = details.metrics as unknown as MetricsRow[];
  const favoriteRows = details.favorites as unknown as { feature: string }[];
  const dependencyRows = details.dependencies as unknown as DependencyRow[];

  const featuresByName = new Map(featureRows.map((row) => [row.name, row]));
  const environmentsOf = groupBy(environmentRows, 'feature_name');
  const tagsOf = groupBy(tagRows, 'feature_name');
  const segmentsOf = groupBy(segmentRows, 'feature_name');
  const lifecycleOf = groupBy(lifecycleRows, 'feature');
  const metrics = new Map(metricsRows.map((row) => [`${row.feature_name}\u0000${row.environment}`, row]));
  const favorites = new Set(favoriteRows.map((row) => row.feature));
  const parents = new Set(dependencyRows.map((row) => row.parent));
  const children = new Set(dependencyRows.map((row) => row.child));

  const creators = new Map<number | null, Awaited<ReturnType<typeof creatorOf>>>();
  const features = [];
  for (const name of names) {
    const feature = featuresByName.get(name);
    if (!feature) continue;
    const environments = (environmentsOf.get(name) ?? []).map((environment) => {
      const counts = metrics.get(`${name}\u0000${environment.name}`);
      return {
        name: environment.name,
        environment: environment.name,
        enabled: environment.enabled === 1,
        type: environment.type,
        sortOrder: environment.sort_order,
        variantCount: environment.variant_count,
        lastSeenAt: environment.last_seen_at,
        hasStrategies: environment.has_strategies === 1,
        hasEnabledStrategies: environment.has_enabled_strategies === 1,
        yes: counts?.yes ?? 0,
        no: counts?.no ?? 0,
        changeRequestIds: [],
      };
    });
    const seen = environments.map((environment) => environment.lastSeenAt).filter((value): value is string => value !== null);
    const lastSeenAt = seen.length > 0 ? seen.reduce((latest, value) => (value > latest ? value : latest)) : feature.last_seen_at;
    const latest = lifecycleOf.get(name)?.at(-1);
    let createdBy = creators.get(feature.created_by_user_id);
    if (!createdBy) {
      const creator =
        feature.user_id === null
          ? undefined
          : { id: feature.user_id, name: feature.user_name, username: feature.user_username, email: feature.user_email };
      createdBy = await creatorOf(feature.created_by_user_id, creator);
      creators.set(feature.created_by_user_id, createdBy);
    }
    features.push({
      type: feature.type,
      description: feature.description,
      project: feature.project,
      favorite: favorites.has(name),
      name,
      createdAt: feature.created_at,
      stale: feature.stale === 1,
      archivedAt: feature.archived_at,
      impressionData: feature.impression_data === 1,
      lastSeenAt,
      dependencyType: parents.has(name) ? 'parent' : children.has(name) ? 'child' : null,
      environments,
      segments: (segmentsOf.get(name) ?? []).map((segment) => segment.name),
      createdBy,
      lifecycle: latest ? { stage: latest.stage, status: latest.status, enteredStageAt: latest.created_at } : null,
      tags: (tagsOf.get(name) ?? []).map((tag) => ({ value: tag.tag_value, type: tag.tag_type, color: tag.color })),
    });
  }
  return { features, total };
}
