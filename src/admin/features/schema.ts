/**
 * Schemas of a flag itself (create, update, patch, stale, revive, name validation) and of the
 * parts its answer is made of (constraints, strategy variants, strategies), which its
 * sub-resources (feature-strategies, feature-variants, ...) build on.
 */
import * as v from 'valibot';
import { CONSTRAINT_OPERATORS, PAYLOAD_TYPES, WEIGHT_TYPES } from '../../db/schema';
import { coercedText, nonBlank, text, urlFriendlyName } from '../../http/validation';
import { regexProblem } from '../../sdk/evaluation/constraints';
import { FeatureLinkSchema } from '../feature-links/schema';

const optionalText = (max: number) => v.optional(v.nullable(text(max)));

/** The flag types of 6.10.1 and 8.0's `sunset` (seeded in `feature_types`; the open-source build has no way to add one). */
export const FLAG_TYPE = v.picklist(['experiment', 'kill-switch', 'release', 'operational', 'permission', 'sunset']);

export const CreateFeatureSchema = v.object({
  name: urlFriendlyName(100),
  description: optionalText(1000),
  type: v.optional(FLAG_TYPE, 'release'),
  impressionData: v.optional(v.boolean(), false),
});
export type CreateFeatureRequest = v.InferOutput<typeof CreateFeatureSchema>;

export const UpdateFeatureSchema = v.object({
  // Only the flag's own name is accepted: a flag cannot be renamed (6.10.1 refuses another, 400).
  name: v.optional(v.string()),
  description: optionalText(1000),
  type: v.optional(FLAG_TYPE),
  stale: v.optional(v.boolean()),
  impressionData: v.optional(v.boolean()),
  archived: v.optional(v.boolean()),
});
export type UpdateFeatureRequest = v.InferOutput<typeof UpdateFeatureSchema>;

/** The metadata a JSON Patch on a flag may change. */
const PATCHABLE: readonly string[] = ['/description', '/type', '/stale', '/impressionData'];

/** JSON Patch (RFC 6902) limited to the fields a feature's metadata has. */
export const PatchFeatureSchema = v.pipe(
  v.array(
    v.object({
      op: v.picklist(['replace', 'add'], 'must be "replace" or "add"'),
      // Also taken, as 6.10.1 takes them: `/project` (ignored: a flag moves through its own
      // operation) and `/variants…` (refused with 403: variants have their own operation).
      path: v.pipe(
        v.string(),
        v.check(
          (path) => PATCHABLE.includes(path) || path === '/project' || /^\/variants(?:\/|$)/.test(path),
          'must be one of "/description", "/type", "/stale", "/impressionData"',
        ),
      ),
      value: v.unknown(),
    }),
  ),
  v.maxLength(20, 'must have at most 20 items'),
);

export const StaleSchema = v.object({
  features: v.pipe(
    v.array(urlFriendlyName(100)),
    v.minLength(1, 'must contain at least 1 item'),
    v.maxLength(1000, 'must have at most 1000 items'),
  ),
  stale: v.boolean(),
});

export const ReviveSchema = v.object({
  features: v.pipe(
    v.array(urlFriendlyName(100)),
    v.minLength(1, 'must contain at least 1 item'),
    v.maxLength(1000, 'must have at most 1000 items'),
  ),
});

/** Unleash's `batchFeaturesSchema`: a list of flag names (bulk archive, validate, delete, toggles). */
export const BatchFeaturesSchema = v.object({
  features: v.pipe(
    v.array(v.pipe(v.string(), v.maxLength(100, 'must be at most 100 characters long'))),
    v.maxLength(1000, 'must have at most 1000 items'),
  ),
});

/** `POST /api/admin/features/validate`: the create-flag form checks its name as you type. */
export const ValidateFeatureNameSchema = v.object({
  name: urlFriendlyName(100),
  projectId: v.optional(v.nullable(text(100))),
});
export type ValidateFeatureNameRequest = v.InferOutput<typeof ValidateFeatureNameSchema>;

export const ConstraintSchema = v.pipe(
  v.object({
    contextName: nonBlank(100),
    operator: v.picklist(
      CONSTRAINT_OPERATORS,
      `must be equal to one of the allowed values: ${CONSTRAINT_OPERATORS.map((op) => `"${op}"`).join(', ')}`,
    ),
    caseInsensitive: v.optional(v.boolean()),
    inverted: v.optional(v.boolean()),
    // Numbers are taken as their strings, as 6.10.1's validator coerces them (`"value": 1`).
    values: v.optional(v.pipe(v.array(coercedText(1000)), v.maxLength(1000, 'must have at most 1000 items'))),
    value: v.optional(coercedText(1000)),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed || dataset.value.operator !== 'REGEX') return;
    const problem = regexProblem(dataset.value.value, dataset.value.inverted);
    if (problem)
      addIssue({
        message: problem,
        path: [{ type: 'object', origin: 'value', input: dataset.value, key: 'value', value: dataset.value.value }],
      });
  }),
);
const PayloadSchema = v.object({
  type: v.picklist(PAYLOAD_TYPES, 'must be equal to one of the allowed values: "json", "csv", "string", "number"'),
  value: text(10_000),
});

const Weight = v.pipe(v.number(), v.integer('must be integer'), v.minValue(0, 'must be >= 0'), v.maxValue(1000, 'must be <= 1000'));

