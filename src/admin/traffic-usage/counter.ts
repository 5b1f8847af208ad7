/**
 * Counts the requests the service answers for the data-usage page (Admin → Network → Data
 * usage), the way Unleash's data usage groups them: per UTC day, API path group and status
 * series. Counting is a few array increments in the isolate; the counts reach D1 in one upsert
 * statement per isolate at most once per TRAFFIC_FLUSH_INTERVAL_MS (30 s by default), from the
 * first request that finds the window due, after its answer (`waitUntil`). An isolate that goes
 * idle keeps its last window until its next request: evicted before that, those counts are lost
 * (at most one window per isolate), as Unleash loses the counts it holds in memory on a restart.
 */
import type { Env } from '../../env';
import { log } from '../../log';
import { upsertTrafficCounts, type TrafficCount } from './store';

/** The path groups counted, as Unleash names them; other paths (the UI's assets, /health, /auth) are not. */
export const TRAFFIC_GROUPS = ['/api/admin', '/api/client', '/api/frontend', '/edge'] as const;
const SERIES = 6; // 0xx..5xx, indexed by the status's first digit
const DEFAULT_INTERVAL_MS = 30_000;
const DAY_MS = 86_400_000;

/** Counts per day (`yyyy-MM-dd`), each a [group × series] array. */
const days = new Map<string, number[]>();
let today = '';
let todayEnds = 0;
let cells: number[] | null = null;
let windowStart = 0;

/** Where `url`'s path starts: after `scheme://host`. */
function pathStart(url: string): number {
  return url.indexOf('/', url.indexOf('//') + 2);
}

/**
 * The group of `url`'s path. A path with doubled slashes (`//api/client/features`), which
 * Unleash and we answer as its clean form (src/index.ts), counts in that form's group; only
 * paths not matched as they are pay for collapsing the slashes.
 */
function groupOf(url: string): number {
  const at = pathStart(url);
  if (at < 0) return -1;
  const group = groupAt(url, at);
  if (group >= 0) return group;
  const query = url.indexOf('?', at);
  const path = query < 0 ? url.slice(at) : url.slice(at, query);
  return path.includes('//') ? groupAt(path.replace(/\/{2,}/g, '/'), 0) : -1;
}

/** The group of the path starting at `at` in `url`, as written. */
function groupAt(url: string, at: number): number {
  if (url.startsWith('/api/', at)) {
    for (let group = 0; group < 3; group++) {
      const prefix = TRAFFIC_GROUPS[group]!;
      const end = at + prefix.length;
      // `/api/client` and `/api/client/...`, not `/api/clientele`.
      if (url.startsWith(prefix, at) && (url.length === end || url[end] === '/' || url[end] === '?')) return group;
    }
    return -1;
  }
  return url.startsWith('/edge/', at) ? 3 : -1;
}

let intervalText: string | undefined;
let interval = DEFAULT_INTERVAL_MS;

/** The configured window, parsed again only when the setting's text changes. */
function intervalOf(env: Env): number {
  if (env.TRAFFIC_FLUSH_INTERVAL_MS !== intervalText) {
    intervalText = env.TRAFFIC_FLUSH_INTERVAL_MS;
    const configured = Number(intervalText);
    interval = intervalText !== undefined && Number.isFinite(configured) && configured >= 0 ? configured : DEFAULT_INTERVAL_MS;
  }
  return interval;
}

function cellsOf(day: string): number[] {
  let counts = days.get(day);
  if (counts === undefined) days.set(day, (counts = new Array<number>(TRAFFIC_GROUPS.length * SERIES).fill(0)));
  return counts;
}

/** Counts one answered request (any method, any status) and flushes the window when it is due. */
export function countRequest(url: string, status: number, env: Env, ctx: ExecutionContext): void {
  const group = groupOf(url);
  if (group < 0) return;
  const now = Date.now();
  if (now >= todayEnds || cells === null) {
    today = new Date(now).toISOString().slice(0, 10);
    todayEnds = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
    cells = cellsOf(today);
  }
  if (windowStart === 0) windowStart = now;
  const series = Math.min(Math.max(Math.floor(status / 100), 0), SERIES - 1);
  cells[group * SERIES + series]!++;
  if (now - windowStart >= intervalOf(env)) ctx.waitUntil(flushTrafficCounts(env));
}

/** Takes the isolate's counts as rows, leaving it empty. */
function takeCounts(): TrafficCount[] {
  const rows: TrafficCount[] = [];
  for (const [day, counts] of days) {
    counts.forEach((count, cell) => {
      if (count > 0) rows.push([day, TRAFFIC_GROUPS[Math.floor(cell / SERIES)]!, (cell % SERIES) * 100, count]);
    });
  }
  days.clear();
  cells = null;
  windowStart = 0;
  return rows;
}

/** Writes the isolate's counts to D1 in one statement; a failed write keeps them for the next window. */
export async function flushTrafficCounts(env: Pick<Env, 'DB'>): Promise<void> {
  const rows = takeCounts();
  if (rows.length === 0) return;
  try {
    await upsertTrafficCounts(env, rows);
  } catch (error) {
    for (const [day, group, series, count] of rows) {
      cellsOf(day)[TRAFFIC_GROUPS.indexOf(group as (typeof TRAFFIC_GROUPS)[number]) * SERIES + series / 100]! += count;
    }
    windowStart ||= Date.now();
    log.warn('traffic counts not written; kept for the next flush', { rows: rows.length, error });
  }
}
