/**
 * The route table: one line per endpoint, each naming who may call it. Handlers live in
 * `modules/<resource>/routes.ts`. Errors from anywhere become Unleash error bodies in
 * `toErrorResponse`.
 */
import { Router, type IRequest } from 'itty-router';
import { adminRoute } from './auth/guard';
import {
  ADMIN,
  CREATE_CLIENT_API_TOKEN,
  CREATE_FRONTEND_API_TOKEN,
  DELETE_CLIENT_API_TOKEN,
  DELETE_FRONTEND_API_TOKEN,
  READ_CLIENT_API_TOKEN,
  READ_FRONTEND_API_TOKEN,
  UPDATE_CLIENT_API_TOKEN,
  UPDATE_FRONTEND_API_TOKEN,
} from './auth/permissions';
import type { Env } from './env';
import { pathNotFound, toErrorResponse } from './http/errors';
import { rateLimited } from './http/rate-limit';
import { json } from './http/responses';
import * as apiTokens from './modules/api-tokens/routes';
import * as importExport from './modules/import-export/routes';
import * as perm from './auth/permissions';
import * as environments from './modules/environments/routes';
import * as events from './modules/events/routes';
import * as featureSearch from './modules/feature-search/routes';
import * as features from './modules/features/routes';
import * as projectAccess from './modules/project-access/routes';
import * as projects from './modules/projects/routes';
import * as segments from './modules/segments/routes';
import * as tags from './modules/tags/routes';
import * as roles from './modules/roles/routes';
import * as signupTokens from './modules/signup-tokens/routes';
import * as users from './modules/users/routes';
import * as resetTokens from './modules/reset-tokens/routes';
import * as sessions from './modules/sessions/routes';
import * as personalTokens from './modules/personal-tokens/routes';
import { sdkRoute } from './auth/guard';
import { BACKEND_TOKEN_TYPES } from './auth/principal';
import * as clientMetrics from './modules/client-metrics/routes';
import * as contextFields from './modules/context-fields/routes';
import * as featureTypes from './modules/feature-types/routes';
import * as instanceAdmin from './modules/instance-admin/routes';
import * as personalDashboard from './modules/personal-dashboard/routes';
import * as strategies from './modules/strategies/routes';
import * as uiConfig from './modules/ui-config/routes';
import * as clientApi from './modules/client-api/routes';
import * as clientDelta from './modules/client-api/delta-routes';
import * as clientStreaming from './modules/client-api/streaming';
import * as frontendApi from './modules/frontend-api/routes';
import { openApiJson, openApiPage } from './openapi/routes';

export const router = Router<IRequest, [Env, ExecutionContext], Response>({
  catch: (error, request) => toErrorResponse(error, request),
});

// Liveness, as Unleash serves it; no authentication.
router.get('/health', () => json({ health: 'GOOD' }));

// The API description, public as in Unleash. Built from this router's own route list, so
// every route below (and any added later) is in it; metadata lives in src/openapi/registry.ts.
router.get('/docs/openapi.json', () => openApiJson(router.routes));
router.get('/docs/openapi', () => openApiPage(router.routes));

// API tokens (seed operation 4 and the rest of key management)
router.post('/api/admin/api-tokens', adminRoute([ADMIN, CREATE_CLIENT_API_TOKEN, CREATE_FRONTEND_API_TOKEN], apiTokens.create));
router.get('/api/admin/api-tokens', adminRoute([ADMIN, READ_CLIENT_API_TOKEN, READ_FRONTEND_API_TOKEN], apiTokens.list));
router.get('/api/admin/api-tokens/:token', adminRoute([ADMIN, READ_CLIENT_API_TOKEN, READ_FRONTEND_API_TOKEN], apiTokens.get));
router.put('/api/admin/api-tokens/:token', adminRoute([ADMIN, UPDATE_CLIENT_API_TOKEN, UPDATE_FRONTEND_API_TOKEN], apiTokens.update));
router.delete('/api/admin/api-tokens/:token', adminRoute([ADMIN, DELETE_CLIENT_API_TOKEN, DELETE_FRONTEND_API_TOKEN], apiTokens.revoke));

