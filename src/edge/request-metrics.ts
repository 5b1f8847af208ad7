/**
 * What this isolate answered, for `/internal-backstage/metrics` (backstage.ts): requests per
 * route pattern, method and status, with their latency as a histogram. Counts are this
 * isolate's since it started, as Unleash Edge's are its process's; a scrape reaches one isolate.
 */
const BUCKETS_MS = [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];
const MAX_SERIES = 500;

interface Series {
  method: string;
  route: string;
  status: number;
  counts: number[];
  sum: number;
  count: number;
}

const series = new Map<string, Series>();

export function recordRequest(method: string, route: string, status: number, ms: number): void {
  const key = `${method} ${route} ${status}`;
  let entry = series.get(key);
  if (!entry) {
    if (series.size >= MAX_SERIES) return; // route patterns, not paths: this bound is never reached in use
    series.set(key, (entry = { method, route, status, counts: BUCKETS_MS.map(() => 0), sum: 0, count: 0 }));
  }
  BUCKETS_MS.forEach((bound, index) => {
    if (ms <= bound) entry.counts[index]!++;
  });
  entry.sum += ms;
  entry.count++;
}

/** A Prometheus label value, escaped. */
export function label(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** The request series in Prometheus text: Unleash Edge's (OpenTelemetry's) `http_server_duration_milliseconds`. */
export function requestMetricsText(): string {
  const name = 'http_server_duration_milliseconds';
  const lines = [`# HELP ${name} Time to answer each request, by route, method and status.`, `# TYPE ${name} histogram`];
  for (const entry of series.values()) {
    const labels = `http_request_method=${label(entry.method)},http_route=${label(entry.route)},http_response_status_code=${label(String(entry.status))}`;
    BUCKETS_MS.forEach((bound, index) => lines.push(`${name}_bucket{${labels},le="${bound}"} ${entry.counts[index]}`));
    lines.push(`${name}_bucket{${labels},le="+Inf"} ${entry.count}`);
    lines.push(`${name}_sum{${labels}} ${entry.sum}`);
    lines.push(`${name}_count{${labels}} ${entry.count}`);
  }
  return lines.join('\n');
}
