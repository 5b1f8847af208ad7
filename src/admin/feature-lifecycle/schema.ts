/** Schemas of a flag's lifecycle: completing it, and the answers of its reads. */
import * as v from 'valibot';
import { text } from '../../http/validation';

export const CompleteLifecycleSchema = v.object({
  status: v.picklist(['kept', 'discarded'], 'must be equal to one of the allowed values: "kept", "discarded"'),
  statusValue: v.optional(v.nullable(text(255))),
});

/** What `GET /api/admin/projects/:projectId/features/:featureName/lifecycle` answers with status 200. */
export const GetFeatureLifecycleResponse = v.array(
  v.object({
    stage: v.string(),
    enteredStageAt: v.string(),
    status: v.optional(v.string()),
  }),
);

/** What `GET /api/admin/lifecycle/count` answers with status 200. */
export const GetFeatureLifecycleStageCountResponse = v.object({
  initial: v.number(),
  preLive: v.number(),
  live: v.number(),
  completed: v.number(),
  archived: v.number(),
});