// Users, roles and public signup tokens (issue 3): seed operations 1, 2 and 3 and the rest of the flow
router.post('/api/admin/roles/validate', adminRoute([ADMIN], roles.validate));
router.get('/api/admin/roles', adminRoute([], roles.list));
router.post('/api/admin/roles', adminRoute([ADMIN], roles.create));
router.get('/api/admin/roles/:id', adminRoute([], roles.get));
router.put('/api/admin/roles/:id', adminRoute([ADMIN], roles.update));
router.delete('/api/admin/roles/:id', adminRoute([ADMIN], roles.remove));
router.get('/api/admin/user-admin', adminRoute([ADMIN], users.list));
router.post(
  '/api/admin/user-admin/validate-password',
  adminRoute([], ({ request }) => users.validatePassword(request)),
);
router.post('/api/admin/user-admin/:id/change-password', adminRoute([ADMIN], users.setPassword));
router.post('/api/admin/user-admin', adminRoute([ADMIN], users.create));
router.get('/api/admin/user-admin/access', adminRoute([], projectAccess.assignable));
router.get('/api/admin/user-admin/:id', adminRoute([ADMIN], users.get));
router.put('/api/admin/user-admin/:id', adminRoute([ADMIN], users.update));
router.delete('/api/admin/user-admin/:id', adminRoute([ADMIN], users.remove));
router.get('/api/admin/user-admin/:id/permissions', adminRoute([ADMIN], projectAccess.userPermissions));
router.get('/api/admin/invite-link/tokens', adminRoute([ADMIN], signupTokens.list));
router.post('/api/admin/invite-link/tokens', adminRoute([ADMIN], signupTokens.create));
router.get('/api/admin/invite-link/tokens/:token', adminRoute([ADMIN], signupTokens.get));
router.put('/api/admin/invite-link/tokens/:token', adminRoute([ADMIN], signupTokens.update));
router.get('/invite/:token/validate', rateLimited('invite', signupTokens.validateInvite)); // public: the secret is the credential
router.post('/invite/:token/signup', rateLimited('invite', signupTokens.signup)); // public: the secret is the credential

// Signing in, the caller's own account, passwords and personal access tokens
// Public, rate limited by address: sign-in (10 a minute, as Unleash) and the password check the
// signup page calls as a person types.
router.post('/auth/simple/login', rateLimited('login', sessions.login));
router.post('/auth/reset/validate-password', rateLimited('password-reset', users.validatePassword));
// A new user's link to choose a password (`/new-user?token=`, the create-user answer's inviteLink).
router.get('/auth/reset/validate', rateLimited('password-reset', resetTokens.validate));
router.post('/auth/reset/password', rateLimited('password-reset', resetTokens.setPassword));
router.post('/logout', adminRoute([], sessions.logout));
router.get('/api/admin/user', adminRoute([], users.current));
router.get('/api/admin/user/profile', adminRoute([], users.profile));
router.post('/api/admin/user/change-password', adminRoute([], users.changeOwnPassword));
router.get('/api/admin/user/tokens', adminRoute([], personalTokens.list));
router.post('/api/admin/user/tokens', adminRoute([], personalTokens.create));
router.delete('/api/admin/user/tokens/:id', adminRoute([], personalTokens.remove));

