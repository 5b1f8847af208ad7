/**
 * Schemas of the project-scoped flag operations: the project's flag list, cloning, bulk
 * environment toggles, bulk archive/delete, project favourites, and the small lifecycle,
 * dependency and feature-type reads and writes that hang off them.
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

/** Unleash's `batchFeaturesSchema`: a list of flag names (bulk archive, validate, delete). */
export const BatchFeaturesSchema = v.object({
  features: v.pipe(
    v.array(v.pipe(v.string(), v.maxLength(100, 'must be at most 100 characters long'))),
    v.maxLength(1000, 'must have at most 1000 items'),
  ),
});

/** Unleash's `bulkToggleFeaturesSchema`: the same list. */
export const BulkToggleFeaturesSchema = BatchFeaturesSchema;

/** What `POST /api/admin/projects/:projectId/archive/validate` answers with status 200. */
export const ValidateArchiveFeaturesResponse = v.object({
  parentsWithChildFeatures: v.array(v.string()),
  hasDeletedDependencies: v.boolean(),
});

/** What `GET /api/admin/projects/:projectId/features/:child/parents` answers with status 200. */
export const ListParentOptionsResponse = v.array(v.string());

/** What `GET /api/admin/lifecycle/count` answers with status 200. */
export const GetFeatureLifecycleStageCountResponse = v.object({
  initial: v.number(),
  preLive: v.number(),
  live: v.number(),
  completed: v.number(),
  archived: v.number(),
});
