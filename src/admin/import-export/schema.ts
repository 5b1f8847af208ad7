/**
 * The import body (seed "Import data", unleash-behaviour §6.3 as 6.10.1 accepts it: the
 * deprecated feature fields `variants`, `strategies` and `lastSeenAt` are allowed and
 * ignored) and the export query. Objects reject unknown keys, as Unleash's schemas do.
 */
import * as v from 'valibot';
import { CONSTRAINT_OPERATORS, PAYLOAD_TYPES, WEIGHT_TYPES } from '../../db/schema';
import { dateTime, nonBlank, text, urlFriendlyName } from '../../http/validation';
import { StrategyAnswer } from '../features/schema';
import { LinkSchema } from '../feature-links/schema';

const LIFECYCLE_STAGES = ['initial', 'pre-live', 'live', 'completed', 'archived'] as const;

const MAX_SAFE_INT = 2 ** 31 - 1;

const featureName = urlFriendlyName(100);

const smallInt = v.pipe(
  v.number(),
  v.integer('must be integer'),
  v.minValue(-MAX_SAFE_INT, `must be >= ${-MAX_SAFE_INT}`),
  v.maxValue(MAX_SAFE_INT, `must be <= ${MAX_SAFE_INT}`),
);
const weight = v.pipe(v.number(), v.integer('must be integer'), v.minValue(0, 'must be >= 0'), v.maxValue(1000, 'must be <= 1000'));
const tagText = v.pipe(text(50), v.minLength(2, 'must NOT have fewer than 2 characters'));
const anything = v.unknown();
const nullableText = (max: number) => v.nullish(text(max));

const payload = v.strictObject({
  type: v.picklist(PAYLOAD_TYPES),
  value: text(100_000),
});

const constraint = v.strictObject({
  contextName: nonBlank(100),
  operator: v.picklist(CONSTRAINT_OPERATORS),
  caseInsensitive: v.optional(v.boolean()),
  inverted: v.optional(v.boolean()),
  values: v.optional(v.array(text(1000))),
  value: v.optional(text(1000)),
});

const strategyVariant = v.strictObject({
  name: nonBlank(255),
  weight,
  weightType: v.picklist(WEIGHT_TYPES),
  stickiness: nonBlank(100),
  payload: v.optional(payload),
});

const variant = v.strictObject({
  name: nonBlank(255),
  weight,
  weightType: v.optional(v.picklist(WEIGHT_TYPES)),
  stickiness: v.optional(nonBlank(100)),
  payload: v.optional(payload),
  overrides: v.optional(v.array(v.strictObject({ contextName: nonBlank(100), values: v.array(text(1000)) }))),
});

/** Parameter values are strings; numbers and booleans are coerced, as Unleash's validator does. */
const parameterValue = v.pipe(
  v.union([text(10_000), v.number(), v.boolean()]),
  v.transform((value) => String(value)),
);

const featureStrategy = v.strictObject({
  name: nonBlank(255),
  id: v.optional(text(100)),
  title: nullableText(255),
  disabled: v.nullish(v.boolean()),
  featureName: v.optional(featureName),
  sortOrder: v.optional(smallInt),
  segments: v.optional(
    v.array(
      v.pipe(
        v.number(),
        v.integer('must be integer'),
        v.minValue(1, 'must be >= 1'),
        v.maxValue(Number.MAX_SAFE_INTEGER, 'must be a safe integer'),
      ),
    ),
  ),
  constraints: v.optional(v.array(constraint)),
  variants: v.optional(v.array(strategyVariant)),
  parameters: v.optional(v.record(text(100), parameterValue)),
});

const featureEnvironment = v.strictObject({
  name: text(100),
  enabled: v.boolean(),
  featureName: v.optional(featureName),
  environment: v.optional(text(100)),
  type: v.optional(text(100)),
  sortOrder: v.optional(smallInt),
  variantCount: v.optional(smallInt),
  strategies: v.optional(v.array(anything)),
  variants: v.optional(v.array(variant)),
  lastSeenAt: v.nullish(anything),
  hasStrategies: v.optional(v.boolean()),
  hasEnabledStrategies: v.optional(v.boolean()),
});

