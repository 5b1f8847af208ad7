/** Bodies the SDKs send: registration, usage metrics, and Edge's token validation. */
import * as v from 'valibot';
import { dateTime, dateTimeOrEpochMs, epochMillis, parseDateTime, text } from '../../http/validation';

const MAX_COUNT = 2 ** 31 - 1;

const count = v.pipe(
  v.number(),
  v.integer('must be an integer'),
  v.minValue(0, 'must be >= 0'),
  v.maxValue(MAX_COUNT, `must be <= ${MAX_COUNT}`),
);

const optionalText = v.optional(v.nullable(text(255)));

/**
 * Unleash 8's `sdkFlavor`/`sdkFlavorVersion`: an integration built on an SDK (an OpenFeature
 * provider, say) and its version, with 8.2.0's bounds. 8.2.0 keeps them nowhere an API
 * shows (only in Prometheus labels, behind a flag); we check them and drop them the same way.
 */
const sdkFlavor = v.optional(v.nullable(text(256)));
const sdkFlavorVersion = v.optional(v.nullable(text(32)));

/** `started` is an RFC 3339 date-time or unix seconds, as Unleash accepts it. */
const started = v.union([dateTime, v.pipe(v.number(), v.finite('must be a finite number'))], 'must be a date-time or a number');

export const registerBody = v.looseObject({
  appName: v.pipe(text(255), v.minLength(1, 'must not be empty')),
  instanceId: optionalText,
  connectionId: optionalText,
  sdkVersion: optionalText,
  strategies: v.pipe(v.array(text(255)), v.maxLength(1000, 'must have at most 1000 items')),
  started,
  interval: v.pipe(v.number(), v.finite('must be a finite number'), v.minValue(0, 'must be >= 0')),
  platformName: optionalText,
  platformVersion: optionalText,
  yggdrasilVersion: optionalText,
  specVersion: optionalText,
  sdkFlavor,
  sdkFlavorVersion,
});
export type RegisterBody = v.InferOutput<typeof registerBody>;

const toggleCounts = v.looseObject({
  yes: count,
  no: count,
  variants: v.optional(v.nullable(v.record(v.string(), count))),
});

/** The metrics post body as valibot checks it (see `metricsBody` below). */
export const metricsBodySchema = v.looseObject({
  appName: v.pipe(text(255), v.minLength(1, 'must not be empty')),
  instanceId: optionalText,
  connectionId: optionalText,
  sdkVersion: optionalText,
  environment: optionalText,
  sdkFlavor,
  sdkFlavorVersion,
  bucket: v.optional(
    v.nullable(
      v.looseObject({
        start: dateTimeOrEpochMs,
        stop: dateTimeOrEpochMs,
        toggles: v.record(v.string(), toggleCounts),
      }),
    ),
  ),
});
export type MetricsBody = v.InferOutput<typeof metricsBodySchema>;

// ---------------------------------------------------------------------------------------
// A metrics post is the most frequent request there is (every SDK instance, every interval),
// and valibot walking 50 flags' counts is most of its CPU. `quickMetricsBody` checks the common
// shape by hand and builds the same output; anything it is not sure of (a missing or odd field,
// a reserved key, any value valibot would refuse) goes to valibot, so every error is valibot's.

const RESERVED_KEYS = ['__proto__', 'prototype', 'constructor'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasReservedKey(value: Record<string, unknown>): boolean {
  return RESERVED_KEYS.some((key) => Object.hasOwn(value, key));
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 255 && value.isWellFormed() && !value.includes('\u0000');
}

const isOptionalText = (value: unknown) => value === undefined || value === null || isText(value);

function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_COUNT;
}

function isoDateTime(value: unknown): string | undefined {
  if (typeof value === 'number') return epochMillis(value)?.toISOString();
  if (typeof value !== 'string' || value.length > 64) return undefined;
  return parseDateTime(value)?.toISOString();
}

