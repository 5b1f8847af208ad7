/**
 * The service's routes: every module's route objects, registered in one place. Where paths
 * overlap, a literal segment wins over a parameter (`/user-admin/access` before
 * `/user-admin/:id`) whatever the module order.
 */
import { Router, type IRequest } from 'itty-router';
import type { Env } from './env';
import { pathNotFound, toErrorResponse } from './http/errors';
import { authenticated, register, route, type Route } from './http/route';
import { routes as addons } from './modules/addons/routes';
import { routes as apiTokens } from './modules/api-tokens/routes';
import { routes as applications } from './modules/applications/routes';
import { routes as clientApi } from './modules/client-api/routes';
import { routes as clientDelta } from './modules/client-api/delta-routes';
import { routes as clientStreaming } from './modules/client-api/streaming';
import { routes as clientMetrics } from './modules/client-metrics/routes';
import { routes as contextFields } from './modules/context-fields/routes';
import { routes as environments } from './modules/environments/routes';
import { routes as events } from './modules/events/routes';
import { routes as featureSearch } from './modules/feature-search/routes';
import { routes as featureTypes } from './modules/feature-types/routes';
import { routes as features } from './modules/features/routes';
import { routes as frontendApi } from './modules/frontend-api/routes';
import { routes as importExport } from './modules/import-export/routes';
import { routes as instanceAdmin } from './modules/instance-admin/routes';
import { routes as maintenance } from './modules/maintenance/routes';
import { documentRoutes, routes as operational } from './modules/operational/routes';
import { routes as personalDashboard } from './modules/personal-dashboard/routes';
import { routes as personalTokens } from './modules/personal-tokens/routes';
import { routes as projectAccess } from './modules/project-access/routes';
import { routes as projectFeatures } from './modules/project-features/routes';
import { routes as playground } from './modules/playground/routes';
import { routes as projects } from './modules/projects/routes';
import { routes as projectInsights } from './modules/project-insights/routes';
import { routes as resetTokens } from './modules/reset-tokens/routes';
import { routes as roles } from './modules/roles/routes';
import { routes as segments } from './modules/segments/routes';
import { routes as serviceAccounts } from './modules/service-accounts/routes';
import { routes as sessions } from './modules/sessions/routes';
import { routes as signupTokens } from './modules/signup-tokens/routes';
import { routes as sso } from './modules/sso/routes';
import { routes as strategies } from './modules/strategies/routes';
import { routes as tags } from './modules/tags/routes';
import { routes as uiConfig } from './modules/ui-config/routes';
import { routes as userFeedback } from './modules/user-feedback/routes';
import { routes as users } from './modules/users/routes';
import { preflight } from './http/cors';
import { flushAfterResponse } from './modules/addons/delivery';
import { refuseWriteInMaintenance } from './modules/maintenance/service';
import { refreshFrontendOrigins } from './modules/ui-config/service';

/** Every operation the service answers, in the order the router tries them. */
export const ROUTES: readonly Route[] = [
  ...operational,
  ...apiTokens,
  ...addons,
  ...roles,
  ...users,
  ...projectAccess,
  ...signupTokens,
  ...sessions,
  ...sso,
  ...resetTokens,
  ...personalTokens,
  ...serviceAccounts,
  ...featureSearch,
  ...events,
  ...environments,
  ...projects,
  ...projectFeatures,
  ...projectInsights,
  ...features,
  ...tags,
  ...segments,
  ...importExport,
  ...uiConfig,
  ...userFeedback,
  ...instanceAdmin,
  ...maintenance,
  ...personalDashboard,
  ...featureTypes,
  ...strategies,
  ...playground,
  ...contextFields,
  ...clientMetrics,
  ...applications,
  ...clientApi,
  ...clientDelta,
  ...clientStreaming,
  ...frontendApi,
];

export const router = Router<IRequest, [Env, ExecutionContext], Response>({
  catch: (error, request) => toErrorResponse(error, request),
});

// What every route does around its handler that belongs to a module, not to src/http: the
// maintenance switch refuses admin writes; a write's audit events go to their integrations;
// the frontend API's allowed origins follow what was saved in the UI.
register(router, ROUTES, {
  guardAdminWrite: (env, method, path) => refuseWriteInMaintenance(env, method, path),
  afterWrite: flushAfterResponse,
  refreshCorsOrigins: refreshFrontendOrigins,
});
documentRoutes(() => ROUTES);

// Browsers preflight every frontend API path, also those that answer 405.
router.options('/api/frontend/*', async (request, env: Env) => {
  await refreshFrontendOrigins(env);
  return preflight(request, env);
});

// Anything else. Under /api/admin the caller is authenticated first, as Unleash does, so an
// anonymous caller learns nothing about which paths exist.
const unknownPath = ({ request }: { request: Request }): never => {
  throw pathNotFound(new URL(request.url).pathname);
};
register(router, [
  route({
    method: 'ALL',
    path: '/api/admin/*',
    access: authenticated(),
    tag: 'Operational',
    operationId: 'unknownAdminPath',
    summary: 'Any other admin path: 401 without a credential, else 404',
    responses: {},
    handler: unknownPath,
  }),
]);
router.all('*', (request) => unknownPath({ request }));
