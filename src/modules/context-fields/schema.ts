import * as v from 'valibot';

/** What `GET /api/admin/context` answers with status 200. */
export const GetContextFieldsResponse = v.array(
  v.object({
    name: v.nullable(v.string()),
    description: v.nullable(v.string()),
    stickiness: v.boolean(),
    sortOrder: v.number(),
    legalValues: v.array(v.unknown()),
    createdAt: v.string(),
    usedInProjects: v.number(),
    usedInFeatures: v.number(),
  }),
);

/** What `GET /api/admin/context/:name` answers with status 200. */
export const GetContextFieldResponse = v.object({
  name: v.nullable(v.string()),
  description: v.nullable(v.string()),
  stickiness: v.boolean(),
  sortOrder: v.number(),
  legalValues: v.array(v.unknown()),
  createdAt: v.string(),
});