/** What valibot would answer for `input`, when it is a well-formed metrics post; else undefined. */
export function quickMetricsBody(input: unknown): MetricsBody | undefined {
  if (!isRecord(input) || hasReservedKey(input)) return undefined;
  const { appName, bucket } = input;
  if (!isText(appName) || appName.length === 0) return undefined;
  if (!isOptionalText(input.instanceId) || !isOptionalText(input.connectionId)) return undefined;
  if (!isOptionalText(input.sdkVersion) || !isOptionalText(input.environment)) return undefined;
  // 8.x's flavour fields: a longer one than 8.2.0 takes goes to valibot, which refuses it.
  if (!isOptionalText(input.sdkFlavor) || !isOptionalText(input.sdkFlavorVersion)) return undefined;
  if (typeof input.sdkFlavorVersion === 'string' && input.sdkFlavorVersion.length > 32) return undefined;
  if (bucket === undefined || bucket === null) return input as MetricsBody;
  if (!isRecord(bucket) || hasReservedKey(bucket)) return undefined;
  const start = isoDateTime(bucket.start);
  const stop = isoDateTime(bucket.stop);
  const toggles = bucket.toggles;
  if (start === undefined || stop === undefined || !isRecord(toggles) || hasReservedKey(toggles)) return undefined;
  for (const name of Object.keys(toggles)) {
    const counts = toggles[name];
    if (!isRecord(counts) || hasReservedKey(counts) || !isCount(counts.yes) || !isCount(counts.no)) return undefined;
    const variants = counts.variants;
    if (variants === undefined || variants === null) continue;
    if (!isRecord(variants) || hasReservedKey(variants)) return undefined;
    for (const variant of Object.keys(variants)) if (!isCount(variants[variant])) return undefined;
  }
  return { ...input, bucket: { ...bucket, start, stop } } as MetricsBody;
}

/** The metrics post body: `metricsBodySchema` (documented, and every error), with the quick path in front. */
export const metricsBody: typeof metricsBodySchema = {
  ...metricsBodySchema,
  '~run'(dataset, config) {
    const quick = quickMetricsBody(dataset.value);
    if (quick === undefined) return metricsBodySchema['~run'](dataset, config);
    return { typed: true, value: quick } as ReturnType<(typeof metricsBodySchema)['~run']>;
  },
};

export const edgeValidateBody = v.looseObject({
  // No key is needed here, so each call is bounded: every unknown token costs a KV and a D1 read.
  tokens: v.pipe(v.array(v.string()), v.maxLength(100, 'must have at most 100 items')),
});

const impactLabels = v.optional(v.record(v.string(), v.union([v.string(), v.number()], 'must be a string or a number')));

/**
 * Unleash 8's impact metrics (counters, gauges and histograms an SDK or Edge defines), with
 * 8.2.0's bulk-metrics schema: `type` picks the sample shape. What is kept of them, and how,
 * is src/sdk/impact-metrics (docs/metrics.md, "Impact metrics").
 */
const impactMetric = v.variant('type', [
  v.looseObject({
    name: v.string(),
    help: v.string(),
    type: v.picklist(['counter', 'gauge']),
    samples: v.array(v.looseObject({ value: v.number(), labels: impactLabels })),
  }),
  v.looseObject({
    name: v.string(),
    help: v.string(),
    type: v.literal('histogram'),
    samples: v.array(
      v.looseObject({
        count: v.number(),
        sum: v.number(),
        buckets: v.array(v.looseObject({ le: v.union([v.number(), v.literal('+Inf')], 'must be a number or "+Inf"'), count: v.number() })),
        labels: impactLabels,
      }),
    ),
  }),
]);

