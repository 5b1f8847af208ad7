/** A project's applications, health, lifecycle and lead time, in Unleash 6.10.1's shapes and key order. */
import type { Db } from '../../db/client';
import { notFound } from '../../http/errors';
import { outdatedSdks } from '../applications/sdks';
import type { ProjectApplicationsQuery } from './schema';
import * as store from './store';

const DAY_MS = 24 * 60 * 60 * 1000;

function noProject(): Error {
  return notFound('No project found');
}

/** The Applications tab: applications that reported the project's flags, paged by name. */
export async function applications(db: Db, projectId: string, query: ProjectApplicationsQuery) {
  // The filter keeps the matching rows (an instance, an SDK version), not whole applications, as Unleash.
  const needle = query.query?.toLowerCase();
  const rows = (await store.applicationRows(db, projectId)).filter(
    (row) =>
      !needle || [row.appName, row.environment, row.instanceId, row.sdkVersion].some((value) => value?.toLowerCase().includes(needle)),
  );
  const byName = new Map<
    string,
    { name: string; environments: string[]; instances: string[]; sdks: { name: string; versions: string[] }[] }
  >();
  for (const row of rows) {
    const entry = byName.get(row.appName) ?? { name: row.appName, environments: [], instances: [], sdks: [] };
    byName.set(row.appName, entry);
    if (!entry.environments.includes(row.environment)) entry.environments.push(row.environment);
    if (row.instanceId !== null && !entry.instances.includes(row.instanceId)) entry.instances.push(row.instanceId);
    if (row.sdkVersion) {
      const [name, version = ''] = row.sdkVersion.split(':');
      let sdk = entry.sdks.find((candidate) => candidate.name === name);
      if (!sdk) {
        sdk = { name: name!, versions: [] };
        entry.sdks.push(sdk);
      }
      if (version && !sdk.versions.includes(version)) sdk.versions.push(version);
    }
  }
  const all = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (query.descending) all.reverse();
  for (const entry of all) {
    entry.environments.sort();
    entry.instances.sort();
    for (const sdk of entry.sdks) sdk.versions.sort();
    entry.sdks.sort((a, b) => a.name.localeCompare(b.name));
  }
  const page = all.slice(query.offset, query.offset + query.limit);
  // Unleash reads the total from the page's rows: a page past the end says 0.
  return { applications: page, total: page.length === 0 ? 0 : all.length };
}

export async function outdatedProjectSdks(db: Db, projectId: string) {
  return { sdks: outdatedSdks(await store.sdkVersionsOfProject(db, projectId)) };
}

/** Whole days between two instants (date-fns differenceInDays: truncated toward zero). */
function daysBetween(later: string, earlier: string): number {
  return Math.trunc((Date.parse(later) - Date.parse(earlier)) / DAY_MS);
}

/** The average, to one decimal, of the days from creation to first production enable; 0.1 for a positive average that rounds to 0 (as Unleash). */
function averageTimeToProduction(rows: readonly { enabled: string; created: string }[]): number {
  if (rows.length === 0) return 0;
  const average = rows.reduce((sum, row) => sum + daysBetween(row.enabled, row.created), 0) / rows.length;
  return Number(average.toFixed(1)) || 0.1;
}

/** DORA lead time: per release flag the days to production, and the project's average. */
export async function dora(db: Db, projectId: string) {
  const rows = await store.timeToProductionDates(db, projectId);
  return {
    features: rows.map((row) => ({
      name: row.name,
      timeToProduction: Math.floor((Date.parse(row.enabled) - Date.parse(row.created)) / DAY_MS),
    })),
    projectAverage: averageTimeToProduction(rows),
  };
}

/** Stale, potentially stale (older than its type's expected lifetime) and active flags, and the rating. */
function healthOf(flags: readonly store.FeatureRow[], lifetimes: Map<string, number | null>, now: number) {
  const potentiallyStaleCount = flags.filter((flag) => {
    const lifetime = lifetimes.get(flag.type);
    return !flag.stale && lifetime !== null && lifetime !== undefined && now - Date.parse(flag.createdAt) >= lifetime * DAY_MS;
  }).length;
  const staleCount = flags.filter((flag) => flag.stale).length;
  const activeCount = flags.length - staleCount;
  const total = flags.length;
  const rating = Math.round(100 - ((staleCount / total) * 100 || 0) - ((potentiallyStaleCount / total) * 100 || 0));
  return { potentiallyStaleCount, activeCount, staleCount, rating };
}

