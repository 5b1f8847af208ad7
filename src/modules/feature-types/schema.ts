import * as v from 'valibot';

/** What `GET /api/admin/feature-types` answers with status 200. */
export const GetAllFeatureTypesResponse = v.object({
  version: v.number(),
  types: v.array(
    v.object({
      id: v.string(),
      name: v.nullable(v.string()),
      description: v.nullable(v.string()),
      lifetimeDays: v.nullable(v.number()),
    }),
  ),
});