/** What Unleash Edge forwards to `/api/client/metrics/bulk`: many apps' counts at once. */
export const bulkMetricsBody = v.looseObject({
  applications: v.pipe(
    v.array(
      v.looseObject({
        appName: v.pipe(text(255), v.minLength(1, 'must not be empty')),
        environment: v.pipe(text(255), v.minLength(1, 'must not be empty')),
        instanceId: optionalText,
        sdkVersion: optionalText,
        sdkFlavor,
        sdkFlavorVersion,
      }),
    ),
    v.maxLength(1000, 'must have at most 1000 items'),
  ),
  metrics: v.pipe(
    v.array(
      v.looseObject({
        featureName: v.pipe(v.string(), v.maxLength(255, 'must be at most 255 characters long')),
        appName: v.pipe(text(255), v.minLength(1, 'must not be empty')),
        environment: v.pipe(text(255), v.minLength(1, 'must not be empty')),
        timestamp: dateTimeOrEpochMs,
        yes: count,
        no: count,
        variants: v.optional(v.nullable(v.record(v.string(), count))),
      }),
    ),
    v.maxLength(10_000, 'must have at most 10000 items'),
  ),
  /** Unleash 8: the keys Edge's SDKs used, so that their last use shows (markKeysSeen). */
  seenTokens: v.optional(v.pipe(v.array(v.string()), v.maxLength(1000, 'must have at most 1000 items'))),
  impactMetrics: v.optional(v.pipe(v.array(impactMetric), v.maxLength(1000, 'must have at most 1000 items'))),
});
export type BulkMetricsBody = v.InferOutput<typeof bulkMetricsBody>;

/**
 * What Unleash Edge (19+) posts to `/api/client/metrics/edge` about itself and the Edges
 * behind it: identity plus traffic, latency and process figures we do not keep.
 */
export const edgeInstanceBody = v.looseObject({
  identifier: v.pipe(text(255), v.minLength(1, 'must not be empty')),
  appName: v.pipe(text(255), v.minLength(1, 'must not be empty')),
  edgeVersion: optionalText,
  started: v.optional(v.nullable(dateTime)),
  connectedEdges: v.optional(v.pipe(v.array(v.unknown()), v.maxLength(1000, 'must have at most 1000 items'))),
});
export type EdgeInstanceBody = v.InferOutput<typeof edgeInstanceBody>;

/** A strategy's constraint as the client API serves it. */
const ClientConstraint = v.object({
  contextName: v.string(),
  operator: v.string(),
  values: v.optional(v.array(v.string())),
  caseInsensitive: v.optional(v.boolean()),
  inverted: v.optional(v.boolean()),
  value: v.optional(v.string()),
});

/** A strategy's variant as the client API serves it. */
const ClientStrategyVariant = v.object({
  name: v.nullable(v.string()),
  weight: v.number(),
  weightType: v.optional(v.string()),
  stickiness: v.optional(v.string()),
  payload: v.object({
    type: v.string(),
    value: v.optional(v.string()),
  }),
});

/** A flag's (environment's) variant as the client API serves it. */
const ClientFlagVariant = v.object({
  name: v.nullable(v.string()),
  weight: v.number(),
  weightType: v.optional(v.string()),
  stickiness: v.optional(v.string()),
  overrides: v.optional(
    v.array(
      v.object({
        contextName: v.string(),
        values: v.optional(v.array(v.string())),
      }),
    ),
  ),
  payload: v.optional(
    v.object({
      type: v.string(),
      value: v.optional(v.string()),
    }),
  ),
});