async function stats(db: Db, projectId: string, now: number) {
  const current = new Date(now - 30 * DAY_MS).toISOString();
  const past = new Date(now - 60 * DAY_MS).toISOString();
  const [windows, timeToProd, members] = await Promise.all([
    store.windowCounts(db, projectId, current, past),
    store.timeToProductionDates(db, projectId),
    store.memberCounts(db, projectId, current),
  ]);
  return {
    stats: {
      avgTimeToProdCurrentWindow: averageTimeToProduction(timeToProd),
      createdCurrentWindow: windows.created.current,
      createdPastWindow: windows.created.past,
      archivedCurrentWindow: windows.archived.current,
      archivedPastWindow: windows.archived.past,
      projectActivityCurrentWindow: windows.activity.current,
      projectActivityPastWindow: windows.activity.past,
      projectMembersAddedCurrentWindow: members.added,
    },
    members,
  };
}

export async function insights(db: Db, projectId: string, now = Date.now()) {
  if (!(await store.liveProject(db, projectId))) throw noProject();
  const [{ stats: projectStats, members }, featureTypeCounts, flags, lifetimes, leadTime] = await Promise.all([
    stats(db, projectId, now),
    store.typeCounts(db, projectId),
    store.flagsOf(db, projectId, false),
    store.lifetimes(db),
    dora(db, projectId),
  ]);
  const health = healthOf(flags, lifetimes, now);
  return {
    stats: projectStats,
    featureTypeCounts,
    // Unleash 8's inverse of the health rating (100 - rating), in its key order; 6.10.1's
    // `health` stays where the 6.10.1 UI reads it.
    technicalDebt: {
      rating: 100 - health.rating,
      activeCount: health.activeCount,
      potentiallyStaleCount: health.potentiallyStaleCount,
      staleCount: health.staleCount,
    },
    health: {
      activeCount: health.activeCount,
      potentiallyStaleCount: health.potentiallyStaleCount,
      staleCount: health.staleCount,
      rating: health.rating,
    },
    leadTime,
    members: { currentMembers: members.members, change: members.added },
  };
}

const STAGES = ['initial', 'pre-live', 'live', 'completed'] as const;

/** Per stage: the flags now in it (live flags) and the average whole days flags spent in it before moving on. */
function lifecycleSummary(
  entries: Awaited<ReturnType<typeof store.lifecycleEntries>>,
  archivedFlags: readonly store.FeatureRow[],
  now: number,
) {
  const byFlag = new Map<string, typeof entries>();
  for (const entry of entries) byFlag.set(entry.feature, [...(byFlag.get(entry.feature) ?? []), entry]);
  const current = new Map<string, number>(STAGES.map((stage) => [stage, 0]));
  const durations = new Map<string, number[]>(STAGES.map((stage) => [stage, []]));
  for (const list of byFlag.values()) {
    const latest = list[list.length - 1]!;
    if (latest.archivedAt === null && current.has(latest.stage)) current.set(latest.stage, current.get(latest.stage)! + 1);
    list.forEach((entry, index) => {
      const next = list.slice(index + 1).find((later) => later.createdAt > entry.createdAt);
      if (next && durations.has(entry.stage))
        durations.get(entry.stage)!.push((Date.parse(next.createdAt) - Date.parse(entry.createdAt)) / DAY_MS);
    });
  }
  const average = (stage: string) => {
    const days = durations.get(stage)!;
    return days.length === 0 ? null : Math.round(days.reduce((sum, value) => sum + value, 0) / days.length);
  };
  const since = new Date(now - 30 * DAY_MS).toISOString();
  return {
    initial: { averageDays: average('initial'), currentFlags: current.get('initial')! },
    preLive: { averageDays: average('pre-live'), currentFlags: current.get('pre-live')! },
    live: { averageDays: average('live'), currentFlags: current.get('live')! },
    completed: { averageDays: average('completed'), currentFlags: current.get('completed')! },
    archived: { currentFlags: archivedFlags.length, last30Days: archivedFlags.filter((flag) => flag.archivedAt! >= since).length },
  };
}

