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

/** `PUT /api/admin/feature-types/:id/lifetime`: days, 0 or null for "never stale". */
export const FeatureTypeLifetimeSchema = v.object({
  lifetimeDays: v.nullable(
    v.pipe(
      v.number('must be integer'),
      v.integer('must be integer'),
      v.minValue(0, 'must be >= 0'),
      v.maxValue(2147483647, 'must be <= 2147483647'),
    ),
  ),
});

/** What `PUT /api/admin/feature-types/:id/lifetime` answers with status 200. */
export const UpdateFeatureTypeLifetimeResponse = v.object({
  id: v.string(),
  name: v.nullable(v.string()),
  description: v.nullable(v.string()),
  lifetimeDays: v.nullable(v.number()),
});
