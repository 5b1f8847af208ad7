/**
 * Request schemas for features and everything hanging off them (strategies, variants,
 * dependencies, lifecycle). Their output types are the service's input types.
 */
import * as v from 'valibot';
import { CONSTRAINT_OPERATORS, PAYLOAD_TYPES, WEIGHT_TYPES } from '../../db/schema';
import { coercedText, nonBlank, text, urlFriendlyName } from '../../http/validation';
import { regexProblem } from '../../sdk/evaluation/constraints';

const optionalText = (max: number) => v.optional(v.nullable(text(max)));

/** The flag types of 6.10.1 (seeded in `feature_types`; the open-source build has no way to add one). */
export const FLAG_TYPE = v.picklist(['experiment', 'kill-switch', 'release', 'operational', 'permission']);

export const CreateFeatureSchema = v.object({
  name: urlFriendlyName(100),
  description: optionalText(1000),
  type: v.optional(FLAG_TYPE, 'release'),
  impressionData: v.optional(v.boolean(), false),
});
export type CreateFeatureRequest = v.InferOutput<typeof CreateFeatureSchema>;

export const UpdateFeatureSchema = v.object({
  description: optionalText(1000),
  type: v.optional(FLAG_TYPE),
  stale: v.optional(v.boolean()),
  impressionData: v.optional(v.boolean()),
  archived: v.optional(v.boolean()),
});
export type UpdateFeatureRequest = v.InferOutput<typeof UpdateFeatureSchema>;

/** JSON Patch (RFC 6902) limited to the fields a feature's metadata has. */
export const PatchFeatureSchema = v.pipe(
  v.array(
    v.object({
      op: v.picklist(['replace', 'add'], 'must be "replace" or "add"'),
      path: v.picklist(
        ['/description', '/type', '/stale', '/impressionData'],
        'must be one of "/description", "/type", "/stale", "/impressionData"',
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
const Constraints = v.pipe(v.array(ConstraintSchema), v.maxLength(100, 'must have at most 100 items'));

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

/** An environment variant: a strategy variant that may also carry overrides. */
export const VariantSchema = v.object({
  ...StrategyVariantSchema.entries,
  overrides: v.optional(
    v.pipe(
      v.array(
        v.object({ contextName: nonBlank(100), values: v.pipe(v.array(text(1000)), v.maxLength(1000, 'must have at most 1000 items')) }),
      ),
      v.maxLength(100, 'must have at most 100 items'),
    ),
  ),
});
export const VariantsSchema = v.pipe(v.array(VariantSchema), v.maxLength(100, 'must have at most 100 items'));

/** The same variants for several environments (the UI's "copy to environments"). */
export const VariantsBatchSchema = v.object({
  variants: v.optional(VariantsSchema, []),
  environments: v.optional(v.pipe(v.array(nonBlank(100)), v.maxLength(100, 'must have at most 100 items')), []),
});

/** Strategy parameters are strings in Unleash; numbers and booleans are stored as text. */
const ParameterValue = v.pipe(
  v.union([text(10_000), v.number(), v.boolean()], 'must be string'),
  v.transform((value) => String(value)),
);

export const StrategySchema = v.object({
  name: nonBlank(100),
  title: optionalText(255),
  disabled: v.optional(v.nullable(v.boolean())),
  sortOrder: v.optional(
    v.pipe(
      v.number(),
      v.integer('must be integer'),
      v.minValue(-1_000_000, 'must be >= -1000000'),
      v.maxValue(1_000_000, 'must be <= 1000000'),
    ),
  ),
  constraints: v.optional(Constraints, []),
  parameters: v.optional(v.record(v.pipe(v.string(), v.maxLength(100, 'keys must be at most 100 characters long')), ParameterValue), {}),
  variants: v.optional(v.pipe(v.array(StrategyVariantSchema), v.maxLength(100, 'must have at most 100 items')), []),
  segments: v.optional(
    v.pipe(
      v.array(
        v.pipe(v.number(), v.integer('must be integer'), v.minValue(1, 'must be >= 1'), v.maxValue(2_147_483_647, 'must be <= 2147483647')),
      ),
      v.maxLength(100, 'must have at most 100 items'),
    ),
    [],
  ),
});
export type StrategyRequest = v.InferOutput<typeof StrategySchema>;

export const DependencySchema = v.object({
  feature: urlFriendlyName(100),
  enabled: v.optional(v.boolean(), true),
  variants: v.optional(v.pipe(v.array(nonBlank(255)), v.maxLength(100, 'must have at most 100 items')), []),
});

export const CompleteLifecycleSchema = v.object({
  status: v.picklist(['kept', 'discarded'], 'must be equal to one of the allowed values: "kept", "discarded"'),
  statusValue: v.optional(v.nullable(text(255))),
});

/** `POST /api/admin/features/validate`: the create-flag form checks its name as you type. */
export const ValidateFeatureNameSchema = v.object({
  name: urlFriendlyName(100),
  projectId: v.optional(v.nullable(text(100))),
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

/** What `GET /api/admin/projects/:projectId/features/:featureName` answers with status 200. */
export const GetFeatureResponse = v.object({
  environments: v.array(
    v.object({
      name: v.string(),
      lastSeenAt: v.nullable(v.string()),
      variants: v.optional(v.array(v.unknown())),
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
  variants: v.array(v.unknown()),
  archived: v.boolean(),
  dependencies: v.array(
    v.object({
      feature: v.string(),
      enabled: v.boolean(),
      variants: v.array(v.unknown()),
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
  links: v.array(v.unknown()),
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

/** What `GET /api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies` answers with status 200. */
export const GetFeatureStrategiesResponse = v.array(StrategyAnswer);

/** What `POST /api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies` answers with status 200. */
export const AddFeatureStrategyResponse = StrategyAnswer;

/** What `PUT /api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId` answers with status 200. */
export const UpdateFeatureStrategyResponse = StrategyAnswer;

const VariantsAnswer = v.object({
  version: v.number(),
  variants: v.array(
    v.object({
      name: v.nullable(v.string()),
      weight: v.number(),
      weightType: v.string(),
      stickiness: v.string(),
    }),
  ),
});

/** What `GET /api/admin/projects/:projectId/features/:featureName/environments/:environment/variants` answers with status 200. */
export const GetEnvironmentFeatureVariantsResponse = VariantsAnswer;

/** What `PUT /api/admin/projects/:projectId/features/:featureName/environments/:environment/variants` answers with status 200. */
export const OverwriteEnvironmentFeatureVariantsResponse = VariantsAnswer;

/** What `GET /api/admin/projects/:projectId/features/:featureName/lifecycle` answers with status 200. */
export const GetFeatureLifecycleResponse = v.array(
  v.object({
    stage: v.string(),
    enteredStageAt: v.string(),
    status: v.optional(v.string()),
  }),
);

/** What `GET /api/admin/projects/:projectId/features/:featureName/parent-variants` answers with status 200. */
export const ListParentVariantOptionsResponse = v.array(v.string());

/** New sort orders for some of a flag's strategies in one environment. */
export const StrategySortOrderSchema = v.pipe(
  v.array(v.strictObject({ id: text(100), sortOrder: v.pipe(v.number(), v.integer('must be integer')) })),
  v.maxLength(1000, 'must have at most 1000 items'),
);

/** What `GET /api/admin/projects/:projectId/features/:featureName/environments/:environment` answers. */
export const GetFeatureEnvironmentResponse = v.object({
  name: v.string(),
  environment: v.string(),
  enabled: v.boolean(),
  strategies: v.array(v.omit(StrategyAnswer, ['segments'])),
});
