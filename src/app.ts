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
import { json } from './http/responses';
import * as apiTokens from './modules/api-tokens/routes';
import * as importExport from './modules/import-export/routes';
import * as perm from './auth/permissions';
import * as environments from './modules/environments/routes';
import * as featureSearch from './modules/feature-search/routes';
import * as features from './modules/features/routes';
import * as projects from './modules/projects/routes';
import * as segments from './modules/segments/routes';
import * as tags from './modules/tags/routes';
import * as roles from './modules/roles/routes';
import * as signupTokens from './modules/signup-tokens/routes';
import * as users from './modules/users/routes';
import { sdkRoute } from './auth/guard';
import * as clientApi from './modules/client-api/routes';
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
router.get('/api/admin/roles', adminRoute([ADMIN], roles.list));
router.post('/api/admin/roles', adminRoute([ADMIN], roles.create));
router.get('/api/admin/roles/:id', adminRoute([ADMIN], roles.get));
router.put('/api/admin/roles/:id', adminRoute([ADMIN], roles.update));
router.delete('/api/admin/roles/:id', adminRoute([ADMIN], roles.remove));
router.get('/api/admin/user-admin', adminRoute([ADMIN], users.list));
router.post('/api/admin/user-admin', adminRoute([ADMIN], users.create));
router.get('/api/admin/user-admin/:id', adminRoute([ADMIN], users.get));
router.put('/api/admin/user-admin/:id', adminRoute([ADMIN], users.update));
router.delete('/api/admin/user-admin/:id', adminRoute([ADMIN], users.remove));
router.get('/api/admin/invite-link/tokens', adminRoute([ADMIN], signupTokens.list));
router.post('/api/admin/invite-link/tokens', adminRoute([ADMIN], signupTokens.create));
router.get('/api/admin/invite-link/tokens/:token', adminRoute([ADMIN], signupTokens.get));
router.put('/api/admin/invite-link/tokens/:token', adminRoute([ADMIN], signupTokens.update));
router.get('/invite/:token/validate', signupTokens.validateInvite); // public: the secret is the credential
router.post('/invite/:token/signup', signupTokens.signup); // public: the secret is the credential

// Projects, environments, features, tags, segments and feature search (issue 4)
router.get('/api/admin/search/features', adminRoute([], featureSearch.search));
router.get('/api/admin/environments', adminRoute([], environments.list));
router.get('/api/admin/projects', adminRoute([], projects.list));
router.post('/api/admin/projects', adminRoute([perm.CREATE_PROJECT], projects.create));
router.get('/api/admin/projects/:projectId', adminRoute([], projects.get));
router.post('/api/admin/projects/:projectId/environments', adminRoute([perm.UPDATE_PROJECT], projects.attachEnvironment));
router.post('/api/admin/projects/:projectId/features', adminRoute([perm.CREATE_FEATURE], features.create));
router.get('/api/admin/projects/:projectId/features/:featureName', adminRoute([], features.get));
router.put('/api/admin/projects/:projectId/features/:featureName', adminRoute([perm.UPDATE_FEATURE], features.update));
router.patch('/api/admin/projects/:projectId/features/:featureName', adminRoute([perm.UPDATE_FEATURE], features.patch));
router.delete('/api/admin/projects/:projectId/features/:featureName', adminRoute([perm.DELETE_FEATURE], features.archive));
router.post('/api/admin/projects/:projectId/stale', adminRoute([perm.UPDATE_FEATURE], features.stale));
router.post('/api/admin/projects/:projectId/revive', adminRoute([perm.UPDATE_FEATURE], features.reviveInProject));
router.post('/api/admin/archive/revive/:featureName', adminRoute([perm.UPDATE_FEATURE], features.reviveOne));
router.get('/api/admin/archive/features', adminRoute([], features.listArchived));
router.get('/api/admin/archive/features/:projectId', adminRoute([], features.listArchivedInProject));
router.delete('/api/admin/archive/:featureName', adminRoute([perm.DELETE_FEATURE], features.deleteArchived));
router.post('/api/admin/projects/:projectId/features/:featureName/environments/:environment/on', adminRoute([perm.UPDATE_FEATURE_ENVIRONMENT], features.environmentOn));
router.post('/api/admin/projects/:projectId/features/:featureName/environments/:environment/off', adminRoute([perm.UPDATE_FEATURE_ENVIRONMENT], features.environmentOff));
router.get('/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies', adminRoute([], features.listStrategies));
router.post('/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies', adminRoute([perm.CREATE_FEATURE_STRATEGY], features.addStrategy));
router.get('/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId', adminRoute([], features.getStrategy));
router.put('/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId', adminRoute([perm.UPDATE_FEATURE_STRATEGY], features.updateStrategy));
router.delete('/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies/:strategyId', adminRoute([perm.DELETE_FEATURE_STRATEGY], features.deleteStrategy));
router.get('/api/admin/projects/:projectId/features/:featureName/environments/:environment/variants', adminRoute([], features.getVariants));
router.put('/api/admin/projects/:projectId/features/:featureName/environments/:environment/variants', adminRoute([perm.UPDATE_FEATURE_ENVIRONMENT_VARIANTS], features.putVariants));
router.post('/api/admin/projects/:projectId/features/:featureName/favorites', adminRoute([], features.addFavorite));
router.delete('/api/admin/projects/:projectId/features/:featureName/favorites', adminRoute([], features.removeFavorite));
router.post('/api/admin/projects/:projectId/features/:featureName/dependencies', adminRoute([perm.UPDATE_FEATURE_DEPENDENCY], features.addDependency));
router.delete('/api/admin/projects/:projectId/features/:featureName/dependencies', adminRoute([perm.UPDATE_FEATURE_DEPENDENCY], features.removeDependencies));
router.delete('/api/admin/projects/:projectId/features/:featureName/dependencies/:parent', adminRoute([perm.UPDATE_FEATURE_DEPENDENCY], features.removeDependency));
router.get('/api/admin/projects/:projectId/features/:featureName/lifecycle', adminRoute([], features.getLifecycle));
router.post('/api/admin/projects/:projectId/features/:featureName/lifecycle/complete', adminRoute([perm.UPDATE_FEATURE], features.complete));
router.get('/api/admin/tag-types', adminRoute([], tags.listTagTypes));
router.post('/api/admin/tag-types', adminRoute([perm.CREATE_TAG_TYPE], tags.createTagType));
router.get('/api/admin/tag-types/:name', adminRoute([], tags.getTagType));
router.get('/api/admin/features/:featureName/tags', adminRoute([], tags.listFeatureTags));
router.post('/api/admin/features/:featureName/tags', adminRoute([perm.UPDATE_FEATURE], tags.addFeatureTag));
router.delete('/api/admin/features/:featureName/tags/:type/:value', adminRoute([perm.UPDATE_FEATURE], tags.removeFeatureTag));
router.get('/api/admin/segments', adminRoute([], segments.list));
router.post('/api/admin/segments', adminRoute([perm.CREATE_SEGMENT], segments.create));
router.get('/api/admin/segments/:id', adminRoute([], segments.get));
router.put('/api/admin/segments/:id', adminRoute([perm.UPDATE_SEGMENT], segments.update));
router.delete('/api/admin/segments/:id', adminRoute([perm.DELETE_SEGMENT], segments.remove));