/** What `GET /api/client/features` answers with status 200. */
export const GetAllClientFeaturesResponse = v.object({
  version: v.number(),
  features: v.array(
    v.object({
      name: v.nullable(v.string()),
      type: v.string(),
      enabled: v.boolean(),
      project: v.nullable(v.string()),
      stale: v.boolean(),
      strategies: v.array(
        v.object({
          name: v.nullable(v.string()),
          constraints: v.array(ClientConstraint),
          parameters: v.object({
            rollout: v.optional(v.string()),
            stickiness: v.optional(v.string()),
            groupId: v.optional(v.string()),
            flag: v.optional(v.string()),
            userIds: v.optional(v.string()),
            percentage: v.optional(v.string()),
            IPs: v.optional(v.string()),
          }),
          variants: v.array(ClientStrategyVariant),
          segments: v.optional(v.array(v.number())),
        }),
      ),
      variants: v.array(ClientFlagVariant),
      description: v.nullable(v.string()),
      impressionData: v.boolean(),
      dependencies: v.optional(
        v.array(
          v.object({
            feature: v.string(),
            enabled: v.boolean(),
            variants: v.optional(v.array(v.string())),
          }),
        ),
      ),
    }),
  ),
  query: v.object({
    namePrefix: v.optional(v.string()),
    environment: v.nullable(v.string()),
    inlineSegmentConstraints: v.boolean(),
    project: v.optional(v.array(v.string())),
    tag: v.optional(v.array(v.array(v.string()))),
  }),
  meta: v.object({
    revisionId: v.number(),
    etag: v.string(),
    queryHash: v.string(),
  }),
  segments: v.optional(
    v.array(
      v.object({
        id: v.number(),
        name: v.nullable(v.string()),
        constraints: v.array(
          v.object({
            contextName: v.string(),
            operator: v.string(),
            values: v.optional(v.array(v.string())),
            value: v.optional(v.string()),
          }),
        ),
      }),
    ),
  ),
});

const RolloutParameters = v.object({
  rollout: v.optional(v.string()),
  stickiness: v.optional(v.string()),
  groupId: v.optional(v.string()),
});

/** What `POST /edge/validate` answers with status 200. */
export const GetValidTokensResponse = v.object({
  tokens: v.array(
    v.object({
      token: v.string(),
      type: v.string(),
      projects: v.array(v.string()),
      environment: v.optional(v.string()),
    }),
  ),
});

/** A flag as the client API serves it (its strategies name their segments). */
const ClientFeatureAnswer = v.object({
  name: v.nullable(v.string()),
  type: v.string(),
  enabled: v.boolean(),
  project: v.nullable(v.string()),
  stale: v.boolean(),
  strategies: v.array(
    v.object({
      name: v.nullable(v.string()),
      constraints: v.array(ClientConstraint),
      parameters: RolloutParameters,
      variants: v.array(ClientStrategyVariant),
      segments: v.optional(v.array(v.number())),
    }),
  ),
  variants: v.array(ClientFlagVariant),
  description: v.nullable(v.string()),
  impressionData: v.boolean(),
});

/** What `GET /api/client/features/:featureName` answers with status 200. */
export const GetClientFeatureResponse = ClientFeatureAnswer;

const ClientSegmentAnswer = v.object({
  id: v.number(),
  name: v.nullable(v.string()),
  constraints: v.array(
    v.object({
      contextName: v.string(),
      operator: v.string(),
      values: v.optional(v.array(v.string())),
    }),
  ),
});

/** What `GET /api/client/delta` answers with status 200. */
export const GetDeltaResponse = v.object({
  events: v.array(
    v.object({
      eventId: v.number(),
      type: v.string(),
      features: v.optional(v.array(ClientFeatureAnswer)),
      segments: v.optional(v.array(ClientSegmentAnswer)),
      feature: v.optional(ClientFeatureAnswer),
      featureName: v.optional(v.string()),
      project: v.optional(v.string()),
      segment: v.optional(ClientSegmentAnswer),
    }),
  ),
});

/** A query parameter that may be repeated: one value is a string, several an array. */
const oneOrMore = v.union([v.string(), v.array(v.string())]);

/**
 * The client API's query (features, one flag, delta): documented here; the handler reads it
 * itself (`effectiveQuery` in routes.ts), with Unleash's messages and the token's scope.
 */
export const ClientFeaturesQuery = v.object({
  project: v.optional(oneOrMore),
  namePrefix: v.optional(v.string()),
  tag: v.optional(oneOrMore),
  environment: v.optional(v.string()),
});
