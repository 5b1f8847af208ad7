/**
 * Writes authenticated by the session cookie are accepted only from this service's own pages.
 *
 * `SameSite=Lax` keeps the cookie off requests from other sites, but a "site" is the
 * registrable domain: a page on a sibling subdomain (`evil.example.com` next to
 * `flags.example.com`) is same-site, so the browser attaches our cookie to the body-less or
 * `text/plain` POSTs it sends, which need no CORS preflight. What such a page cannot choose
 * is the `Origin` header (and `Sec-Fetch-Site`) the browser adds, so an unsafe request that
 * the cookie authenticates must carry our own origin there. API keys and personal access
 * tokens travel in `Authorization`, which a browser never adds by itself: they are not
 * concerned.
 */
import type { Env } from '../env';
import { noAccess } from '../http/errors';
import type { Principal } from './principal';

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `Sec-Fetch-Site` values that say the request did not come from another origin's page. */
const OWN_FETCH_SITES: ReadonlySet<string> = new Set(['same-origin', 'none']);

/**
 * The origins that count as ours: the one the request reached, and UNLEASH_URL's when set (a
 * proxy in front may change the host the Worker sees). Both are safe to accept: a page can
 * only carry an origin it was served from, and these are served by this service.
 */
function ownOrigins(request: Request, env: Pick<Env, 'UNLEASH_URL'>): string[] {
  const origins = [new URL(request.url).origin];
  const configured = env.UNLEASH_URL?.trim();
  if (configured) {
    try {
      origins.push(new URL(configured).origin);
    } catch {
      // a malformed UNLEASH_URL adds nothing
    }
  }
  return origins;
}

/**
 * Whether the browser says the request comes from one of our own pages: an `Origin` equal to
 * ours, or, without `Origin`, `Sec-Fetch-Site: same-origin` or `none` (typed in the address
 * bar, a bookmark). A request with neither header is not from a page of ours.
 */
function comesFromOwnPages(request: Request, env: Pick<Env, 'UNLEASH_URL'>): boolean {
  const origin = request.headers.get('origin');
  if (origin !== null) return ownOrigins(request, env).includes(origin.trim());
  const site = request.headers.get('sec-fetch-site');
  return site !== null && OWN_FETCH_SITES.has(site.trim().toLowerCase());
}

/**
 * 403 NoAccessError, before anything is read or written, for an unsafe request (anything but
 * GET, HEAD, OPTIONS) authenticated by the session cookie that does not come from our own
 * pages. Every other request passes untouched.
 */
export function requireSameOriginForCookieWrite(request: Request, principal: Principal, env: Pick<Env, 'UNLEASH_URL'>): void {
  // Cloudflare Access's assertion rides on its own cookie (CF_Authorization), which the browser sends as it does ours.
  if (principal.kind !== 'user' || principal.via === 'personal-token' || SAFE_METHODS.has(request.method)) return;
  if (comesFromOwnPages(request, env)) return;
  throw noAccess(
    'Requests signed in with the session cookie may change something only when sent from the pages of this service (same-origin Origin header). Scripts should use a personal access token in the Authorization header.',
  );
}

/**
 * 403 NoAccessError for a sign-in posted by another site's page (login CSRF: the page would
 * sign the visitor in as an account it chose, and what they then enter lands there). A
 * browser always names the page's origin on such a POST; scripts send neither `Origin` nor
 * `Sec-Fetch-Site` and pass.
 */
export function refuseSignInFromOtherSites(request: Request, env: Pick<Env, 'UNLEASH_URL'>): void {
  if (request.headers.get('origin') === null && request.headers.get('sec-fetch-site') === null) return;
  if (comesFromOwnPages(request, env)) return;
  throw noAccess('Sign-in is accepted only from the pages of this service (same-origin Origin header), or from scripts.');
}