// Projects, environments, features, tags, segments and feature search (issue 4)
router.get('/api/admin/search/features', adminRoute([], featureSearch.search));
router.get('/api/admin/search/events', adminRoute([], events.search));
router.get('/api/admin/events', adminRoute([ADMIN], events.list));
router.get('/api/admin/events/:featureName', adminRoute([], events.listForFeature));
router.get('/api/admin/event-creators', adminRoute([], events.listCreators));
router.get('/api/admin/environments', adminRoute([], environments.list));
router.get('/api/admin/projects', adminRoute([], projects.list));
router.post('/api/admin/projects', adminRoute([perm.CREATE_PROJECT], projects.create));
router.get('/api/admin/projects/:projectId', adminRoute([], projects.get));
router.get('/api/admin/projects/:projectId/access', adminRoute([], projectAccess.list));
router.post(
  '/api/admin/projects/:projectId/access',
  adminRoute({ permission: [perm.UPDATE_PROJECT, perm.PROJECT_USER_ACCESS_WRITE], project: 'param:projectId' }, projectAccess.add),
);
router.post(
  '/api/admin/projects/:projectId/role/:roleId/access',
  adminRoute(
    { permission: [perm.UPDATE_PROJECT, perm.PROJECT_USER_ACCESS_WRITE], project: 'param:projectId' },
    projectAccess.addRoleAccess,
  ),
);
router.put(
  '/api/admin/projects/:projectId/users/:userId/roles',
  adminRoute({ permission: [perm.UPDATE_PROJECT, perm.PROJECT_USER_ACCESS_WRITE], project: 'param:projectId' }, projectAccess.setUserRoles),
);
router.delete(
  '/api/admin/projects/:projectId/users/:userId/roles',
  adminRoute({ permission: [perm.UPDATE_PROJECT, perm.PROJECT_USER_ACCESS_WRITE], project: 'param:projectId' }, projectAccess.removeUser),
);
router.get(
  '/api/admin/projects/:projectId/api-tokens',
  adminRoute({ permission: perm.READ_PROJECT_API_TOKEN, project: 'param:projectId' }, apiTokens.listForProject),
);
router.post(
  '/api/admin/projects/:projectId/api-tokens',
  adminRoute({ permission: perm.CREATE_PROJECT_API_TOKEN, project: 'param:projectId' }, apiTokens.createForProject),
);
router.delete(
  '/api/admin/projects/:projectId/api-tokens/:token',
  adminRoute({ permission: perm.DELETE_PROJECT_API_TOKEN, project: 'param:projectId' }, apiTokens.revokeForProject),
);
router.post(
  '/api/admin/projects/:projectId/environments',
  adminRoute({ permission: perm.UPDATE_PROJECT, project: 'param:projectId' }, projects.attachEnvironment),
);
router.post(
  '/api/admin/projects/:projectId/features',
  adminRoute({ permission: perm.CREATE_FEATURE, project: 'param:projectId' }, features.create),
);
router.get('/api/admin/projects/:projectId/features/:featureName', adminRoute([], features.get));
router.put(
  '/api/admin/projects/:projectId/features/:featureName',
  adminRoute({ permission: perm.UPDATE_FEATURE, project: 'param:projectId' }, features.update),
);
router.patch(
  '/api/admin/projects/:projectId/features/:featureName',
  adminRoute({ permission: perm.UPDATE_FEATURE, project: 'param:projectId' }, features.patch),
);
router.delete(
  '/api/admin/projects/:projectId/features/:featureName',
  adminRoute({ permission: perm.DELETE_FEATURE, project: 'param:projectId' }, features.archive),
);
router.post(
  '/api/admin/projects/:projectId/stale',
  adminRoute({ permission: perm.UPDATE_FEATURE, project: 'param:projectId' }, features.stale),
);
router.post(
  '/api/admin/projects/:projectId/revive',
  adminRoute({ permission: perm.UPDATE_FEATURE, project: 'param:projectId' }, features.reviveInProject),
);
router.post(
  '/api/admin/archive/revive/:featureName',
  adminRoute({ permission: perm.UPDATE_FEATURE, project: 'feature:featureName' }, features.reviveOne),
);
router.get('/api/admin/archive/features', adminRoute([], features.listArchived));
router.get('/api/admin/archive/features/:projectId', adminRoute([], features.listArchivedInProject));
router.delete(
  '/api/admin/archive/:featureName',
  adminRoute({ permission: perm.DELETE_FEATURE, project: 'feature:featureName' }, features.deleteArchived),
);
router.post(
  '/api/admin/projects/:projectId/features/:featureName/environments/:environment/on',
  adminRoute(
    { permission: perm.UPDATE_FEATURE_ENVIRONMENT, project: 'param:projectId', environment: 'param:environment' },
    features.environmentOn,
  ),
);
router.post(
  '/api/admin/projects/:projectId/features/:featureName/environments/:environment/off',
  adminRoute(
    { permission: perm.UPDATE_FEATURE_ENVIRONMENT, project: 'param:projectId', environment: 'param:environment' },
    features.environmentOff,
  ),
);
router.get(
  '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies',
  adminRoute([], features.listStrategies),
);
router.post(
  '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies',
  adminRoute(
    { permission: perm.CREATE_FEATURE_STRATEGY, project: 'param:projectId', environment: 'param:environment' },
    features.addStrategy,
  ),
);
router.get(
  '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId',
  adminRoute([], features.getStrategy),
);
router.put(
  '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId',
  adminRoute(
    { permission: perm.UPDATE_FEATURE_STRATEGY, project: 'param:projectId', environment: 'param:environment' },
    features.updateStrategy,
  ),
);
router.delete(
  '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId',
  adminRoute(
    { permission: perm.DELETE_FEATURE_STRATEGY, project: 'param:projectId', environment: 'param:environment' },
    features.deleteStrategy,
  ),
);
router.get('/api/admin/projects/:projectId/features/:featureName/environments/:environment/variants', adminRoute([], features.getVariants));
router.put(
  '/api/admin/projects/:projectId/features/:featureName/environments/:environment/variants',
  adminRoute(
    { permission: perm.UPDATE_FEATURE_ENVIRONMENT_VARIANTS, project: 'param:projectId', environment: 'param:environment' },
    features.putVariants,
  ),
);
router.post('/api/admin/projects/:projectId/features/:featureName/favorites', adminRoute([], features.addFavorite));
router.delete('/api/admin/projects/:projectId/features/:featureName/favorites', adminRoute([], features.removeFavorite));
router.post(
  '/api/admin/projects/:projectId/features/:featureName/dependencies',
  adminRoute({ permission: perm.UPDATE_FEATURE_DEPENDENCY, project: 'param:projectId' }, features.addDependency),
);
router.delete(
  '/api/admin/projects/:projectId/features/:featureName/dependencies',
  adminRoute({ permission: perm.UPDATE_FEATURE_DEPENDENCY, project: 'param:projectId' }, features.removeDependencies),
);
router.delete(
  '/api/admin/projects/:projectId/features/:featureName/dependencies/:parent',
  adminRoute({ permission: perm.UPDATE_FEATURE_DEPENDENCY, project: 'param:projectId' }, features.removeDependency),
);
router.get('/api/admin/projects/:projectId/features/:featureName/lifecycle', adminRoute([], features.getLifecycle));
router.post(
  '/api/admin/projects/:projectId/features/:featureName/lifecycle/complete',
  adminRoute({ permission: perm.UPDATE_FEATURE, project: 'param:projectId' }, features.complete),
);
router.get('/api/admin/tag-types', adminRoute([], tags.listTagTypes));
router.post('/api/admin/tag-types', adminRoute([perm.CREATE_TAG_TYPE], tags.createTagType));
router.get('/api/admin/tag-types/:name', adminRoute([], tags.getTagType));
router.get('/api/admin/features/:featureName/tags', adminRoute([], tags.listFeatureTags));
router.post(
  '/api/admin/features/:featureName/tags',
  adminRoute({ permission: perm.UPDATE_FEATURE, project: 'feature:featureName' }, tags.addFeatureTag),
);
router.delete(
  '/api/admin/features/:featureName/tags/:type/:value',
  adminRoute({ permission: perm.UPDATE_FEATURE, project: 'feature:featureName' }, tags.removeFeatureTag),
);
router.get('/api/admin/segments', adminRoute([], segments.list));
router.post(
  '/api/admin/segments',
  adminRoute({ permission: [perm.CREATE_SEGMENT, perm.UPDATE_PROJECT_SEGMENT], project: 'body:project' }, segments.create),
);
router.get('/api/admin/segments/:id', adminRoute([], segments.get));
router.put(
  '/api/admin/segments/:id',
  adminRoute({ permission: [perm.UPDATE_SEGMENT, perm.UPDATE_PROJECT_SEGMENT], project: 'segment:id' }, segments.update),
);
router.delete(
  '/api/admin/segments/:id',
  adminRoute({ permission: [perm.DELETE_SEGMENT, perm.UPDATE_PROJECT_SEGMENT], project: 'segment:id' }, segments.remove),
);

