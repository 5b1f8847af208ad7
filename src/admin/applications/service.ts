/** The application pages' answers, in Unleash 6.10.1's shapes and key order. */
import type { Db } from '../../db/client';
import { notFound } from '../../http/errors';
import { strategyShape } from '../strategies/service';
import type { ApplicationsQuery, CreateApplicationInput } from './schema';
import { isOutdatedSdk, outdatedSdks } from './sdks';
import * as store from './store';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Strategies Unleash no longer ships; an application naming them is not told they are missing. */
const DEPRECATED_STRATEGIES = ['gradualRolloutRandom', 'gradualRolloutSessionId', 'gradualRolloutUserId'];
/** Who Unleash says created an application an SDK registered. */
const SYSTEM_USER = 'unleash_system_user';

function missing(appName: string): Error {
  return notFound(`Could not find appName=${appName}`);
}

function instanceShape(row: store.InstanceRow) {
  return {
    appName: row.appName,
    instanceId: row.instanceId,
    sdkVersion: row.sdkVersion,
    clientIp: row.clientIp,
    lastSeen: row.lastSeen,
    createdAt: row.createdAt,
    environment: row.environment,
  };
}

/** The applications page: each application with the environments its instances report from. */
export async function listApplications(db: Db, query: ApplicationsQuery) {
  const { rows, total, environments } = await store.applicationPage(db, query);
  return {
    applications: rows.map((row) => {
      const seenIn = environments.get(row.appName) ?? [];
      return {
        appName: row.appName,
        createdAt: row.createdAt,
        updatedAt: row.updatedAt,
        description: row.description,
        strategies: row.strategies,
        // Only SDK registrations add strategies; an application an admin created has none.
        createdBy: row.seenAt ? SYSTEM_USER : null,
        url: row.url,
        color: row.color,
        icon: row.icon,
        usage: seenIn.length === 0 ? [] : [{ project: '*', environments: seenIn }],
      };
    }),
    // Unleash reads the total from the page's rows: a page past the end says 0.
    total: rows.length === 0 ? 0 : total,
  };
}

/** `GET /api/admin/metrics/applications/:appName`: the application, its instances, strategies and the flags it reported in the last 24 hours. */
export async function getApplication(db: Db, appName: string) {
  const application = await store.application(db, appName);
  if (!application) throw missing(appName);
  const [instances, seen, known] = await Promise.all([
    store.instancesOf(db, appName),
    store.seenFlagNames(db, appName, new Date(Date.now() - DAY_MS).toISOString()),
    store.allStrategies(db),
  ]);
  const flags = new Map((await store.liveFlags(db, seen)).map((flag) => [flag.name, flag]));
  const strategyByName = new Map(known.map((row) => [row.name, row]));
  return {
    appName: application.appName,
    createdAt: application.createdAt,
    description: application.description,
    url: application.url,
    color: application.color,
    icon: application.icon,
    strategies: application.strategies.map((name) => {
      const found = strategyByName.get(name);
      return found ? strategyShape(found) : { name, notFound: true };
    }),
    instances: instances.map(instanceShape),
    seenToggles: seen.map((name) => {
      const flag = flags.get(name);
      return flag
        ? {
            name: flag.name,
            description: flag.description,
            type: flag.type,
            project: flag.project,
            stale: flag.stale,
            createdAt: flag.createdAt,
            lastSeenAt: flag.lastSeenAt,
            impressionData: flag.impressionData,
            archived: false,
          }
        : { name, notFound: true };
    }),
    links: { self: `/api/applications/${application.appName}` },
  };
}

/**
 * `…/:appName/overview`: per environment it reported metrics from, its instances of the last
 * 24 hours, their SDKs, the flags it named that do not exist, and the strategies it uses that
 * this server does not know.
 */
export async function getApplicationOverview(db: Db, appName: string, now = Date.now()) {
  const application = await store.application(db, appName);
  if (!application) throw missing(appName);
  const since = new Date(now - DAY_MS).toISOString();
  const [flags, instances, known] = await Promise.all([
    store.reportedFlags(db, appName),
    store.instancesOf(db, appName),
    store.allStrategies(db),
  ]);
  const knownNames = new Set(known.map((row) => row.name));
  const environments = [...new Set(flags.map((row) => row.environment))].sort();
  return {
    projects: [...new Set(flags.flatMap((row) => (row.project === null ? [] : [row.project])))],
    featureCount: new Set(flags.map((row) => row.featureName)).size,
    environments: environments.map((name) => {
      const recent = instances.filter((row) => row.environment === name && row.lastSeen !== null && row.lastSeen >= since);
      const versions = (rows: store.InstanceRow[]) =>
        [...new Set(rows.flatMap((row) => (row.sdkVersion === null ? [] : [row.sdkVersion])))].sort();
      const sdks = versions(recent);
      return {
        name,
        instanceCount: new Set(recent.map((row) => row.instanceId)).size,
        sdks,
        // Instances a frontend key reported are the frontend SDKs; the rest registered as backends.
        frontendSdks: versions(recent.filter((row) => row.createdByToken !== null)),
        backendSdks: versions(recent.filter((row) => row.createdByToken === null)),
        lastSeen: recent.reduce<string | null>((latest, row) => (latest === null || row.lastSeen! > latest ? row.lastSeen : latest), null),
        issues: {
          missingFeatures: flags.filter((row) => row.environment === name && row.project === null).map((row) => row.featureName),
          outdatedSdks: sdks.filter(isOutdatedSdk),
        },
      };
    }),
    issues: {
      missingStrategies: [
        ...new Set(application.strategies.filter((name) => !DEPRECATED_STRATEGIES.includes(name) && !knownNames.has(name))),
      ],
    },
  };
}

/** `GET /api/admin/metrics/instances/:appName/environment/:environment`: the last 24 hours' instances. */
export async function recentInstances(db: Db, appName: string, environment: string, now = Date.now()) {
  const rows = await store.recentInstances(db, appName, environment, new Date(now - DAY_MS).toISOString());
  return {
    instances: rows.map((row) => ({
      instanceId: row.instanceId,
      clientIp: row.clientIp,
      sdkVersion: row.sdkVersion,
      lastSeen: row.lastSeen,
    })),
  };
}

export async function listOutdatedSdks(db: Db) {
  return { sdks: outdatedSdks(await store.applicationsBySdkVersion(db)) };
}

export async function createApplication(db: Db, appName: string, body: CreateApplicationInput): Promise<void> {
  await store.upsertApplication(db, appName, body, new Date().toISOString());
}

export async function deleteApplication(db: Db, appName: string): Promise<void> {
  await store.deleteApplication(db, appName);
}
