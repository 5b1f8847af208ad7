import * as v from 'valibot';

/** What `GET /api/admin/environments` answers with status 200. */
export const GetAllEnvironmentsResponse = v.object({
  version: v.number(),
  environments: v.array(
    v.object({
      name: v.nullable(v.string()),
      type: v.string(),
      sortOrder: v.number(),
      enabled: v.boolean(),
      protected: v.boolean(),
      requiredApprovals: v.null(),
      projectCount: v.number(),
      enabledToggleCount: v.number(),
    }),
  ),
});
