/**
 * Unknown flags (Unleash 7.0+): names SDKs count evaluations of that are not flags, e.g. a typo
 * in code or a flag deleted too early. The metrics consumer records them; this reads them.
 */
import { getDb } from '../../db/client';
import { json } from '../../http/responses';
import { authenticated, route, type Route } from '../../http/route';
import { UnknownFlagsResponse } from './schema';
import * as store from './store';
import { UNKNOWN_FLAGS_WINDOW_MS } from './store';

/** How many names are listed (Unleash 8's figure). */
const MAX_NAMES = 1000;

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/metrics/unknown-flags',
    access: authenticated(),
    tag: 'Unknown Flags',
    operationId: 'getUnknownFlags',
    summary: 'Get unknown flags',
    description: 'The unknown flag reports of the last 24 hours, if any, by name; at most 1000 names.',
    responses: { 200: { description: 'Success', schema: UnknownFlagsResponse } },
    handler: async ({ env }) => {
      const since = new Date(Date.now() - UNKNOWN_FLAGS_WINDOW_MS).toISOString();
      const rows = await store.recentReports(getDb(env), since, MAX_NAMES);
      const byName = new Map<
        string,
        { name: string; lastSeenAt: string; lastEventAt: string | null; reports: Map<string, { environment: string; seenAt: string }[]> }
      >();
      for (const row of rows) {
        const flag = byName.get(row.name) ?? { name: row.name, lastSeenAt: row.seenAt, lastEventAt: row.lastEventAt, reports: new Map() };
        if (row.seenAt > flag.lastSeenAt) flag.lastSeenAt = row.seenAt;
        const environments = flag.reports.get(row.appName) ?? [];
        environments.push({ environment: row.environment, seenAt: row.seenAt });
        flag.reports.set(row.appName, environments);
        byName.set(row.name, flag);
      }
      return json({
        unknownFlags: [...byName.values()].map((flag) => ({
          name: flag.name,
          lastSeenAt: flag.lastSeenAt,
          lastEventAt: flag.lastEventAt,
          reports: [...flag.reports].map(([appName, environments]) => ({ appName, environments })),
        })),
      });
    },
  }),
];
