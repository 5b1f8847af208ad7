import * as v from 'valibot';

/** What `GET /api/admin/personal-dashboard` answers with status 200. */
export const GetPersonalDashboardResponse = v.object({
  projects: v.array(v.unknown()),
  flags: v.array(
    v.object({
      name: v.nullable(v.string()),
      type: v.string(),
      project: v.nullable(v.string()),
    }),
  ),
  projectOwners: v.array(v.unknown()),
  admins: v.array(
    v.object({
      id: v.number(),
      username: v.nullable(v.string()),
      imageUrl: v.nullable(v.string()),
    }),
  ),
});

/** What `GET /api/admin/personal-dashboard/:projectId` answers with status 200. */
export const GetPersonalDashboardProjectDetailsResponse = v.object({
  latestEvents: v.array(
    v.object({
      createdAt: v.string(),
      summary: v.string(),
      createdBy: v.nullable(v.string()),
      id: v.number(),
      createdByImageUrl: v.string(),
    }),
  ),
  onboardingStatus: v.object({
    status: v.string(),
    feature: v.string(),
  }),
  owners: v.array(
    v.object({
      ownerType: v.string(),
    }),
  ),
  roles: v.array(v.unknown()),
  insights: v.object({
    avgHealthCurrentWindow: v.null(),
    avgHealthPastWindow: v.null(),
    totalFlags: v.number(),
    potentiallyStaleFlags: v.number(),
    staleFlags: v.number(),
    activeFlags: v.number(),
    health: v.number(),
  }),
});
