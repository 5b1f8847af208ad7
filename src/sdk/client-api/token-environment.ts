import type { ApiTokenRecord } from '../../auth/principal';

/**
 * The environment an SDK key reads (client, backend and frontend keys alike): its own. Only a
 * key for all environments (`*`, which the API cannot make) reads another: the one the client
 * API's `environment` query names, else `default` (the frontend API names none).
 */
export function environmentOf(token: ApiTokenRecord, requested: string | null = null): string {
  if (token.environment !== '*') return token.environment;
  return requested ?? 'default';
}
