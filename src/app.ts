/**
 * The route table: one line per endpoint, each naming who may call it. Handlers live in
 * `modules/<resource>/routes.ts`. Errors from anywhere become Unleash error bodies in
 * `toErrorResponse`.
 */
import { Router, type IRequest } from 'itty-router';
import { authenticate } from './auth/authenticate';
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
import { noAccess, pathNotFound, toErrorResponse } from './http/errors';
import { json } from './http/responses';
import * as apiTokens from './modules/api-tokens/routes';

export const router = Router<IRequest, [Env, ExecutionContext], Response>({
  catch: (error, request) => toErrorResponse(error, request),
});

// Liveness, as Unleash serves it; no authentication.
router.get('/health', () => json({ health: 'GOOD' }));

// API tokens (seed operation 4 and the rest of key management)
router.post('/api/admin/api-tokens', adminRoute([ADMIN, CREATE_CLIENT_API_TOKEN, CREATE_FRONTEND_API_TOKEN], apiTokens.create));
router.get('/api/admin/api-tokens', adminRoute([ADMIN, READ_CLIENT_API_TOKEN, READ_FRONTEND_API_TOKEN], apiTokens.list));
router.get('/api/admin/api-tokens/:token', adminRoute([ADMIN, READ_CLIENT_API_TOKEN, READ_FRONTEND_API_TOKEN], apiTokens.get));
router.put('/api/admin/api-tokens/:token', adminRoute([ADMIN, UPDATE_CLIENT_API_TOKEN, UPDATE_FRONTEND_API_TOKEN], apiTokens.update));
router.delete('/api/admin/api-tokens/:token', adminRoute([ADMIN, DELETE_CLIENT_API_TOKEN, DELETE_FRONTEND_API_TOKEN], apiTokens.revoke));

// Users, roles and public signup tokens (issue 3) — routes go here

// Projects, environments, features, tags, segments and feature search (issue 4) — routes go here

// Import and export (issue 5) — routes go here

// SDK side: client API, frontend API, Edge (issue 6) — routes go here

// Anything else. Under /api/admin the caller is authenticated first, as Unleash does, so an
// anonymous caller learns nothing about which paths exist.
router.all('*', async (request, env, ctx) => {
  const { pathname } = new URL(request.url);
  if (pathname.startsWith('/api/admin')) {
    const principal = await authenticate(request, env, ctx);
    if (principal.token.type !== 'admin') throw noAccess('invalid token: expected a different token type for this endpoint');
  }
  throw pathNotFound(pathname);
});