const exportedFeature = v.strictObject({
  name: featureName,
  type: v.optional(nonBlank(100)),
  description: nullableText(10_000),
  archived: v.optional(v.boolean()),
  project: v.optional(text(100)),
  enabled: v.optional(v.boolean()),
  stale: v.optional(v.boolean()),
  favorite: v.optional(v.boolean()),
  impressionData: v.optional(v.boolean()),
  createdAt: v.nullish(dateTime),
  archivedAt: v.nullish(dateTime),
  // Deprecated in v5 (seed); 6.10.1 accepts and ignores them.
  lastSeenAt: v.nullish(dateTime),
  variants: v.optional(v.array(anything)),
  strategies: v.optional(v.array(anything)),
  environments: v.optional(v.array(anything)),
  tags: v.nullish(v.array(v.strictObject({ value: tagText, type: v.optional(tagText) }))),
  children: v.optional(v.array(text(100))),
  lifecycle: v.optional(v.strictObject({ stage: v.picklist(LIFECYCLE_STAGES), status: v.nullish(text(100)), enteredStageAt: dateTime })),
  dependencies: v.optional(
    v.array(v.strictObject({ feature: text(100), enabled: v.optional(v.boolean()), variants: v.optional(v.array(text(255))) })),
  ),
});

const contextField = v.strictObject({
  name: nonBlank(100),
  description: nullableText(1000),
  stickiness: v.optional(v.boolean()),
  sortOrder: v.optional(smallInt),
  createdAt: v.nullish(dateTime),
  usedInFeatures: v.nullish(smallInt),
  usedInProjects: v.nullish(smallInt),
  legalValues: v.optional(v.array(v.strictObject({ value: text(100), description: v.optional(text(1000)) }))),
  project: v.nullish(text(100)),
});

const featureTag = v.strictObject({
  featureName,
  tagValue: tagText,
  tagType: v.optional(tagText),
  // Deprecated spellings the seed lists (superseded by tagType/tagValue).
  type: v.optional(tagText),
  value: v.optional(tagText),
  createdByUserId: v.nullish(smallInt),
});

