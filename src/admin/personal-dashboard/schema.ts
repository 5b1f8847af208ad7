import * as v from 'valibot';

/**
 * What `GET /api/admin/personal-dashboard` answers with status 200 (Unleash's
 * personalDashboardSchema; no project owners are kept here, so that list is always empty).
 */
export const GetPersonalDashboardResponse = v.object({
  projects: v.array(v.object({ id: v.string(), name: v.string(), health: v.number(), memberCount: v.number(), featureCount: v.number() })),
  flags: v.array(
    v.object({
      name: v.nullable(v.string()),
      type: v.string(),
      project: v.nullable(v.string()),
    }),
  ),
  projectOwners: v.array(
    v.object({
      ownerType: v.literal('user'),
      name: v.string(),
      imageUrl: v.optional(v.nullable(v.string())),
      email: v.optional(v.nullable(v.string())),
    }),
  ),
  // Each of name, username and email only when the admin has one.
  admins: v.array(
    v.object({
      id: v.number(),
      name: v.optional(v.string()),
      username: v.optional(v.string()),
      email: v.optional(v.string()),
      imageUrl: v.string(),
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
  // `feature` once the first flag is created.
  onboardingStatus: v.object({
    status: v.string(),
    feature: v.optional(v.string()),
  }),
  owners: v.array(
    v.object({
      ownerType: v.string(),
    }),
  ),
  roles: v.array(v.object({ id: v.number(), name: v.string(), type: v.string() })),
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