// Import and export (issue 5)
router.post('/api/admin/features-batch/import', adminRoute([], importExport.importFeatures));
router.get('/api/admin/features-batch/import/jobs/:id', adminRoute([], importExport.getJob));
router.delete('/api/admin/features-batch/import/jobs/:id', adminRoute([], importExport.cancelJob));
router.post('/api/admin/features-batch/validate', adminRoute([], importExport.validateImport));
router.post('/api/admin/features-batch/export', adminRoute([], importExport.exportData));

// What Unleash's own admin UI reads besides the above (served from Static Assets; docs/ui.md).
// Every one is a read open to any signed-in caller (Unleash's NONE) but the splash write,
// which only records what its caller has seen.
router.get('/api/admin/ui-config', adminRoute([], uiConfig.uiConfig));
router.post('/api/admin/splash/:id', adminRoute([], uiConfig.markSplashSeen));
router.get('/api/admin/instance-admin/statistics', adminRoute([], instanceAdmin.statistics));
router.get('/api/admin/personal-dashboard', adminRoute([], personalDashboard.dashboard));
router.get('/api/admin/personal-dashboard/:projectId', adminRoute([], personalDashboard.project));
router.get('/api/admin/feature-types', adminRoute([], featureTypes.list));
router.get('/api/admin/strategies', adminRoute([], strategies.list));
router.get('/api/admin/strategies/:name', adminRoute([], strategies.get));
router.get('/api/admin/context', adminRoute([], contextFields.list));
router.get('/api/admin/context/:name', adminRoute([], contextFields.get));
router.post('/api/admin/constraints/validate', adminRoute([], contextFields.validateConstraint));
router.get('/api/admin/tags', adminRoute([], tags.listTags));
router.get('/api/admin/tags/:type', adminRoute([], tags.listTagsOfType));
router.post('/api/admin/features/validate', adminRoute([], features.validateName));
router.get('/api/admin/projects/:projectId/overview', adminRoute([], projects.overview));
router.get('/api/admin/projects/:projectId/flag-creators', adminRoute([], projects.flagCreators));
router.get('/api/admin/projects/:projectId/dependencies', adminRoute([], projects.hasDependencies));
router.get('/api/admin/projects/:projectId/features/:featureName/parent-variants', adminRoute([], features.parentVariants));
router.get('/api/admin/client-metrics/features/:name', adminRoute([], clientMetrics.featureSummary));
router.get('/api/admin/client-metrics/features/:name/raw', adminRoute([], clientMetrics.featureRaw));
router.get('/api/admin/metrics/applications', adminRoute([], clientMetrics.applications));

