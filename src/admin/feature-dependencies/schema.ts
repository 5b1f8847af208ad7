/** Schemas of flag dependencies: the link a request adds, and the parent options' answers. */
import * as v from 'valibot';
import { nonBlank, urlFriendlyName } from '../../http/validation';

/** `variants` has no default: the `feature-dependency-added` event names them only when the request does. */
export const DependencySchema = v.object({
  feature: urlFriendlyName(100),
  enabled: v.optional(v.boolean(), true),
  variants: v.optional(v.pipe(v.array(nonBlank(255)), v.maxLength(100, 'must have at most 100 items'))),
});
export type DependencyRequest = v.InferOutput<typeof DependencySchema>;

/** What `GET /api/admin/projects/:projectId/features/:featureName/parent-variants` answers with status 200. */
export const ListParentVariantOptionsResponse = v.array(v.string());

/** What `GET /api/admin/projects/:projectId/features/:child/parents` answers with status 200. */
export const ListParentOptionsResponse = v.array(v.string());
