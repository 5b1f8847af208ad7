/** The traffic counts' table (`stat_traffic_usage`): the isolates' upserts and the data-usage reads. */
import { and, between, lt, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { statTrafficUsage } from '../../db/schema';
import type { Env } from '../../env';

/** One cell of counts: day (`yyyy-MM-dd`), path group, status series (200, 300, …), requests. */
export type TrafficCount = [day: string, group: string, series: number, count: number];

/**
 * Adds an isolate's counts in one statement, its rows as one JSON parameter (`json_each`), so
 * that D1's bound-parameter limit never applies and the statement count does not grow with them.
 */
export async function upsertTrafficCounts(env: Pick<Env, 'DB'>, rows: readonly TrafficCount[]): Promise<void> {
  await env.DB.prepare(
    `INSERT INTO stat_traffic_usage (day, traffic_group, status_code_series, count)
     SELECT value ->> '$[0]', value ->> '$[1]', value ->> '$[2]', value ->> '$[3]' FROM json_each(?1) WHERE true
     ON CONFLICT (day, traffic_group, status_code_series) DO UPDATE SET count = count + excluded.count`,
  )
    .bind(JSON.stringify(rows))
    .run();
}

export interface TrafficRow {
  period: string;
  group: string;
  count: number;
}

/**
 * Answered requests (status below 400: a 304 to a poll is an answer) per period and path group,
 * from `from` to `to` (days, inclusive); a period is a day or, `monthly`, its `yyyy-MM`.
 */
export async function successfulRequests(db: Db, from: string, to: string, monthly: boolean): Promise<TrafficRow[]> {
  const period = monthly ? sql<string>`substr(${statTrafficUsage.day}, 1, 7)` : sql<string>`${statTrafficUsage.day}`;
  return db
    .select({ period, group: statTrafficUsage.trafficGroup, count: sql<number>`sum(${statTrafficUsage.count})` })
    .from(statTrafficUsage)
    .where(and(between(statTrafficUsage.day, from, to), lt(statTrafficUsage.statusCodeSeries, 400)))
    .groupBy(period, statTrafficUsage.trafficGroup)
    .orderBy(period);
}
