import { JSON_HEADERS } from './errors';

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/** A status with no body (Unleash answers 200 with an empty body on many writes). */
export function empty(status = 200, headers: Record<string, string> = {}): Response {
  return new Response(null, { status, headers });
}

/** For every response that carries a secret (a new API token, invite links): never cached. */
export const NO_STORE = { 'cache-control': 'no-store' } as const;
