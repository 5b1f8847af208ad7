/**
 * The service's router: the route objects listed in ./routes.ts, registered with what every
 * route does around its handler, and the answer for any other path.
 */
import { Router, type IRequest } from 'itty-router';
import type { PersonSignIn } from './auth/authenticate';
import { getDb } from './db/client';
import type { Env } from './env';
import { accessPrincipal } from './identity/sso/access-principal';
import { loginHints } from './identity/sso/service';
import { pathNotFound, toErrorResponse } from './http/errors';
import { authenticated, register, route } from './http/route';
import { documentRoutes } from './admin/operational/routes';
import { ROUTES } from './routes';
import { announceWrite } from './sdk/push/announce';
import { preflight } from './http/cors';
import { flushAfterResponse } from './integrations/addons/delivery';
import { refuseWriteInMaintenance } from './admin/maintenance/service';
import { refreshFrontendOrigins } from './admin/ui-config/service';

export const router = Router<IRequest, [Env, ExecutionContext], Response>({
  catch: (error, request) => toErrorResponse(error, request),
});

// What every route does around its handler that belongs to a module, not to src/http: the
// maintenance switch refuses admin writes; a write's audit events go to their integrations;
// the frontend API's allowed origins follow what was saved in the UI; streams and the other
// isolates hear of the write at once (src/sdk/push/).
// Sign-in by Cloudflare Access and the login page's single sign-on buttons live with SSO.
const signIn: PersonSignIn = { accessPrincipal, loginHints: (env) => loginHints(getDb(env)) };

register(router, ROUTES, {
  signIn,
  guardAdminWrite: (env, method, path) => refuseWriteInMaintenance(env, method, path),
  afterWrite: (env, ctx) => {
    flushAfterResponse(env, ctx);
    ctx.waitUntil(announceWrite(env));
  },
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
register(
  router,
  [
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
  ],
  { signIn },
);
router.all('*', (request) => unknownPath({ request }));
