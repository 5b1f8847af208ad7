/**
 * Impact metrics in D1: the metrics Queue's consumer merges the metrics of a batch of posts
 * (counters summed, a gauge's latest value, histograms' counts, sums and buckets summed) and
 * writes them with one statement per table (usage-queue.ts runs them in its flush's atomic
 * batch); the backstage route reads them back; the cron prunes series not updated for a week.
 */
import { sql } from 'drizzle-orm';
import { d1Statement, runD1Batch, type Db } from '../../db/client';
import { impactMetrics, impactMetricSeries } from '../../db/schema';
import type { ImpactMetric, ImpactType } from './parse';

/** Metric names and series kept in all: a new one beyond these is left out until some expire. */
const IMPACT_METRICS_KEPT = 1_000;
const IMPACT_SERIES_KEPT = 10_000;
/** Series not updated for this long are pruned (8.2.0 keeps them until it restarts). */
export const IMPACT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

interface Series {
  name: string;
  type: ImpactType;
  labels: [string, string][];
  value: number;
  count: number;
  buckets: Map<string, number>;
  at: string;
}

const sameBuckets = (a: Map<string, number>, b: Map<string, number>) => a.size === b.size && [...a.keys()].every((le) => b.has(le));

/** A batch's impact metrics, merged in the order their posts came. */
export class ImpactBatch {
  /** Per name and type: a name keeps the type it was first stored with, which D1 decides. */
  private readonly metrics = new Map<string, { name: string; type: ImpactType; help: string; at: string }>();
  private readonly series = new Map<string, Series>();

  add(metrics: readonly ImpactMetric[], at: string): void {
    for (const metric of metrics) {
      const metricKey = JSON.stringify([metric.name, metric.type]);
      const known = this.metrics.get(metricKey);
      this.metrics.set(metricKey, { name: metric.name, type: metric.type, help: known?.help ?? metric.help, at });
      for (const sample of metric.samples) {
        const key = JSON.stringify([metric.name, metric.type, seriesKey(sample.labels)]);
        const buckets = new Map(sample.buckets);
        const current = this.series.get(key);
        if (current === undefined || metric.type === 'gauge' || (metric.type === 'histogram' && !sameBuckets(current.buckets, buckets))) {
          this.series.set(key, { ...sample, name: metric.name, type: metric.type, labels: current?.labels ?? sample.labels, buckets, at });
          continue;
        }
        current.value += sample.value;
        current.count += sample.count;
        for (const [le, count] of buckets) current.buckets.set(le, (current.buckets.get(le) ?? 0) + count);
        current.at = at;
      }
    }
  }