// Import and export (issue 5)
router.post('/api/admin/features-batch/import', adminRoute([], importExport.importFeatures));
router.get('/api/admin/features-batch/import/jobs/:id', adminRoute([], importExport.getJob));
router.post('/api/admin/features-batch/validate', adminRoute([], importExport.validateImport));
router.post('/api/admin/features-batch/export', adminRoute([], importExport.exportData));

// SDK side: client API, frontend API, Edge (issue 6) — routes go here
// Admin tokens are accepted next to client/frontend tokens, as Unleash 6 does (docs/decisions.md).
router.get('/api/client/features', sdkRoute(['client'], clientApi.features));
router.get('/api/client/features/:featureName', sdkRoute(['client'], clientApi.feature));
router.post('/api/client/register', sdkRoute(['client'], clientApi.register));
router.post('/api/client/metrics', sdkRoute(['client'], clientApi.metrics));
router.post('/api/client/metrics/bulk', sdkRoute(['client'], clientApi.bulkMetrics));
router.post('/edge/validate', clientApi.edgeValidate);
router.options('/api/frontend', frontendApi.preflight);
router.options('/api/frontend/*', frontendApi.preflight);
router.get('/api/frontend', frontendApi.withCors(sdkRoute(['frontend'], frontendApi.getToggles)));
router.post('/api/frontend', frontendApi.withCors(sdkRoute(['frontend'], frontendApi.postToggles)));
router.post('/api/frontend/client/metrics', frontendApi.withCors(sdkRoute(['frontend'], frontendApi.metrics)));
router.post('/api/frontend/client/register', frontendApi.withCors(sdkRoute(['frontend'], frontendApi.register)));
router.get('/api/frontend/client/features', frontendApi.withCors(sdkRoute(['frontend'], frontendApi.notImplemented)));
router.get('/api/frontend/health', frontendApi.withCors(sdkRoute(['frontend'], frontendApi.notImplemented)));
router.get('/api/frontend/internal-backstage/prometheus', frontendApi.withCors(sdkRoute(['frontend'], frontendApi.notImplemented)));

// Anything else. Under /api/admin the caller is authenticated first, as Unleash does, so an
// anonymous caller learns nothing about which paths exist.
const unknownPath = ({ request }: { request: Request }): never => {
  throw pathNotFound(new URL(request.url).pathname);
};
router.all('/api/admin/*', adminRoute([], unknownPath));
router.all('*', (request) => unknownPath({ request }));
