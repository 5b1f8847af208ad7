/**
 * The paths of the two SDK polls: their route objects (client-api/routes.ts,
 * frontend-api/routes.ts) declare them with these, and the fast paths that answer before
 * routing (memo.ts, frontend-api/early.ts) recognise them by the same constants, so a path is
 * written once.
 */
export const CLIENT_FEATURES_PATH = '/api/client/features';
export const FRONTEND_PATH = '/api/frontend';