const tagType = v.strictObject({
  name: tagText,
  description: nullableText(1000),
  icon: nullableText(100),
  color: v.nullish(v.pipe(v.string(), v.regex(/^#[0-9A-Fa-f]{6}$/, 'must match pattern "^#[0-9A-Fa-f]{6}$"'))),
});

const segmentRef = v.strictObject({
  id: v.pipe(
    v.number(),
    v.integer('must be integer'),
    v.minValue(1, 'must be >= 1'),
    v.maxValue(Number.MAX_SAFE_INTEGER, 'must be a safe integer'),
  ),
  name: nonBlank(255),
});

const dependencyEntry = v.strictObject({
  feature: featureName,
  dependencies: v.array(
    v.strictObject({
      feature: featureName,
      enabled: v.optional(v.boolean()),
      variants: v.optional(v.array(text(255))),
    }),
  ),
});

/** `data.links` (Unleash 7.0+): a flag's links, `{url, title?}` each, other keys of a link ignored. */
const featureLinks = v.strictObject({
  feature: text(1000),
  links: v.array(LinkSchema),
});

export const ImportSchema = v.strictObject({
  project: nonBlank(100),
  environment: nonBlank(100),
  data: v.strictObject({
    features: v.array(exportedFeature),
    featureStrategies: v.array(featureStrategy),
    featureEnvironments: v.optional(v.array(featureEnvironment)),
    contextFields: v.optional(v.array(contextField)),
    featureTags: v.optional(v.array(featureTag)),
    segments: v.optional(v.array(segmentRef)),
    tagTypes: v.array(tagType),
    dependencies: v.optional(v.array(dependencyEntry)),
    links: v.optional(v.array(featureLinks)),
  }),
});
type ImportRequest = v.InferOutput<typeof ImportSchema>;

/**
 * The element schemas of `data`'s arrays. A streamed body is checked element by element with
 * these, and its skeleton (the arrays left empty) with ImportSchema: together the same rules.
 */
export const ITEM_SCHEMAS = {
  features: exportedFeature,
  featureStrategies: featureStrategy,
  featureEnvironments: featureEnvironment,
  contextFields: contextField,
  featureTags: featureTag,
  segments: segmentRef,
  tagTypes: tagType,
  dependencies: dependencyEntry,
  links: featureLinks,
} as const;
export type ImportData = ImportRequest['data'];
export type ImportedStrategy = ImportData['featureStrategies'][number];
export type ImportedVariant = v.InferOutput<typeof variant>;
export type ImportedConstraint = v.InferOutput<typeof constraint>;

export const ExportSchema = v.strictObject({
  features: v.optional(v.pipe(v.array(featureName), v.maxLength(100_000, 'must NOT have more than 100000 items'))),
  tag: v.optional(v.pipe(text(101), v.regex(/^[^:]{2,50}:[^:]{2,50}$/, 'must match pattern "^[^:]{2,50}:[^:]{2,50}$"'))),
  project: v.optional(nonBlank(100)),
  environment: nonBlank(100),
  downloadFile: v.optional(v.boolean()),
});
export type ExportRequest = v.InferOutput<typeof ExportSchema>;

/** An import job as the job routes answer it. */
const ImportJobAnswer = v.object({
  id: v.string(),
  status: v.string(),
  project: v.nullable(v.string()),
  environment: v.nullable(v.string()),
  totalChunks: v.number(),
  doneChunks: v.number(),
  totalFeatures: v.number(),
  errors: v.array(v.object({ message: v.string(), chunk: v.optional(v.number()) })),
  createdAt: v.string(),
  startedAt: v.nullable(v.string()),
  finishedAt: v.nullable(v.string()),
});

/** What `POST /api/admin/features-batch/import` answers with status 202: the job, queued. */
export const ImportToggles202Response = ImportJobAnswer;

/** What `GET /api/admin/features-batch/import/jobs/:id` answers with status 200. */
export const GetImportJobResponse = ImportJobAnswer;

/** What `DELETE /api/admin/features-batch/import/jobs/:id` answers with status 200: the job, cancelled. */
export const CancelImportJobResponse = ImportJobAnswer;

/** What `POST /api/admin/features-batch/validate` answers with status 200. */
export const ValidateImportResponse = v.object({
  errors: v.array(
    v.object({
      message: v.string(),
      affectedItems: v.array(v.string()),
    }),
  ),
  warnings: v.array(
    v.object({
      message: v.string(),
      affectedItems: v.array(v.string()),
    }),
  ),
  permissions: v.array(
    v.object({
      message: v.string(),
      affectedItems: v.array(v.string()),
    }),
  ),
});

/** What `POST /api/admin/features-batch/export` answers with status 200. */
export const ExportFeaturesResponse = v.object({
  features: v.array(
    v.object({
      name: v.nullable(v.string()),
      description: v.nullable(v.string()),
      type: v.string(),
      project: v.nullable(v.string()),
      stale: v.boolean(),
      impressionData: v.boolean(),
      archived: v.boolean(),
    }),
  ),
  featureStrategies: v.array(StrategyAnswer),
  featureEnvironments: v.array(
    v.object({
      enabled: v.boolean(),
      featureName: v.string(),
      environment: v.nullable(v.string()),
      variants: v.array(
        v.object({
          name: v.nullable(v.string()),
          weight: v.number(),
          weightType: v.string(),
          stickiness: v.string(),
        }),
      ),
      name: v.nullable(v.string()),
    }),
  ),
  contextFields: v.array(
    v.object({
      name: v.nullable(v.string()),
      description: v.nullable(v.string()),
      stickiness: v.boolean(),
      sortOrder: v.number(),
      legalValues: v.array(
        v.object({
          value: v.optional(v.string()),
        }),
      ),
    }),
  ),
  featureTags: v.array(
    v.object({
      featureName: v.string(),
      tagType: v.string(),
      tagValue: v.string(),
    }),
  ),
  segments: v.array(
    v.object({
      id: v.number(),
      name: v.nullable(v.string()),
    }),
  ),
  tagTypes: v.array(
    v.object({
      name: v.nullable(v.string()),
      description: v.nullable(v.string()),
      icon: v.nullable(v.string()),
    }),
  ),
  dependencies: v.array(
    v.object({
      feature: v.string(),
      dependencies: v.array(
        v.object({
          feature: v.string(),
          enabled: v.boolean(),
          variants: v.array(v.string()),
        }),
      ),
    }),
  ),
  links: v.array(
    v.object({
      feature: v.string(),
      links: v.array(v.object({ id: v.string(), url: v.string(), title: v.nullable(v.string()) })),
    }),
  ),
});
