/**
 * What Unleash's admin UI asks for about the instance itself: its configuration (version,
 * URL, feature flags of the UI) and splash screens seen. We present ourselves as the
 * open-source Unleash 6.10.1 the UI was built for, never as Enterprise: Enterprise-only
 * panels stay hidden.
 */
import type { Db } from '../../db/client';
import type { Env } from '../../env';
import { publicBaseUrl } from '../../http/base-url';
import { getMaintenance } from '../maintenance/service';
import * as store from './store';

export const UNLEASH_VERSION = '6.10.1';

export async function instanceId(db: Db): Promise<string> {
  const content = (await store.readSetting(db, 'instanceInfo')) as { id?: unknown } | undefined;
  return typeof content?.id === 'string' ? content.id : '';
}

/**
 * The UI's flags as open-source Unleash 6.10.1 reports them with no flag overrides: every
 * experiment off, so the UI shows the pages and dialogs this API implements.
 */
const UI_FLAGS = {
  anonymiseEventLog: false,
  enableLicense: false,
  enableLicenseChecker: false,
  embedProxy: true,
  embedProxyFrontend: true,
  responseTimeWithAppNameKillSwitch: false,
  maintenanceMode: false,
  messageBanner: { name: 'disabled', enabled: false, feature_enabled: false },
  strictSchemaValidation: false,
  personalAccessTokensKillSwitch: false,
  migrationLock: true,
  demo: false,
  googleAuthEnabled: false,
  disableBulkToggle: false,
  filterInvalidClientMetrics: false,
  filterExistingFlagNames: false,
  disableMetrics: false,
  signals: false,
  automatedActions: false,
  celebrateUnleash: false,
  feedbackPosting: false,
  encryptEmails: false,
  extendedUsageMetrics: false,
  outdatedSdksBanner: false,
  feedbackComments: { name: 'disabled', enabled: false, feature_enabled: false },
  showInactiveUsers: false,
  useMemoizedActiveTokens: false,
  killScheduledChangeRequestCache: false,
  estimateTrafficDataCost: false,
  disableUpdateMaxRevisionId: false,
  disablePublishUnannouncedEvents: false,
  queryMissingTokens: false,
  responseTimeMetricsFix: false,
  disableShowContextFieldSelectionValues: false,
  manyStrategiesPagination: false,
  enableLegacyVariants: false,
  extendedMetrics: false,
  removeUnsafeInlineStyleSrc: false,
  projectRoleAssignment: false,
  originMiddlewareRequestLogging: false,
  webhookDomainLogging: false,
  releasePlans: false,
  productivityReportEmail: false,
  productivityReportUnsubscribers: false,
  'enterprise-payg': false,
  showUserDeviceCount: false,
  streaming: false,
  etagVariant: { name: 'disabled', enabled: false, feature_enabled: false },
  deltaApi: false,
  uniqueSdkTracking: false,
  consumptionModel: false,
  teamsIntegrationChangeRequests: false,
  edgeObservability: false,
  tagTypeColor: false,
  addEditStrategy: false,
  newStrategyDropdown: false,
  flagsOverviewSearch: false,
  flagsReleaseManagementUI: false,
  cleanupReminder: false,
  removeInactiveApplications: false,
  registerFrontendClient: false,
  featureLinks: false,
} as const;

/** Unleash 6.10.1's default resource limits (the UI uses them to cap its forms). */
export const RESOURCE_LIMITS = {
  segmentValues: 1000,
  strategySegments: 5,
  signalEndpoints: 5,
  actionSetActions: 10,
  actionSetsPerProject: 5,
  actionSetFilters: 5,
  actionSetFilterValues: 25,
  signalTokensPerEndpoint: 5,
  featureEnvironmentStrategies: 30,
  constraintValues: 250,
  constraints: 30,
  environments: 50,
  projects: 500,
  apiTokens: 100000,
  segments: 300,
  featureFlags: 100000,
} as const;

function frontendApiOrigins(env: Env): string[] {
  const configured = env.FRONTEND_API_ORIGINS?.split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  return configured && configured.length > 0 ? configured : ['*'];
}

/** What the UI starts with; `unleashUrl` is where the request says we are served. */
export async function uiConfig(db: Db, env: Env, request: Request) {
  return {
    environment: 'Open Source',
    flags: UI_FLAGS,
    version: UNLEASH_VERSION,
    emailEnabled: false,
    unleashUrl: publicBaseUrl(env, request),
    baseUriPath: '',
    authenticationType: 'open-source',
    segmentValuesLimit: RESOURCE_LIMITS.segmentValues,
    strategySegmentsLimit: RESOURCE_LIMITS.strategySegments,
    frontendApiOrigins: frontendApiOrigins(env),
    versionInfo: { current: { oss: UNLEASH_VERSION, enterprise: '' }, latest: {}, isLatest: true, instanceId: await instanceId(db) },
    prometheusAPIAvailable: false,
    resourceLimits: RESOURCE_LIMITS,
    disablePasswordAuth: false,
    maintenanceMode: (await getMaintenance(db)).enabled,
    maxSessionsCount: 0,
    unleashContext: {},
  };
}

/** A person dismissed a splash screen; Unleash answers what it stored. */
export async function markSplashSeen(db: Db, userId: number, splashId: string) {
  await store.markSplashSeen(db, userId, splashId);
  return { userId, splashId, seen: true };
}
