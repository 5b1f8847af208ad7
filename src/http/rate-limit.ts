/**
 * Rate limits of the routes anyone can reach (no key, or a key that is public by design):
 * A route names its bucket in its access rule (`open(bucket)`, `sdk(types, bucket)`). Each bucket counts per client address
 * (`cf-connecting-ip`, which Cloudflare sets and a caller cannot choose; an IPv6 address
 * counts as its /64) and, for routes that carry a key in `Authorization`, also per key (its
 * SHA-256, never the key itself). Limits live on the Workers Rate Limiting bindings in
 * wrangler.toml; docs/rate-limits.md lists them.
 */
import { sha256Hex } from '../lib/encoding';
import type { Env } from '../env';
import { ApiError } from './errors';
import { ipv6Slash64 } from '../lib/ip';

type RateLimitBinding = {
  [Name in keyof Env]-?: Env[Name] extends RateLimit ? Name : never;
}[keyof Env];

interface Bucket {
  perClient: RateLimitBinding;
  /** Also count per `Authorization` value, when the request has one. */
  perKey?: RateLimitBinding;
  /** The binding's period in seconds: the longest a refused caller has to wait. */
  periodSeconds: 10 | 60;
}

export const RATE_LIMIT_BUCKETS = {
  /** `/edge/validate`: up to 100 keys per call, each a lookup. */
  'edge-validate': { perClient: 'RL_EDGE_VALIDATE_CLIENT', perKey: 'RL_EDGE_VALIDATE_KEY', periodSeconds: 60 },
  /** `/invite/:token/validate` and `/invite/:token/signup`. */
  invite: { perClient: 'RL_INVITE_CLIENT', periodSeconds: 60 },
  /** Frontend SDK writes: `/api/frontend/client/metrics` and `/api/frontend/client/register`. */
  'frontend-writes': { perClient: 'RL_FRONTEND_CLIENT', perKey: 'RL_FRONTEND_KEY', periodSeconds: 60 },
  /** `/auth/simple/login` (Unleash allows 10 a minute). */
  login: { perClient: 'RL_LOGIN_CLIENT', periodSeconds: 60 },
  /** `/auth/oidc/login` and `/auth/oidc/callback` (single sign-on; no password is checked there). */
  sso: { perClient: 'RL_SSO_CLIENT', periodSeconds: 60 },
  /** `/scim/v2/...`: an identity provider's provisioning calls, with its SCIM token. */
  scim: { perClient: 'RL_SCIM_CLIENT', perKey: 'RL_SCIM_KEY', periodSeconds: 60 },
  /** `/auth/reset/validate-password` and the other password-reset routes. */
  'password-reset': { perClient: 'RL_PASSWORD_CLIENT', periodSeconds: 60 },
  /** `POST /api/admin/record-ui-error`: reports are only logged, and only so many. */
  'ui-errors': { perClient: 'RL_UI_ERROR_CLIENT', periodSeconds: 60 },
  /** `GET /internal-backstage/impact/metrics`: no key (as Unleash), each call a D1 read. */
  backstage: { perClient: 'RL_BACKSTAGE_CLIENT', periodSeconds: 60 },
} as const satisfies Record<string, Bucket>;

export type RateLimitBucket = keyof typeof RATE_LIMIT_BUCKETS;

/**
 * The address a limit counts: IPv4 as is, IPv6 cut to its /64 (one host usually holds a whole
 * /64); anything else (Cloudflare sends none) as is, cut to 64 characters.
 */
export function clientKey(request: Request): string {
  const address = request.headers.get('cf-connecting-ip')?.trim().toLowerCase();
  if (!address) return 'unknown'; // only off Cloudflare (local runs): they share one count
  return ipv6Slash64(address) ?? address.slice(0, 64);
}

export function tooManyRequests(periodSeconds: number): Response {
  const error = new ApiError(429, 'TooManyRequestsError', 'Too many requests, please try again later.');
  return new Response(JSON.stringify(error), {
    status: 429,
    headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(periodSeconds) },
  });
}

/**
 * Whether the caller is within `bucket`'s limits; counts this request. Both counts are taken
 * (a refused client still spends its key's budget), so the answer does not depend on order.
 * `counts` takes only one: the SDK routes count a key's own volume first and its address only
 * once the key was refused (route.ts).
 */
export async function withinLimit(
  bucketName: RateLimitBucket,
  request: Request,
  env: Env,
  counts: 'both' | 'client' | 'key' = 'both',
): Promise<boolean> {
  const bucket: Bucket = RATE_LIMIT_BUCKETS[bucketName];
  const checks = counts === 'key' ? [] : [env[bucket.perClient].limit({ key: `${bucketName}:ip:${clientKey(request)}` })];
  const authorization = request.headers.get('authorization');
  if (bucket.perKey && authorization && counts !== 'client') {
    checks.push(env[bucket.perKey].limit({ key: `${bucketName}:key:${await sha256Hex(authorization)}` }));
  }
  const outcomes = await Promise.all(checks);
  return outcomes.every((outcome) => outcome.success);
}