export const StrategyVariantSchema = v.object({
  name: nonBlank(255),
  weight: Weight,
  weightType: v.optional(v.picklist(WEIGHT_TYPES, 'must be equal to one of the allowed values: "variable", "fix"'), 'variable'),
  stickiness: v.optional(nonBlank(100), 'default'),
  payload: v.optional(PayloadSchema),
});

/** A constraint as the admin API answers it. */
export const ConstraintAnswer = v.object({
  contextName: v.string(),
  operator: v.string(),
  caseInsensitive: v.optional(v.boolean()),
  inverted: v.optional(v.boolean()),
  values: v.optional(v.array(v.string())),
  value: v.optional(v.string()),
});

/** A strategy variant as the admin API answers it. */
export const StrategyVariantAnswer = v.object({
  name: v.string(),
  weight: v.number(),
  weightType: v.string(),
  stickiness: v.string(),
  payload: v.optional(v.object({ type: v.string(), value: v.string() })),
});

/** A flag's (environment's) variant as the admin API answers it (Unleash's variantSchema). */
const FlagVariantAnswer = v.object({
  name: v.string(),
  weight: v.number(),
  weightType: v.optional(v.string()),
  stickiness: v.optional(v.string()),
  payload: v.optional(v.object({ type: v.string(), value: v.string() })),
  overrides: v.optional(v.array(v.object({ contextName: v.string(), values: v.array(v.string()) }))),
});

/**
 * A strategy of a flag in one environment, as the admin API answers it (Unleash's
 * featureStrategySchema): the strategy routes, the flag's environments and the export.
 */
export const StrategyAnswer = v.object({
  id: v.string(),
  name: v.string(),
  title: v.nullable(v.string()),
  disabled: v.nullable(v.boolean()),
  featureName: v.string(),
  sortOrder: v.number(),
  segments: v.array(v.number()),
  constraints: v.array(ConstraintAnswer),
  variants: v.array(StrategyVariantAnswer),
  parameters: v.record(v.string(), v.string()),
});

const FeatureAnswer = v.object({
  name: v.nullable(v.string()),
  description: v.nullable(v.string()),
  type: v.string(),
  project: v.nullable(v.string()),
  stale: v.boolean(),
  createdAt: v.string(),
  lastSeenAt: v.nullable(v.string()),
  impressionData: v.boolean(),
  archived: v.boolean(),
});

/** What `POST /api/admin/projects/:projectId/features` answers with status 201. */
export const CreateFeature201Response = FeatureAnswer;

/** `?variantEnvironments=true` adds each environment's variants to the flag's answer (the first one given counts). */
export const GetFeatureQuery = v.object({ variantEnvironments: v.optional(v.union([v.string(), v.array(v.string())])) });

/** What `GET /api/admin/projects/:projectId/features/:featureName` answers with status 200. */
export const GetFeatureResponse = v.object({
  environments: v.array(
    v.object({
      name: v.string(),
      lastSeenAt: v.nullable(v.string()),
      variants: v.optional(v.array(FlagVariantAnswer)),
      enabled: v.boolean(),
      yes: v.number(),
      no: v.number(),
      type: v.string(),
      sortOrder: v.number(),
      strategies: v.array(StrategyAnswer),
    }),
  ),
  name: v.string(),
  favorite: v.optional(v.boolean()),
  impressionData: v.boolean(),
  description: v.nullable(v.string()),
  project: v.string(),
  stale: v.boolean(),
  createdAt: v.string(),
  createdBy: v.object({
    id: v.number(),
    name: v.nullable(v.string()),
    imageUrl: v.nullable(v.string()),
  }),
  type: v.string(),
  lastSeenAt: v.nullable(v.string()),
  variants: v.array(FlagVariantAnswer),
  archived: v.boolean(),
  dependencies: v.array(
    v.object({
      feature: v.string(),
      enabled: v.boolean(),
      // The parent's variant names the child needs.
      variants: v.array(v.string()),
    }),
  ),
  children: v.array(v.string()),
  lifecycle: v.nullable(
    v.object({
      stage: v.string(),
      status: v.optional(v.string()),
      enteredStageAt: v.string(),
    }),
  ),
  links: v.array(FeatureLinkSchema),
  collaborators: v.object({
    users: v.array(v.object({ id: v.number(), name: v.string(), imageUrl: v.string() })),
  }),
});

/** What `PUT /api/admin/projects/:projectId/features/:featureName` answers with status 200. */
export const UpdateFeatureResponse = FeatureAnswer;

/** What `PATCH /api/admin/projects/:projectId/features/:featureName` answers with status 200. */
export const PatchFeatureResponse = FeatureAnswer;

const ArchivedListAnswer = v.object({
  version: v.number(),
  features: v.array(
    v.object({
      name: v.string(),
      description: v.nullable(v.string()),
      type: v.string(),
      project: v.string(),
      stale: v.boolean(),
      createdAt: v.string(),
      impressionData: v.boolean(),
      lastSeenAt: v.nullable(v.string()),
      archivedAt: v.nullable(v.string()),
      environments: v.array(v.object({ name: v.string(), lastSeenAt: v.string(), enabled: v.boolean() })),
    }),
  ),
});

/** What `GET /api/admin/archive/features` answers with status 200. */
export const GetArchivedFeaturesResponse = ArchivedListAnswer;

/** What `GET /api/admin/archive/features/:projectId` answers with status 200. */
export const GetArchivedFeaturesByProjectIdResponse = ArchivedListAnswer;
