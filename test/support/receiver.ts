/**
 * A local receiver for integration deliveries, in the Node process that runs Miniflare
 * (vitest.config.ts makes it the Worker's outbound service): every fetch the Worker makes to a
 * `*.receiver.test` host (and to Slack's chat.postMessage, kept per channel as
 * `slack.com/api/chat.postMessage#<channel>`) is recorded here and answered with the statuses a test scripted for
 * its path (200 once the script is used up). Tests read and script it through the `RECEIVER`
 * service binding (`test/support/integrations.ts`). Any other outbound fetch fails: tests have
 * no network.
 */
import { gunzipSync } from 'node:zlib';

export interface Received {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

const received = new Map<string, Received[]>();
const scripts = new Map<string, number[]>();

/** Fixed JSON answers by `<host><path>` (a key set, a discovery document…): `POST /serve` sets them. */
const served = new Map<string, { status: number; body: string }>();

export async function outbound(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const fixed = served.get(url.host + url.pathname);
  if (fixed) {
    const list = received.get(url.host + url.pathname) ?? [];
    list.push({ method: request.method, url: request.url, headers: Object.fromEntries(request.headers), body: await request.text() });
    received.set(url.host + url.pathname, list);
    return new Response(fixed.body, { status: fixed.status, headers: { 'content-type': 'application/json' } });
  }
  const slack = url.host === 'slack.com' && url.pathname === '/api/chat.postMessage';
  if (!url.hostname.endsWith('.receiver.test') && !slack) return new Response('tests have no network', { status: 502 });
  const bytes = Buffer.from(await request.arrayBuffer());
  const body = request.headers.get('content-encoding') === 'gzip' ? gunzipSync(bytes).toString('utf8') : bytes.toString('utf8');
  // Slack's API stands in for every workspace: its posts are kept (and scripted) per channel.
  const key = slack ? `slack.com/api/chat.postMessage#${(JSON.parse(body) as { channel: string }).channel}` : url.host + url.pathname;
  const list = received.get(key) ?? [];
  list.push({ method: request.method, url: request.url, headers: Object.fromEntries(request.headers), body });
  received.set(key, list);
  const status = scripts.get(key)?.shift() ?? 200;
  return new Response(status === 200 ? '{"ok":true}' : 'scripted', { status, headers: { 'content-type': 'application/json' } });
}

/**
 * `GET /requests?at=<host><path>`: what that URL received; `POST /script` `{ at, statuses }`: its next answers;
 * `POST /serve` `{ at, status?, body }`: answer that URL with this JSON from now on.
 */
export async function control(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (request.method === 'POST' && url.pathname === '/serve') {
    const { at, status, body } = (await request.json()) as { at: string; status?: number; body: unknown };
    served.set(at, { status: status ?? 200, body: JSON.stringify(body) });
    return new Response(null, { status: 204 });
  }
  if (request.method === 'POST' && url.pathname === '/script') {
    const { at, statuses } = (await request.json()) as { at: string; statuses: number[] };
    scripts.set(at, [...statuses]);
    return new Response(null, { status: 204 });
  }
  return Response.json(received.get(url.searchParams.get('at') ?? '') ?? []);
}