  /** The statements that write the batch (none when it holds no impact metrics). */
  statements(db: Db): D1PreparedStatement[] {
    if (this.metrics.size === 0) return [];
    const metricRows = [...this.metrics.values()].map((m) => [m.name, m.type, m.help, m.at]);
    const seriesRows = [...this.series.values()].map((s) => [
      s.name,
      seriesKey(s.labels),
      JSON.stringify(s.labels),
      s.type,
      s.value,
      s.count,
      JSON.stringify(Object.fromEntries(s.buckets)),
      s.at,
    ]);
    const statements = [
      d1Statement(
        db,
        sql`INSERT INTO ${impactMetrics} (name, type, help, seen_at)
          SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]')
          FROM json_each(${JSON.stringify(metricRows)}) WHERE (SELECT count(*) FROM ${impactMetrics}) < ${IMPACT_METRICS_KEPT}
          ON CONFLICT (name) DO UPDATE SET seen_at = max(${impactMetrics}.seen_at, excluded.seen_at) WHERE ${impactMetrics}.type = excluded.type`,
      ),
    ];
    if (seriesRows.length === 0) return statements;
    const old = sql`${impactMetricSeries}.buckets`;
    const keysOf = (buckets: ReturnType<typeof sql>) =>
      sql`(SELECT group_concat(key, ' ') FROM (SELECT key FROM json_each(${buckets}) ORDER BY key))`;
    const same = sql`(${keysOf(old)} IS ${keysOf(sql`excluded.buckets`)})`;
    const adds = sql`(excluded.type = 'counter' OR (excluded.type = 'histogram' AND ${same}))`;
    statements.push(
      d1Statement(
        db,
        sql`INSERT INTO ${impactMetricSeries} (name, series, labels, type, value, count, buckets, updated_at)
          SELECT json_extract(s.value, '$[0]'), json_extract(s.value, '$[1]'), json_extract(s.value, '$[2]'), json_extract(s.value, '$[3]'),
            json_extract(s.value, '$[4]'), json_extract(s.value, '$[5]'), json_extract(s.value, '$[6]'), json_extract(s.value, '$[7]')
          FROM json_each(${JSON.stringify(seriesRows)}) s
          WHERE EXISTS (SELECT 1 FROM ${impactMetrics} m WHERE m.name = json_extract(s.value, '$[0]') AND m.type = json_extract(s.value, '$[3]'))
            AND ((SELECT count(*) FROM ${impactMetricSeries}) < ${IMPACT_SERIES_KEPT} OR EXISTS (SELECT 1 FROM ${impactMetricSeries} e
              WHERE e.name = json_extract(s.value, '$[0]') AND e.series = json_extract(s.value, '$[1]')))
          ON CONFLICT (name, series) DO UPDATE SET
            value = CASE WHEN ${adds} THEN ${impactMetricSeries}.value + excluded.value
              WHEN excluded.type = 'gauge' AND excluded.updated_at < ${impactMetricSeries}.updated_at THEN ${impactMetricSeries}.value
              ELSE excluded.value END,
            count = CASE WHEN ${adds} THEN ${impactMetricSeries}.count + excluded.count ELSE excluded.count END,
            buckets = CASE WHEN excluded.type = 'histogram' AND ${same} THEN
              (SELECT json_group_object(key, total) FROM (SELECT key, sum(value) AS total FROM
                (SELECT key, value FROM json_each(${old}) UNION ALL SELECT key, value FROM json_each(excluded.buckets)) GROUP BY key))
              ELSE excluded.buckets END,
            updated_at = max(${impactMetricSeries}.updated_at, excluded.updated_at)`,
      ),
    );
    return statements;
  }
}

/** A series' identity: its labels sorted by name. */
function seriesKey(labels: readonly [string, string][]): string {
  return JSON.stringify([...labels].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export interface StoredMetric {
  name: string;
  type: ImpactType;
  help: string;
  series: { labels: [string, string][]; value: number; count: number; buckets: Record<string, number> }[];
}

/** Every metric in the order first seen, each with its series in the order first seen. */
export async function readImpactMetrics(db: Db): Promise<StoredMetric[]> {
  const [metrics, series] = await db.batch([
    db
      .select()
      .from(impactMetrics)
      .orderBy(sql`rowid`),
    db
      .select()
      .from(impactMetricSeries)
      .orderBy(sql`rowid`),
  ]);
  const byName = new Map<string, StoredMetric>(metrics.map((m) => [m.name, { name: m.name, type: m.type, help: m.help, series: [] }]));
  for (const row of series) {
    byName.get(row.name)?.series.push({
      labels: JSON.parse(row.labels) as [string, string][],
      value: row.value,
      count: row.count,
      buckets: JSON.parse(row.buckets) as Record<string, number>,
    });
  }
  return [...byName.values()];
}

/** Series not updated since `before`, and metrics left without series and not seen since. */
export async function pruneImpactMetrics(db: Db, before: string): Promise<{ series: number; metrics: number }> {
  const [series, metrics] = await runD1Batch(db, [
    d1Statement(db, sql`DELETE FROM ${impactMetricSeries} WHERE ${impactMetricSeries.updatedAt} < ${before}`),
    d1Statement(
      db,
      sql`DELETE FROM ${impactMetrics} WHERE ${impactMetrics.seenAt} < ${before}
        AND NOT EXISTS (SELECT 1 FROM ${impactMetricSeries} s WHERE s.name = ${impactMetrics.name})`,
    ),
  ]);
  return { series: series?.meta.changes ?? 0, metrics: metrics?.meta.changes ?? 0 };
}
