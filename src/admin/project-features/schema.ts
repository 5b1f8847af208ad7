/**
 * Schemas of the project-scoped flag operations: the project's flag list, cloning, and bulk
 * archive/delete (their body, Unleash's `batchFeaturesSchema`, is features/schema.ts's).
 */
import * as v from 'valibot';
import { urlFriendlyName } from '../../http/validation';
import { FeatureOverview } from '../projects/schema';

/** `?tag=type:value` (repeatable) and `?namePrefix=`, as Unleash's project flag list reads them. */
export const ProjectFeaturesQuery = v.object({
  tag: v.optional(
    v.union([
      v.pipe(v.string(), v.maxLength(400, 'must be at most 400 characters long')),
      v.pipe(v.array(v.pipe(v.string(), v.maxLength(400, 'must be at most 400 characters long'))), v.maxLength(100)),
    ]),
  ),
  namePrefix: v.optional(v.pipe(v.string(), v.maxLength(100, 'must be at most 100 characters long'))),
});
export type ProjectFeaturesQueryInput = v.InferOutput<typeof ProjectFeaturesQuery>;

/** What `GET /api/admin/projects/:projectId/features` answers with status 200. */
export const GetFeaturesResponse = v.object({ version: v.literal(2), features: v.array(FeatureOverview) });

/** `POST …/features/:featureName/clone`: the new name, and whether strategies' `groupId` follows it (default yes). */
export const CloneFeatureSchema = v.object({
  name: urlFriendlyName(100),
  replaceGroupId: v.optional(v.boolean(), true),
});

/** What `POST /api/admin/projects/:projectId/archive/validate` answers with status 200. */
export const ValidateArchiveFeaturesResponse = v.object({
  parentsWithChildFeatures: v.array(v.string()),
  hasDeletedDependencies: v.boolean(),
});
