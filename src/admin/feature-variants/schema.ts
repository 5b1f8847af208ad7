/** Schemas of a flag's environment variants: one environment, every environment, several at once. */
import * as v from 'valibot';
import { nonBlank, text } from '../../http/validation';
import { StrategyVariantSchema } from '../features/schema';

/** An environment variant: a strategy variant that may also carry overrides. */
const VariantSchema = v.object({
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

const VariantsAnswer = v.object({
  version: v.number(),
  variants: v.array(
    v.object({
      name: v.nullable(v.string()),
      weight: v.number(),
      // Optional in Unleash's variantSchema; variants stored before the defaults were written lack them.
      weightType: v.optional(v.string()),
      stickiness: v.optional(v.string()),
    }),
  ),
});

/** What `GET /api/admin/projects/:projectId/features/:featureName/environments/:environment/variants` answers with status 200. */
export const GetEnvironmentFeatureVariantsResponse = VariantsAnswer;

/** What `PUT /api/admin/projects/:projectId/features/:featureName/environments/:environment/variants` answers with status 200. */
export const OverwriteEnvironmentFeatureVariantsResponse = VariantsAnswer;
