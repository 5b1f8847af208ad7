import * as v from 'valibot';

/** What `GET /api/admin/instance-admin/statistics` answers with status 200. */
export const GetInstanceAdminStatsResponse = v.object({
  timestamp: v.string(),
  instanceId: v.string(),
  versionOSS: v.string(),
  versionEnterprise: v.string(),
  users: v.number(),
  serviceAccounts: v.number(),
  apiTokens: v.object({
    client: v.number(),
    admin: v.number(),
    frontend: v.number(),
    backend: v.number(),
  }),
  activeUsers: v.object({
    last7: v.number(),
    last30: v.number(),
    last60: v.number(),
    last90: v.number(),
  }),
  licensedUsers: v.number(),
  featureToggles: v.number(),
  archivedFeatureToggles: v.number(),
  projects: v.number(),
  contextFields: v.number(),
  roles: v.number(),
  customRootRoles: v.number(),
  customRootRolesInUse: v.number(),
  groups: v.number(),
  environments: v.number(),
  segments: v.number(),
  strategies: v.number(),
  SAMLenabled: v.boolean(),
  OIDCenabled: v.boolean(),
  passwordAuthEnabled: v.boolean(),
  SCIMenabled: v.boolean(),
  clientApps: v.array(
    v.object({
      range: v.string(),
      count: v.number(),
    }),
  ),
  featureExports: v.number(),
  featureImports: v.number(),
  productionChanges: v.object({
    last30: v.number(),
    last60: v.number(),
    last90: v.number(),
  }),
  previousDayMetricsBucketsCount: v.object({
    enabledCount: v.number(),
    variantCount: v.number(),
  }),
  maxEnvironmentStrategies: v.number(),
  maxConstraintValues: v.number(),
  maxConstraints: v.number(),
  releaseTemplates: v.number(),
  releasePlans: v.number(),
  edgeInstanceUsage: v.record(v.string(), v.number()),
  readOnlyUsers: v.number(),
  sum: v.string(),
});

/** What the Users page's seats box reads: every account is a seat, `current` those active in 30 days. */
export const LicensedUsersResponse = v.object({
  seatCount: v.number(),
  licensedUsers: v.object({ current: v.number(), history: v.array(v.never()) }),
});
