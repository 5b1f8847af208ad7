/** Schemas of a flag in one environment. */
import * as v from 'valibot';
import { BatchFeaturesSchema, StrategyAnswer } from '../features/schema';

/** Unleash's `bulkToggleFeaturesSchema`: a list of flag names, as `batchFeaturesSchema`. */
export const BulkToggleFeaturesSchema = BatchFeaturesSchema;

/** What `GET /api/admin/projects/:projectId/features/:featureName/environments/:environment` answers. */
export const GetFeatureEnvironmentResponse = v.object({
  name: v.string(),
  environment: v.string(),
  enabled: v.boolean(),
  strategies: v.array(v.omit(StrategyAnswer, ['segments'])),
});
