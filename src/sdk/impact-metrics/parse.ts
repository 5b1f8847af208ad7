/**
 * Impact metrics as a metrics post carries them (`impactMetrics`, Unleash 8), turned into what
 * the metrics Queue carries and the consumer stores (series.ts). The rules are 8.2.0's: the
 * whole list is dropped, silently, when any metric in it is malformed (its check of the list
 * fails as one); names and label names keep `[a-zA-Z0-9_]` (others become `_`) and are
 * dropped when they do not start with a letter or `_`; every series carries `origin` (`sdk`
 * unless the sample names one) and `metric_type`. Beyond 8.2.0, what one post may add is
 * bounded (docs/metrics.md, "Impact metrics"): a counter sample below zero, a sample with too
 * many or too long labels and buckets past the limit are left out.
 */

export type ImpactType = 'counter' | 'gauge' | 'histogram';

/** One sample, ready to store: labels in the order sent, buckets `[le, count]`. */
interface ImpactSample {
  labels: [string, string][];
  value: number;
  count: number;
  buckets: [string, number][];
}

export interface ImpactMetric {
  name: string;
  help: string;
  type: ImpactType;
  samples: ImpactSample[];
}

/** Labels a series may carry besides `origin` and `metric_type`. */
const MAX_LABELS = 10;
const MAX_LABEL_NAME = 100;
const MAX_LABEL_VALUE = 255;
const MAX_NAME = 255;
const MAX_HELP = 1_000;
const MAX_SAMPLES = 1_000;
const MAX_BUCKETS = 64;
const MAX_METRICS = 1_000;

const NUMERIC = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i;

/** A number as 8.2.0's check takes one (numeric text converted; finite, within the safe integers). */
function numberOf(input: unknown): number | undefined {
  const value = typeof input === 'string' && NUMERIC.test(input) ? Number(input) : input;
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  return Math.abs(value) <= Number.MAX_SAFE_INTEGER ? value : undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

const sanitizeName = (name: string) => name.replace(/[^a-zA-Z0-9_]/g, '_');
const validName = (name: string) => /^[a-zA-Z_]/.test(name);

/** The sample's labels (undefined when 8.2.0's check refuses them): strings or numbers, text not empty. */
function labelsOf(input: unknown): Record<string, string | number> | undefined {
  if (input === undefined) return {};
  if (!isObject(input)) return undefined;
  for (const value of Object.values(input)) if (!isText(value) && numberOf(value) === undefined) return undefined;
  return input as Record<string, string | number>;
}

/** A series' labels: `origin` and `metric_type` first, then the sample's, named as Prometheus allows. */
function seriesLabels(labels: Record<string, string | number>, type: ImpactType): [string, string][] | undefined {
  const result = new Map<string, string>([
    ['origin', String(labels.origin || 'sdk')],
    ['metric_type', type],
  ]);
  for (const [name, value] of Object.entries(labels)) {
    const sanitized = sanitizeName(name);
    if (!validName(sanitized)) continue;
    const text = String(value);
    if (sanitized.length > MAX_LABEL_NAME || text.length > MAX_LABEL_VALUE) return undefined;
    result.set(sanitized, text);
  }
  return result.size > MAX_LABELS + 2 ? undefined : [...result];
}

/** One metric as 8.2.0 checks it; undefined when it fails (and with it the list). */
function checked(input: unknown): { name: string; help: string; type: string; samples: unknown[] } | undefined {
  if (!isObject(input) || !isText(input.name) || !isText(input.help) || !isText(input.type) || !Array.isArray(input.samples))
    return undefined;
  return { name: input.name, help: input.help, type: input.type, samples: input.samples };
}

function sampleOf(input: unknown, type: ImpactType): ImpactSample | null | undefined {
  if (!isObject(input)) return undefined;
  const labels = labelsOf(input.labels);
  if (labels === undefined) return undefined;
  if (type !== 'histogram') {
    const value = numberOf(input.value);
    if (value === undefined) return undefined;
    const series = seriesLabels(labels, type);
    // A counter only goes up: 8.2.0 fails on a negative one (and drops the rest of the post).
    return series === undefined || (type === 'counter' && value < 0) ? null : { labels: series, value, count: 0, buckets: [] };
  }
  const count = numberOf(input.count);
  const sum = numberOf(input.sum);
  if (count === undefined || sum === undefined || !Array.isArray(input.buckets)) return undefined;
  const buckets = new Map<string, number>();
  for (const bucket of input.buckets) {
    if (!isObject(bucket)) return undefined;
    const le = bucket.le === '+Inf' ? '+Inf' : numberOf(bucket.le);
    const bucketCount = numberOf(bucket.count);
    if (le === undefined || bucketCount === undefined) return undefined;
    const key = String(le);
    buckets.set(key, (buckets.get(key) ?? 0) + bucketCount);
  }
  const series = seriesLabels(labels, type);
  return series === undefined || buckets.size > MAX_BUCKETS ? null : { labels: series, value: sum, count, buckets: [...buckets] };
}

/**
 * The impact metrics of a post, ready to queue: empty when there are none or 8.2.0 would drop
 * them all. Metrics of a type 8.2.0 does not keep (anything but counter, gauge, histogram)
 * and histograms without samples are left out, as 8.2.0 leaves them out.
 */
export function parseImpactMetrics(input: unknown): ImpactMetric[] {
  if (!Array.isArray(input) || input.length === 0) return [];
  const metrics: ImpactMetric[] = [];
  for (const raw of input) {
    const metric = checked(raw);
    if (metric === undefined) return [];
    const type = metric.type;
    const samples: ImpactSample[] = [];
    for (const sample of metric.samples) {
      // A type 8.2.0 does not keep is still checked, with a counter's or gauge's sample shape.
      const parsed = sampleOf(sample, type === 'histogram' || type === 'counter' ? type : 'gauge');
      if (parsed === undefined) return [];
      if (parsed !== null && samples.length < MAX_SAMPLES) samples.push(parsed);
    }
    const name = sanitizeName(metric.name);
    if (!validName(name) || name.length > MAX_NAME || metrics.length >= MAX_METRICS) continue;
    if (type !== 'counter' && type !== 'gauge' && type !== 'histogram') continue;
    if (type === 'histogram' && samples.length === 0) continue;
    metrics.push({ name, help: metric.help.slice(0, MAX_HELP), type, samples });
  }
  return metrics;
}
