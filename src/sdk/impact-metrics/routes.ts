/**
 * `GET /internal-backstage/impact/metrics`: the impact metrics SDKs and Edge have sent, in the
 * Prometheus text format, as Unleash 8.2.0 serves them there (no key, as Unleash's backstage;
 * rate limited per address). 8.2.0 answers from its process's memory, so its figures start
 * again at each restart; ours are D1's, kept until a series is a week old (docs/metrics.md).
 */
import { getDb } from '../../db/client';
import { untyped } from '../../http/responses';
import { open, route, type Route } from '../../http/route';
import { readImpactMetrics, type StoredMetric } from './series';

const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const escapeHelp = (text: string) => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabel = (text: string) => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function sample(name: string, labels: readonly [string, string][], value: number): string {
  const text = Number.isNaN(value) ? 'Nan' : Number.isFinite(value) ? String(value) : value < 0 ? '-Inf' : '+Inf';
  const pairs = labels.map(([label, labelValue]) => `${label}="${escapeLabel(labelValue)}"`);
  return `${name}${pairs.length > 0 ? `{${pairs.join(',')}}` : ''} ${text}`;
}

const byLe = ([a]: [string, number], [b]: [string, number]) => (a === '+Inf' ? 1 : b === '+Inf' ? -1 : Number(a) - Number(b));

/** One metric's lines: a histogram's labels sorted by name with `le` last, as 8.2.0 prints them. */
function lines(metric: StoredMetric): string[] {
  const out = [`# HELP ${metric.name} ${escapeHelp(metric.help)}`, `# TYPE ${metric.name} ${metric.type}`];
  for (const series of metric.series) {
    if (metric.type !== 'histogram') {
      out.push(sample(metric.name, series.labels, series.value));
      continue;
    }
    const labels = [...series.labels].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [le, count] of Object.entries(series.buckets).sort(byLe))
      out.push(sample(`${metric.name}_bucket`, [...labels, ['le', le]], count));
    out.push(sample(`${metric.name}_sum`, labels, series.value), sample(`${metric.name}_count`, labels, series.count));
  }
  return out;
}

/** The Prometheus text of `metrics`: each metric's lines and a blank line between metrics. */
function prometheusText(metrics: readonly StoredMetric[]): string {
  return metrics.map((metric) => `${lines(metric).join('\n')}\n`).join('\n');
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/internal-backstage/impact/metrics',
    access: open('backstage'),
    tag: 'Metrics',
    operationId: 'getImpactMetrics',
    summary: 'Impact metrics sent by SDKs and Edge, in the Prometheus text format (Unleash 8)',
    responses: { 200: { description: 'The metrics, as Prometheus scrapes them', schema: null, contentType: 'text/plain' } },
    handler: async ({ env }) => {
      const text = prometheusText(await readImpactMetrics(getDb(env)));
      return untyped(new Response(text, { headers: { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' } }));
    },
  }),
];
