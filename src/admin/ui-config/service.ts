/**
 * What Unleash's admin UI asks for about the instance itself: its configuration (version,
 * URL, feature flags of the UI) and splash screens seen. We present the open-source edition
 * (`environment`), with the one switch the UI has for its governance panels set: an Enterprise
 * version in `versionInfo.current`, which makes the UI's `isEnterprise()` true (change
 * requests, groups, SCIM, project access). Every other Enterprise panel stays hidden by its
 * flag, or its calls get the honest empty answer (src/admin/edition); docs/ui.md has the map.
 */
import { getDb, type Db } from '../../db/client';
import type { Actor } from '../../db/events';
import type { Env } from '../../env';
import { publicBaseUrl } from '../../http/base-url';
import { configuredOrigins, useSavedOrigins } from '../../http/cors';
import { badRequest, notFound } from '../../http/errors';
import { log } from '../../log';
import { currentRevision } from '../../sdk/client-api/snapshot';
import { getMaintenance } from '../maintenance/service';
import * as store from './store';

export const UNLEASH_VERSION = '6.10.1';

export async function instanceId(db: Db): Promise<string> {
  const content = (await store.readSetting(db, 'instanceInfo')) as { id?: unknown } | undefined;
  return typeof content?.id === 'string' ? content.id : '';
}

/**
 * The UI's flags as open-source Unleash 6.10.1 reports them with no flag overrides: every
 * experiment off, so the UI shows the pages and dialogs this API implements. Then two of Unleash
 * Enterprise's own, for panels built here (docs/ui.md): `EEA`, the environments page's table
 * and actions (create, edit, clone, deprecate, delete, reorder), and `UG`, which names groups
 * in the project access page ("Assign user / group").
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
  EEA: true,
  UG: true,
} as const;

/** Unleash 6.10.1's default resource limits (the UI uses them to cap its forms). */
const RESOURCE_LIMITS = {
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

// ---------------------------------------------------------------------------------------
// The frontend API's allowed origins

/** Unleash's settings key of the frontend API's settings. */
const FRONTEND_SETTINGS_KEY = 'unleash.frontend';

/** The origins in a saved `unleash.frontend` row, or null when none are saved. */
function savedOrigins(content: unknown): string[] | null {
  const list = (content as { frontendApiOrigins?: unknown } | undefined)?.frontendApiOrigins;
  return Array.isArray(list) ? list.filter((item): item is string => typeof item === 'string') : null;
}

/** The saved list at the data revision it was read at, in this isolate. */
let known: { revision: number; origins: string[] | null } | undefined;

/**
 * Brings this isolate's allowed origins up to the current data revision: saving origins
 * records an audit event, which moves the revision, so the row is read again only after some
 * write (at most once per revision check, SDK_REVISION_CHECK_MS) and never on the hot path
 * otherwise. When D1 cannot be read, the list known last keeps applying.
 */
export async function refreshFrontendOrigins(env: Env): Promise<void> {
  try {
    const revision = await currentRevision(env);
    if (known?.revision === revision) return;
    const origins = savedOrigins(await store.readSetting(getDb(env), FRONTEND_SETTINGS_KEY));
    known = { revision, origins };
    useSavedOrigins(origins);
  } catch (error) {
    log.warn('keeping the frontend API origins known: D1 read failed', { error });
  }
}

/** What the UI shows: the saved list, else the configured one. */
async function frontendApiOrigins(db: Db, env: Env): Promise<string[]> {
  return savedOrigins(await store.readSetting(db, FRONTEND_SETTINGS_KEY)) ?? [...configuredOrigins(env)];
}

/** Unleash's rule: `*`, or exactly an origin (scheme, host and port; no path, no wildcard). */
function validOrigin(origin: string): boolean {
  if (origin === '*') return true;
  if (origin.includes('*')) return false;
  try {
    return new URL(origin).origin === origin;
  } catch {
    return false;
  }
}

/** Saves the frontend API's allowed origins; every isolate follows at its next revision check. */
export async function setFrontendOrigins(db: Db, actor: Actor, origins: readonly string[] | undefined): Promise<void> {
  // Unleash answers a body without the list with a bare 404.
  if (origins === undefined) throw notFound('The requested resource could not be found');
  const invalid = origins.find((origin) => !validOrigin(origin));
  if (invalid !== undefined) throw badRequest(`Invalid origin: ${invalid}`);
  const existing = await store.readSetting(db, FRONTEND_SETTINGS_KEY);
  const content = { ...((existing as Record<string, unknown> | undefined) ?? {}), frontendApiOrigins: [...origins] };
  const data = { id: FRONTEND_SETTINGS_KEY, ...content };
  await store.writeSetting(
    db,
    actor,
    FRONTEND_SETTINGS_KEY,
    content,
    existing === undefined ? { type: 'setting-created', data } : { type: 'setting-updated', data, preData: existing },
  );
}

/** The largest UI error report accepted (413 past it); what is logged of it is cut shorter. */
export const UI_ERROR_MAX_BODY_BYTES = 16 * 1024;
const UI_ERROR_MESSAGE_CHARS = 1000;
const UI_ERROR_STACK_CHARS = 4000;

/** A UI error report goes to the log only (as Unleash logs it): nothing is written to D1. */
export function recordUiError(actor: Actor, report: { errorMessage: string; errorStack?: string | undefined }): void {
  log.warn('UI error reported', {
    userId: actor.userId,
    errorMessage: report.errorMessage.slice(0, UI_ERROR_MESSAGE_CHARS),
    ...(report.errorStack === undefined ? {} : { errorStack: report.errorStack.slice(0, UI_ERROR_STACK_CHARS) }),
  });
}

/** Unleash's telemetry switches: this service collects and sends neither. */
export function telemetrySettings() {
  return { versionInfoCollectionEnabled: false, featureInfoCollectionEnabled: false };
}

/**
 * What the UI starts with; `unleashUrl` is where the request says we are served, and
 * `unleashContext` names the signed-in person (`userId`), as 6.10.1 does; empty for API keys.
 */
export async function uiConfig(db: Db, env: Env, request: Request, userId?: number) {
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
    frontendApiOrigins: await frontendApiOrigins(db, env),
    versionInfo: {
      current: { oss: UNLEASH_VERSION, enterprise: UNLEASH_VERSION },
      latest: {},
      isLatest: true,
      instanceId: await instanceId(db),
    },
    prometheusAPIAvailable: false,
    resourceLimits: RESOURCE_LIMITS,
    disablePasswordAuth: false,
    maintenanceMode: (await getMaintenance(db)).enabled,
    maxSessionsCount: 0,
    unleashContext: userId === undefined ? {} : { userId },
  };
}

/** A person dismissed a splash screen; Unleash answers what it stored (the row's keys, in its order). */
export async function markSplashSeen(db: Db, userId: number, splashId: string) {
  await store.markSplashSeen(db, userId, splashId);
  return { seen: true, splashId, userId };
}
