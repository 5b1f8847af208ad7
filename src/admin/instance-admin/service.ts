/** The instance statistics page (Admin > Instance stats): counts of what this instance holds. */
import type { Db } from '../../db/client';
import { sha256Hex } from '../../lib/encoding';
import { instanceId, UNLEASH_VERSION } from '../ui-config/service';
import * as store from './store';

export async function statistics(db: Db) {
  const c = await store.counts(db, Date.now());
  const stats = {
    timestamp: new Date().toISOString(),
    instanceId: await instanceId(db),
    versionOSS: UNLEASH_VERSION,
    versionEnterprise: '',
    users: c.users,
    serviceAccounts: c.serviceAccounts,
    apiTokens: { client: c.clientTokens, admin: c.adminTokens, frontend: c.frontendTokens },
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
