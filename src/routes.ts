/**
 * Every module's route objects, in the order the router tries them (src/app.ts registers them).
 * Where paths overlap, a literal segment wins over a parameter (`/user-admin/access` before
 * `/user-admin/:id`) whatever the module order.
 */
import type { Route } from './http/route';
import { routes as addons } from './integrations/addons/routes';
import { routes as apiTokens } from './identity/api-tokens/routes';
import { routes as applications } from './admin/applications/routes';
import { routes as banners } from './admin/banners/routes';
import { routes as clientApi } from './sdk/client-api/routes';
import { routes as clientDelta } from './sdk/client-api/delta-routes';
import { routes as clientStreaming } from './sdk/client-api/streaming';
import { routes as clientMetrics } from './sdk/client-metrics/routes';
import { routes as changeRequests } from './admin/change-requests/routes';
import { routes as contextFields } from './admin/context-fields/routes';
import { routes as environments } from './admin/environments/routes';
import { routes as events } from './admin/events/routes';
import { routes as featureSearch } from './admin/feature-search/routes';
import { routes as featureTypes } from './admin/feature-types/routes';
import { routes as featureLinks } from './admin/feature-links/routes';
import { routes as favorites } from './admin/favorites/routes';
import { routes as featureDependencies } from './admin/feature-dependencies/routes';
import { routes as featureEnvironments } from './admin/feature-environments/routes';
import { routes as featureLifecycle } from './admin/feature-lifecycle/routes';
import { routes as featureStrategies } from './admin/feature-strategies/routes';
import { routes as featureVariants } from './admin/feature-variants/routes';
import { routes as features } from './admin/features/routes';
import { routes as frontendApi } from './sdk/frontend-api/routes';
import { routes as impactMetrics } from './sdk/impact-metrics/routes';
import { routes as importExport } from './admin/import-export/routes';
import { routes as instanceAdmin } from './admin/instance-admin/routes';
import { routes as loginHistory } from './identity/login-history/routes';
import { routes as maintenance } from './admin/maintenance/routes';
import { routes as operational } from './admin/operational/routes';
import { routes as personalDashboard } from './admin/personal-dashboard/routes';
import { routes as personalTokens } from './identity/personal-tokens/routes';
import { routes as projectAccess } from './identity/project-access/routes';
import { routes as projectContextFields } from './admin/context-fields/project-routes';
import { routes as projectFeatures } from './admin/project-features/routes';
import { routes as playground } from './admin/playground/routes';
import { routes as projects } from './admin/projects/routes';
import { routes as projectInsights } from './admin/project-insights/routes';
import { routes as resetTokens } from './identity/reset-tokens/routes';
import { routes as roles } from './identity/roles/routes';
import { routes as groups } from './identity/groups/routes';
import { routes as segments } from './admin/segments/routes';
import { routes as serviceAccounts } from './identity/service-accounts/routes';
import { routes as scim } from './identity/scim/routes';
import { routes as sessions } from './identity/sessions/routes';
import { routes as signupTokens } from './identity/signup-tokens/routes';
import { routes as sso } from './identity/sso/routes';
import { routes as strategies } from './admin/strategies/routes';
import { routes as tags } from './admin/tags/routes';
import { routes as trafficUsage } from './admin/traffic-usage/routes';
import { routes as uiConfig } from './admin/ui-config/routes';
import { routes as unknownFlags } from './admin/unknown-flags/routes';
import { routes as userFeedback } from './admin/user-feedback/routes';
import { routes as users } from './identity/users/routes';

/** Every operation the service answers, in the order the router tries them. */
export const ROUTES: readonly Route[] = [
  ...operational,
  ...apiTokens,
  ...addons,
  ...roles,
  ...groups,
  ...users,
  ...projectAccess,
  ...signupTokens,
  ...sessions,
  ...loginHistory,
  ...sso,
  ...scim,
  ...resetTokens,
  ...personalTokens,
  ...serviceAccounts,
  ...featureSearch,
  ...changeRequests,
  ...events,
  ...environments,
  ...projects,
  ...projectFeatures,
  ...projectInsights,
  ...features,
  ...featureLinks,
  ...featureStrategies,
  ...featureVariants,
  ...featureEnvironments,
  ...featureDependencies,
  ...featureLifecycle,
  ...favorites,
  ...tags,
  ...segments,
  ...importExport,
  ...uiConfig,
  ...banners,
  ...userFeedback,
  ...instanceAdmin,
  ...trafficUsage,
  ...maintenance,
  ...personalDashboard,
  ...featureTypes,
  ...strategies,
  ...playground,
  ...contextFields,
  ...projectContextFields,
  ...clientMetrics,
  ...impactMetrics,
  ...unknownFlags,
  ...applications,
  ...clientApi,
  ...clientDelta,
  ...clientStreaming,
  ...frontendApi,
];
