/** Schemas of a flag's strategies: the strategy a request writes, a new sort order, and the answers. */
import * as v from 'valibot';
import { nonBlank, text } from '../../http/validation';
import { ConstraintSchema, StrategyAnswer, StrategyVariantSchema } from '../features/schema';

const Constraints = v.pipe(v.array(ConstraintSchema), v.maxLength(100, 'must have at most 100 items'));

/** Strategy parameters are strings in Unleash; numbers and booleans are stored as text. */
const ParameterValue = v.pipe(
  v.union([text(10_000), v.number(), v.boolean()], 'must be string'),
  v.transform((value) => String(value)),
);

export const StrategySchema = v.object({
  name: nonBlank(100),
  title: v.optional(v.nullable(text(255))),
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

/** New sort orders for some of a flag's strategies in one environment. */
export const StrategySortOrderSchema = v.pipe(
  v.array(v.strictObject({ id: text(100), sortOrder: v.pipe(v.number(), v.integer('must be integer')) })),
  v.maxLength(1000, 'must have at most 1000 items'),
);

/** What `GET /api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies` answers with status 200. */
export const GetFeatureStrategiesResponse = v.array(StrategyAnswer);

/** What `POST /api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies` answers with status 200. */
export const AddFeatureStrategyResponse = StrategyAnswer;

/** What `PUT /api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId` answers with status 200. */
export const UpdateFeatureStrategyResponse = StrategyAnswer;
