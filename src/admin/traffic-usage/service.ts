/** The data-usage answer: the stored counts, shaped as Unleash's trafficUsageDataSegmentedCombinedSchema. */
import type { Db } from '../../db/client';
import { TRAFFIC_GROUPS } from './counter';
import type { TrafficSearchQuery } from './schema';
import { successfulRequests } from './store';

/** Unleash's name for the one traffic type counted: requests answered below status 400. */
const SUCCESSFUL = 'successful-requests';

export async function trafficUsage(db: Db, query: TrafficSearchQuery) {
  const rows = await successfulRequests(db, query.from, query.to, query.grouping === 'monthly');
  // Every group is listed, with data points only where there were requests (the page fills the gaps).
  const apiData = TRAFFIC_GROUPS.map((apiPath) => ({
    apiPath,
    dataPoints: rows
      .filter((row) => row.group === apiPath)
      .map((row) => ({ period: row.period, trafficTypes: [{ group: SUCCESSFUL, count: row.count }] })),
  }));
  return { grouping: query.grouping, dateRange: { from: query.from, to: query.to }, apiData };
}

/**
 * Months of counts kept before the current one: the page's longest view is the current month
 * and the 12 before it (its "Last 12 months"); one more covers a browser whose local month is
 * still the previous UTC one.
 */
const MONTHS_KEPT = 13;

/** The first day (`yyyy-MM-dd`, UTC) whose counts are kept at `now`; older days are pruned by the cron. */
export function trafficKeptFrom(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - MONTHS_KEPT, 1)).toISOString().slice(0, 10);
}
