/** The instance statistics page (Admin > Instance stats): counts of what this instance holds. */
import type { Db } from '../../db/client';
import { sha256Hex } from '../../lib/encoding';
import { instanceId, UNLEASH_VERSION } from '../ui-config/service';
import * as store from './store';

/** `{ "YYYY-MM": 0 }` for this month and the eleven before it, newest first (Unleash 8's keys). */
function lastTwelveMonths(now: Date): Record<string, number> {
  const months: Record<string, number> = {};
  for (let back = 0; back < 12; back++) {
    const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
    months[month.toISOString().slice(0, 7)] = 0;
  }
  return months;
}

export async function statistics(db: Db) {
  const c = await store.counts(db, Date.now());
  const stats = {
    timestamp: new Date().toISOString(),
    instanceId: await instanceId(db),
    versionOSS: UNLEASH_VERSION,
    versionEnterprise: '',
    users: c.users,
    serviceAccounts: c.serviceAccounts,
    // `backend` keys (Unleash 7+) counted apart, as 8.2.0 does.
    apiTokens: { client: c.clientTokens, admin: c.adminTokens, frontend: c.frontendTokens, backend: c.backendTokens },
    activeUsers: { last7: c.active7, last30: c.active30, last60: c.active60, last90: c.active90 },
    licensedUsers: 0,
    featureToggles: c.features,
    archivedFeatureToggles: c.archived,
    projects: c.projects,
    contextFields: c.contextFields,
    roles: c.roles,
    customRootRoles: c.customRootRoles,
    customRootRolesInUse: c.customRootRolesInUse,
    groups: 0,
    environments: c.environments,
    segments: c.segments,
    strategies: c.strategies,
    SAMLenabled: false,
    OIDCenabled: false,
    passwordAuthEnabled: true,
    SCIMenabled: false,
    clientApps: [
      { range: '7d', count: c.apps7 },
      { range: '30d', count: c.apps30 },
      { range: 'allTime', count: c.appsAll },
    ],
    featureExports: c.exports,
    featureImports: c.imports,
    productionChanges: { last30: c.production30, last60: c.production60, last90: c.production90 },
    previousDayMetricsBucketsCount: { enabledCount: 0, variantCount: 0 },
    maxEnvironmentStrategies: c.maxEnvironmentStrategies,
    maxConstraintValues: c.maxConstraintValues,
    maxConstraints: c.maxConstraints,
    // What Unleash 8 added, as its open-source build answers them: release templates and plans
    // and read-only seats are Enterprise; Edge instances are not counted here (0 per month).
    releaseTemplates: 0,
    releasePlans: 0,
    edgeInstanceUsage: lastTwelveMonths(new Date()),
    readOnlyUsers: 0,
  };
  // Unleash signs the statistics with a SHA-256 over them so a copy can be checked.
  return { ...stats, sum: await sha256Hex(JSON.stringify(stats)) };
}

/** One CSV field as json2csv writes it: text and structures quoted (inner quotes doubled), numbers and booleans bare. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return `"${text.replaceAll('"', '""')}"`;
}

/** The statistics as Unleash's CSV download: a header row of the keys, one row of values, and its file name. */
export async function statisticsCsv(db: Db): Promise<{ csv: string; fileName: string }> {
  const stats = await statistics(db);
  const csv = `${Object.keys(stats).map(csvField).join(',')}\n${Object.values(stats).map(csvField).join(',')}`;
  return { csv, fileName: `unleash-${stats.instanceId}-${Date.now()}.csv` };
}

/** The Users page's seats box: no licence limits seats here, so every account counts as one. */
export async function licensedUsers(db: Db) {
  const c = await store.counts(db, Date.now());
  return { seatCount: c.users, licensedUsers: { current: c.active30, history: [] as never[] } };
}
