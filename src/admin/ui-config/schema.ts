import * as v from 'valibot';

const FlagToggleAnswer = v.object({
  name: v.nullable(v.string()),
  enabled: v.boolean(),
  feature_enabled: v.boolean(),
});

/** What `GET /api/admin/ui-config` answers with status 200. */
export const GetUiConfigResponse = v.object({
  environment: v.nullable(v.string()),
  flags: v.object({
    anonymiseEventLog: v.boolean(),
    enableLicense: v.boolean(),
    enableLicenseChecker: v.boolean(),
    embedProxy: v.boolean(),
    embedProxyFrontend: v.boolean(),
    responseTimeWithAppNameKillSwitch: v.boolean(),
    maintenanceMode: v.boolean(),
    messageBanner: FlagToggleAnswer,
    strictSchemaValidation: v.boolean(),
    personalAccessTokensKillSwitch: v.boolean(),
    migrationLock: v.boolean(),
    demo: v.boolean(),
    googleAuthEnabled: v.boolean(),
    disableBulkToggle: v.boolean(),
    filterInvalidClientMetrics: v.boolean(),
    filterExistingFlagNames: v.boolean(),
    disableMetrics: v.boolean(),
    signals: v.boolean(),
    automatedActions: v.boolean(),
    celebrateUnleash: v.boolean(),
    feedbackPosting: v.boolean(),
    encryptEmails: v.boolean(),
    extendedUsageMetrics: v.boolean(),
    outdatedSdksBanner: v.boolean(),
    feedbackComments: FlagToggleAnswer,
    showInactiveUsers: v.boolean(),
    useMemoizedActiveTokens: v.boolean(),
    killScheduledChangeRequestCache: v.boolean(),
    estimateTrafficDataCost: v.boolean(),
    disableUpdateMaxRevisionId: v.boolean(),
    disablePublishUnannouncedEvents: v.boolean(),
    queryMissingTokens: v.boolean(),
    responseTimeMetricsFix: v.boolean(),
    disableShowContextFieldSelectionValues: v.boolean(),
    manyStrategiesPagination: v.boolean(),
    enableLegacyVariants: v.boolean(),
    extendedMetrics: v.boolean(),
    removeUnsafeInlineStyleSrc: v.boolean(),
    projectRoleAssignment: v.boolean(),
    originMiddlewareRequestLogging: v.boolean(),
    webhookDomainLogging: v.boolean(),
    releasePlans: v.boolean(),
    productivityReportEmail: v.boolean(),
    productivityReportUnsubscribers: v.boolean(),
    'enterprise-payg': v.boolean(),
    showUserDeviceCount: v.boolean(),
    streaming: v.boolean(),
    etagVariant: FlagToggleAnswer,
    deltaApi: v.boolean(),
    uniqueSdkTracking: v.boolean(),
    consumptionModel: v.boolean(),
    teamsIntegrationChangeRequests: v.boolean(),
    edgeObservability: v.boolean(),
    tagTypeColor: v.boolean(),
    addEditStrategy: v.boolean(),
    newStrategyDropdown: v.boolean(),
    flagsOverviewSearch: v.boolean(),
    flagsReleaseManagementUI: v.boolean(),
    cleanupReminder: v.boolean(),
    removeInactiveApplications: v.boolean(),
    registerFrontendClient: v.boolean(),
    featureLinks: v.boolean(),
  }),
  version: v.string(),
  emailEnabled: v.boolean(),
  unleashUrl: v.string(),
  baseUriPath: v.string(),
  authenticationType: v.string(),
  segmentValuesLimit: v.number(),
  strategySegmentsLimit: v.number(),
  frontendApiOrigins: v.array(v.string()),
  versionInfo: v.object({
    current: v.object({
      oss: v.string(),
      enterprise: v.string(),
    }),
    latest: v.object({}),
    isLatest: v.boolean(),
    instanceId: v.string(),
  }),
  prometheusAPIAvailable: v.boolean(),
  resourceLimits: v.object({
    segmentValues: v.number(),
    strategySegments: v.number(),
    signalEndpoints: v.number(),
    actionSetActions: v.number(),
    actionSetsPerProject: v.number(),
    actionSetFilters: v.number(),
    actionSetFilterValues: v.number(),
    signalTokensPerEndpoint: v.number(),
    featureEnvironmentStrategies: v.number(),
    constraintValues: v.number(),
    constraints: v.number(),
    environments: v.number(),
    projects: v.number(),
    apiTokens: v.number(),
    segments: v.number(),
    featureFlags: v.number(),
  }),
  disablePasswordAuth: v.boolean(),
  maintenanceMode: v.boolean(),
  maxSessionsCount: v.number(),
  unleashContext: v.object({ userId: v.optional(v.number()) }),
});

/** What `POST /api/admin/splash/:id` answers with status 200. */
export const UpdateSplashSettingsResponse = v.object({
  seen: v.boolean(),
  splashId: v.string(),
  userId: v.number(),
});

const Origins = v.pipe(
  v.array(v.pipe(v.string(), v.maxLength(500, 'must be at most 500 characters long')), 'must be array'),
  v.maxLength(100, 'must have at most 100 items'),
);

/** `POST /api/admin/ui-config/cors`: the list is optional in Unleash's schema (without it: 404). */
export const SetCorsSchema = v.strictObject({ frontendApiOrigins: v.optional(Origins) });

/** `POST /api/admin/ui-config` (deprecated in Unleash for `./cors`). */
export const SetUiConfigSchema = v.strictObject({
  frontendSettings: v.optional(v.strictObject({ frontendApiOrigins: Origins })),
});

/** What `GET /api/admin/telemetry/settings` answers with status 200. */
export const GetTelemetrySettingsResponse = v.object({
  versionInfoCollectionEnabled: v.boolean(),
  featureInfoCollectionEnabled: v.boolean(),
});

/** A UI error report: only logged, each part cut to a bounded length. */
export const RecordUiErrorSchema = v.object({
  errorMessage: v.string(),
  errorStack: v.optional(v.string()),
});

/** What `GET /api/admin/license/check` answers: no licence is needed, so it is always valid (no banner). */
export const LicenseCheckResponse = v.object({ isValid: v.boolean() });

/** What `GET /api/admin/insights` answers: Unleash's weekly trend snapshots are not taken here. */
export const InstanceInsightsResponse = v.object({
  userTrends: v.array(v.never()),
  flagTrends: v.array(v.never()),
  projectFlagTrends: v.array(v.never()),
  metricsSummaryTrends: v.array(v.never()),
  environmentTypeTrends: v.array(v.never()),
});
