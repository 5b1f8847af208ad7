// The two ends of a migration as HTTP: an Unleash (the source, read only) and our Worker (the
// target). Every request goes through `send`, so a recorder can keep the source's answers
// (scripts/migrate/record.mjs) and the CI tests can serve them again (test/support/migrate-replay.mjs).

class HttpError extends Error {
  constructor(method, url, status, body) {
    super(`${method} ${url} answered ${status}: ${typeof body === 'string' ? body.slice(0, 300) : JSON.stringify(body).slice(0, 300)}`);
    this.status = status;
    this.body = body;
  }
}

/** An API at `base` called with `token`; `onWrite` counts the writes (dry runs forbid them). */
export function endpoint(base, token, { name, dryRun = false, onWrite, onExchange } = {}) {
  const root = base.replace(/\/+$/, '');
  async function send(method, path, body, { allowed = [], headers = {}, auth = token } = {}) {
    const url = `${root}${path}`;
    const isWrite = method !== 'GET' && !/\/features-batch\/export$|\/api\/frontend|\/validate$/.test(path);
    if (isWrite && dryRun) throw new Error(`dry run: refusing ${method} ${path}`);
    if (isWrite) onWrite?.(method, path);
    let response;
    for (let attempt = 0; ; attempt++) {
      try {
        response = await fetch(url, {
          method,
          headers: {
            authorization: auth,
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...headers,
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (error) {
        if (attempt < 3) {
          await new Promise((resolve) => setTimeout(resolve, 500 * (attempt + 1)));
          continue;
        }
        throw new Error(`${name ?? root}: cannot reach ${url}: ${error.message}`, { cause: error });
      }
      // Rate limits and restarts: wait and try again, a few times.
      if ((response.status === 429 || response.status === 503) && attempt < 5) {
        const wait = Number(response.headers.get('retry-after') ?? '1');
        await new Promise((resolve) => setTimeout(resolve, Math.min(10, Math.max(0.2, wait)) * 1000));
        continue;
      }
      break;
    }
    const text = await response.text();
    onExchange?.({
      method,
      path,
      authorization: auth,
      body: body === undefined ? null : body,
      status: response.status,
      contentType: response.headers.get('content-type'),
      location: response.headers.get('location'),
      text,
    });
    let parsed = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text for the message
    }
    if (response.status >= 300 && !allowed.includes(response.status)) throw new HttpError(method, url, response.status, parsed);
    return { status: response.status, body: parsed, headers: response.headers };
  }
  return {
    base: root,
    name,
    send,
    get: async (path, options) => (await send('GET', path, undefined, options)).body,
    post: async (path, body, options) => (await send('POST', path, body, options)).body,
  };
}
