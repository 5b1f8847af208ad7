import type { Env } from '../env';

/**
 * This service's public base URL, for links it hands out (invite links, the UI's
 * `unleashUrl`): UNLEASH_URL when configured, as Unleash reads it, else the origin the
 * request reached.
 */
export function publicBaseUrl(env: Pick<Env, 'UNLEASH_URL'>, request: Request): string {
  const configured = env.UNLEASH_URL?.trim();
  return (configured ? configured : new URL(request.url).origin).replace(/\/+$/, '');
}
