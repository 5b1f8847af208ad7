/**
 * The flag search: the page of names (query.ts plans it) and each flag's details (details.ts),
 * read in one statement for most searches, put together in Unleash's answer shape.
 */
import { creatorOf } from '../features/shapes';
import type { SearchParams } from './params';
import { detailRows, detailStatements, pageWithDetails, unpackPage } from './details';
import { pageStatements } from './query';

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

/** The page's names, the total and what the page shows: one statement where it can, else two batches. */
async function readPage(d1: D1Database, params: SearchParams, userId: number) {
  const plan = pageStatements(d1, params, userId);
  const metricsSince = new Date(Date.now() - HOUR_MS).toISOString();
  const single = plan.single && pageWithDetails(d1, plan.single.page, plan.single.total, userId, metricsSince);
  if (single) {
    const page = unpackPage((await single.first<Record<string, unknown>>())!);
    // A page past the end still reports the real total (unlike Unleash, which says 0).
    if (plan.shape === 'window' && page.names.length === 0 && params.offset > 0) {
      page.total = (await plan.count().first<{ total: number }>())?.total ?? 0;
    }
    return page;
  }
  const pageResults = await d1.batch(plan.statements);
  let pageRows = pageResults.at(-1)!.results as { name: string; total?: number }[];
  if (plan.shape === 'groups') {
    const ordered = pageResults.slice(1).flatMap((result) => result.results as { name: string }[]);
    if (ordered.length < params.offset + params.limit && plan.lastGroup) {
      ordered.push(...(await plan.lastGroup.all<{ name: string }>()).results);
    }
    pageRows = ordered.slice(params.offset, params.offset + params.limit);
  }
  if (plan.shape === 'favorites') {
    const favorites = (pageResults[1]!.results as { name: string }[]).slice(params.offset);
    pageRows = [...favorites, ...pageRows].slice(0, params.limit);
  }
  const names = pageRows.map((row) => row.name);
  let total: number;
  if (plan.shape !== 'window') {
    total = (pageResults[0]!.results[0] as { total: number } | undefined)?.total ?? 0;
  } else if (pageRows.length > 0 || params.offset === 0) {
    total = pageRows[0]?.total ?? 0;
  } else {
    total = (await plan.count().first<{ total: number }>())?.total ?? 0;
  }
  if (names.length === 0) return { names, total, details: undefined };
  return { names, total, details: detailRows(await d1.batch(detailStatements(d1, names, userId, metricsSince))) };
}

/** One page of flags matching the filters, and the total (`GET /api/admin/search/features`). */
export async function searchFeatures(env: { DB: D1Database }, params: SearchParams, userId: number) {
  // Raw D1 rather than drizzle: the plan's statements are prepared SQL, run as they are.
  const { names, total, details } = await readPage(env.DB, params, userId);
  if (names.length === 0 || !details) return { features: [], total };
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
