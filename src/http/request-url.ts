/**
 * The parsed URL of a request, parsed once: the entry point, the route dispatch and the
 * handler all need it, and `new URL()` is a measurable share of a cheap SDK request.
 */
const parsed = new WeakMap<Request, URL>();

export function urlOf(request: Request): URL {
  let url = parsed.get(request);
  if (url === undefined) {
    url = new URL(request.url);
    parsed.set(request, url);
  }
  return url;
}

/** For a request derived from another with the same URL (HEAD answered as GET). */
export function rememberUrl(request: Request, url: URL): void {
  parsed.set(request, url);
}