/** The project status modal: resources, a year of activity, health, lifecycle and stale flags. An unknown project has none of these. */
export async function status(db: Db, projectId: string, now = Date.now()) {
  const [members, resources, activityCountByDate, flags, archivedFlags, lifetimes, entries] = await Promise.all([
    store.memberCounts(db, projectId, new Date(now).toISOString()),
    store.resourceCounts(db, projectId),
    store.activityByDate(db, projectId, new Date(now - 365 * DAY_MS).toISOString()),
    store.flagsOf(db, projectId, false),
    store.flagsOf(db, projectId, true),
    store.lifetimes(db),
    store.lifecycleEntries(db, projectId),
  ]);
  const rating = healthOf(flags, lifetimes, now).rating;
  return {
    resources: { members: members.members, apiTokens: resources.apiTokens, segments: resources.segments },
    activityCountByDate,
    health: { current: rating },
    technicalDebt: { current: 100 - rating },
    lifecycleSummary: lifecycleSummary(entries, archivedFlags, now),
    staleFlags: { total: flags.filter((flag) => flag.stale || flag.potentiallyStale).length },
  };
}

/** The Health tab: the project, its environments, its live flags with their environments and tags, and the health counts. */
export async function healthReport(db: Db, projectId: string, now = Date.now()) {
  const project = await store.liveProject(db, projectId);
  if (!project) throw noProject();
  const [{ stats: projectStats, members }, environments, flags, lifetimes] = await Promise.all([
    stats(db, projectId, now),
    store.projectEnvironmentRows(db, projectId),
    store.flagsOf(db, projectId, false),
    store.lifetimes(db),
  ]);
  const names = flags.map((flag) => flag.name);
  const [flagEnvironments, tags] = await Promise.all([store.flagEnvironments(db, names), store.tagsOfFlags(db, names)]);
  const inProject = new Set(environments.map((row) => row.environment));
  const health = healthOf(flags, lifetimes, now);
  return {
    stats: projectStats,
    name: project.name,
    description: project.description,
    mode: project.mode,
    featureLimit: project.featureLimit,
    featureNaming: {
      pattern: project.featureNamingPattern,
      example: project.featureNamingExample,
      description: project.featureNamingDescription,
    },
    defaultStickiness: project.defaultStickiness,
    health: health.rating,
    technicalDebt: 100 - health.rating,
    favorite: false,
    updatedAt: project.updatedAt ?? project.createdAt,
    createdAt: project.createdAt,
    environments: environments.map((row) =>
      row.defaultStrategy ? { environment: row.environment, defaultStrategy: row.defaultStrategy } : { environment: row.environment },
    ),
    features: flags.map((flag) => {
      const flagTags = tags.filter((tag) => tag.featureName === flag.name).map((tag) => ({ value: tag.value, type: tag.type }));
      return {
        type: flag.type,
        description: flag.description,
        name: flag.name,
        createdAt: flag.createdAt,
        stale: flag.stale,
        impressionData: flag.impressionData,
        lastSeenAt: flag.lastSeenAt,
        environments: flagEnvironments
          .filter((row) => row.featureName === flag.name && inProject.has(row.name))
          .map((row) => ({
            name: row.name,
            enabled: row.enabled,
            type: row.type,
            sortOrder: row.sortOrder,
            variantCount: row.variants.length,
            lastSeenAt: row.lastSeenAt,
            hasStrategies: row.strategies > 0,
            hasEnabledStrategies: row.enabledStrategies > 0,
          })),
        ...(flagTags.length > 0 ? { tags: flagTags } : {}),
      };
    }),
    members: members.members,
    version: 1,
    potentiallyStaleCount: health.potentiallyStaleCount,
    activeCount: health.activeCount,
    staleCount: health.staleCount,
  };
}