// SDK side: client API, frontend API, Edge (issue 6) — routes go here
// Admin tokens are accepted next to client/frontend tokens, as Unleash 6 does (docs/decisions.md).
router.get('/api/client/features', sdkRoute(BACKEND_TOKEN_TYPES, clientApi.features));
router.get('/api/client/features/:featureName', sdkRoute(BACKEND_TOKEN_TYPES, clientApi.feature));
router.get('/api/client/delta', sdkRoute(BACKEND_TOKEN_TYPES, clientDelta.delta));
router.get('/api/client/streaming', sdkRoute(BACKEND_TOKEN_TYPES, clientStreaming.streaming));
router.post('/api/client/register', sdkRoute(BACKEND_TOKEN_TYPES, clientApi.register));
router.post('/api/client/metrics', sdkRoute(BACKEND_TOKEN_TYPES, clientApi.metrics));
router.post('/api/client/metrics/bulk', sdkRoute(BACKEND_TOKEN_TYPES, clientApi.bulkMetrics));
router.post('/api/client/metrics/edge', sdkRoute(BACKEND_TOKEN_TYPES, clientApi.edgeMetrics));
router.post('/edge/validate', rateLimited('edge-validate', clientApi.edgeValidate));
router.options('/api/frontend', frontendApi.preflight);
router.options('/api/frontend/*', frontendApi.preflight);
router.get('/api/frontend', frontendApi.withCors(sdkRoute(['frontend'], frontendApi.getToggles)));
router.post('/api/frontend', frontendApi.withCors(sdkRoute(['frontend'], frontendApi.postToggles)));
router.post(
  '/api/frontend/client/metrics',
  frontendApi.withCors(rateLimited('frontend-writes', sdkRoute(['frontend'], frontendApi.metrics))),
);
router.post(
  '/api/frontend/client/register',
  frontendApi.withCors(rateLimited('frontend-writes', sdkRoute(['frontend'], frontendApi.register))),
);
router.get('/api/frontend/client/features', frontendApi.withCors(sdkRoute(['frontend'], frontendApi.notImplemented)));
router.get('/api/frontend/health', frontendApi.withCors(sdkRoute(['frontend'], frontendApi.notImplemented)));
router.get('/api/frontend/internal-backstage/prometheus', frontendApi.withCors(sdkRoute(['frontend'], frontendApi.notImplemented)));

// Public routes (no key, or a key that is public by design) are wrapped in `rateLimited`
// (src/http/rate-limit.ts, docs/rate-limits.md); inside withCors, so a 429 still reaches the browser.

// Anything else. Under /api/admin the caller is authenticated first, as Unleash does, so an
// anonymous caller learns nothing about which paths exist.
const unknownPath = ({ request }: { request: Request }): never => {
  throw pathNotFound(new URL(request.url).pathname);
};
router.all('/api/admin/*', adminRoute([], unknownPath));
router.all('*', (request) => unknownPath({ request }));
