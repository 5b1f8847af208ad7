import * as v from 'valibot';

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar day as `yyyy-MM-dd` (the data-usage page's format), checked as a real date. */
function isDay(input: string): boolean {
  const match = DAY.exec(input);
  if (match === null) return false;
  const [, year, month, day] = match.map(Number) as [number, number, number, number];
  return month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

const day = v.pipe(
  v.string(),
  v.maxLength(10, 'must match format "date" (yyyy-MM-dd)'),
  v.check(isDay, 'must match format "date" (yyyy-MM-dd)'),
);

/** `GET /api/admin/metrics/traffic-search`'s query (Unleash's getTrafficDataUsageForPeriodParams). */
export const TrafficSearchQuery = v.pipe(
  v.object({
    grouping: v.picklist(['daily', 'monthly'], 'must be equal to one of the allowed values: "daily", "monthly"'),
    from: day,
    to: day,
  }),
  v.forward(
    v.check(({ from, to }) => from <= to, 'must not be before `from`'),
    ['to'],
  ),
);
export type TrafficSearchQuery = v.InferOutput<typeof TrafficSearchQuery>;

/** Unleash's trafficUsageDataSegmentedCombinedSchema. */
export const TrafficUsageResponse = v.object({
  grouping: v.picklist(['daily', 'monthly']),
  dateRange: v.object({ from: v.string(), to: v.string() }),
  apiData: v.array(
    v.object({
      apiPath: v.string(),
      dataPoints: v.array(
        v.object({
          period: v.string(),
          trafficTypes: v.array(v.object({ group: v.string(), count: v.number() })),
        }),
      ),
    }),
  ),
});

/**
 * What `GET /api/instance/trafficBundles` answers: the requests (in millions) a plan includes and
 * were bought on top. This service sells no plan: both 0, which the page reads as "no limit".
 */
export const TrafficBundlesResponse = v.object({ includedTraffic: v.number(), purchasedTraffic: v.number() });
