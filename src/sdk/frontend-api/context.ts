/**
 * The evaluation context of a frontend-API request, built as Unleash builds it: the known
 * fields stay at the top, any other key moves into `properties` (explicit properties win),
 * empty values are dropped, and the caller's IP and a fresh session id fill the gaps.
 */
import type { Context } from '../evaluation/types';
import { toHex } from '../../lib/encoding';

const TOP_LEVEL = ['appName', 'environment', 'userId', 'sessionId', 'remoteAddress'] as const;
type TopLevel = (typeof TOP_LEVEL)[number];
const MAX_PROPERTIES = 100;

function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return value ? String(value) : undefined;
  return undefined;
}

/** Context from already-split entries (query parameters or a JSON object). */
function buildContext(
  fields: Iterable<[string, unknown]>,
  explicitProperties: Iterable<[string, unknown]>,
  defaults: { remoteAddress: string | null },
): Context {
  const top: Partial<Record<TopLevel, string>> = {};
  // No prototype, so a `__proto__` key is an ordinary property and not a prototype change.
  const properties: Record<string, string> = Object.create(null) as Record<string, string>;
  let count = 0;
  const addProperty = (name: string, value: unknown) => {
    const text = asText(value);
    if (text === undefined || count >= MAX_PROPERTIES) return;
    if (!Object.hasOwn(properties, name)) count++;
    properties[name] = text;
  };
  for (const [name, value] of fields) {
    if ((TOP_LEVEL as readonly string[]).includes(name)) {
      const text = asText(value);
      if (text !== undefined) top[name as TopLevel] = text;
    } else if (name !== 'properties') addProperty(name, value);
  }
  for (const [name, value] of explicitProperties) addProperty(name, value);

  return contextOf(top.appName, top.environment, top.userId, top.sessionId, top.remoteAddress ?? defaults.remoteAddress, properties);
}

/** The context object, keys in this order (the POST answer cache keys on its JSON). */
function contextOf(
  appName: string | undefined,
  environment: string | undefined,
  userId: string | undefined,
  sessionId: string | undefined,
  remoteAddress: string | null | undefined,
  properties: Record<string, string>,
): Context {
  const context: Context = { appName: appName ?? 'frontend-api', environment: environment ?? 'default' };
  if (userId) context.userId = userId;
  context.sessionId = sessionId ?? randomSessionId();
  if (remoteAddress) context.remoteAddress = remoteAddress;
  context.properties = properties;
  return context;
}

function randomSessionId(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(18)));
}

const PROPERTY_KEY = /^properties\[([^\]]+)\]$/;

/** GET: `userId=..&properties[region]=..` (the frontend SDK's bracket syntax). */
export function contextFromQuery(params: URLSearchParams, remoteAddress: string | null): Context {
  const fields: [string, string][] = [];
  const properties: [string, string][] = [];
  const seen = new Set<string>();
  for (const [key, value] of params) {
    // A repeated parameter counts once, with its first value.
    if (seen.has(key)) continue;
    seen.add(key);
    const property = PROPERTY_KEY.exec(key);
    if (property) properties.push([property[1]!, value]);
    else fields.push([key, value]);
  }
  return buildContext(fields, properties, { remoteAddress });
}

/**
 * A query the URL parser leaves as it is: printable ASCII without space, `"`, `#`, `'`, `<`
 * and `>` (which it would percent-encode or cut at). Such a query, taken from the raw URL,
 * is what `new URL(url).search` holds after its `?`.
 */
const PLAIN_QUERY = /^[!$-&(-;=?-~]*$/;

/**
 * The query of a request URL (after the first `?`, without it) when it is plain, else null
 * (a URL with a fragment is left to the URL parser too).
 */
export function plainQueryOf(url: string): string | null {
  if (url.includes('#')) return null;
  const start = url.indexOf('?');
  if (start < 0) return '';
  const query = url.slice(start + 1);
  return PLAIN_QUERY.test(query) ? query : null;
}

/**
 * One name or value of a plain query as URLSearchParams decodes it (`+` is a space, then
 * percent-decoding as UTF-8), or undefined where decodeURIComponent refuses what
 * URLSearchParams would decode with replacement characters or leave as is (a malformed `%`,
 * bytes that are not UTF-8): the caller then lets URLSearchParams decode the whole query.
 */
function decodeComponent(text: string): string | undefined {
  if (text.includes('+')) text = text.replaceAll('+', ' ');
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/**
 * GET, from a plain query (`plainQueryOf`): the same context `contextFromQuery` builds from
 * `new URLSearchParams(query)`, without making that object or the URL (a fresh context is a
 * per-request cost of a busy site's browsers), and whether the query gave the session id (a
 * non-empty first `sessionId`). Null when a component needs URLSearchParams's own decoding.
 */
export function contextFromPlainQuery(query: string, remoteAddress: string | null): { context: Context; sessionGiven: boolean } | null {
  let appName: string | undefined;
  let environment: string | undefined;
  let userId: string | undefined;
  let sessionId: string | undefined;
  let remote: string | undefined;
  // Parameters other than the known fields, then explicit `properties[…]` ones (which win).
  const properties: Record<string, string> = Object.create(null) as Record<string, string>;
  let loose: [string, string][] | undefined;
  let explicit: [string, string][] | undefined;
  // Names met so far: a short list, a set once there are many (a hostile query).
  const seen: string[] = [];
  let seenSet: Set<string> | undefined;
  let start = 0;
  while (start <= query.length) {
    let end = query.indexOf('&', start);
    if (end < 0) end = query.length;
    if (end > start) {
      const equals = query.indexOf('=', start);
      const split = equals >= 0 && equals < end;
      const name = decodeComponent(query.slice(start, split ? equals : end));
      const value = split ? decodeComponent(query.slice(equals + 1, end)) : '';
      if (name === undefined || value === undefined) return null;
      // A repeated parameter counts once, with its first value.
      if (seenSet === undefined ? !seen.includes(name) : !seenSet.has(name)) {
        if (seenSet !== undefined) seenSet.add(name);
        else if (seen.push(name) > 16) seenSet = new Set(seen);
        const text = value === '' ? undefined : value;
        switch (name) {
          case 'appName':
            appName ??= text;
            break;
          case 'environment':
            environment ??= text;
            break;
          case 'userId':
            userId ??= text;
            break;
          case 'sessionId':
            sessionId ??= text;
            break;
          case 'remoteAddress':
            remote ??= text;
            break;
          case 'properties':
            break;
          default:
            if (name.length > 12 && name.startsWith('properties[') && name.endsWith(']') && name.indexOf(']') === name.length - 1)
              (explicit ??= []).push([name.slice(11, -1), value]);
            else (loose ??= []).push([name, value]);
        }
      }
    }
    start = end + 1;
  }
  if (loose !== undefined || explicit !== undefined) {
    let count = 0;
    for (const list of [loose, explicit]) {
      if (list === undefined) continue;
      for (const [name, value] of list) {
        if (value === '' || count >= MAX_PROPERTIES) continue;
        if (!Object.hasOwn(properties, name)) count++;
        properties[name] = value;
      }
    }
  }
  return {
    context: contextOf(appName, environment, userId, sessionId, remote ?? remoteAddress, properties),
    sessionGiven: sessionId !== undefined,
  };
}

function entriesOf(value: unknown): [string, unknown][] {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : [];
}

/** POST: `{context: {...}}` as Unleash reads it; a bare context object is accepted too, as Edge does. */
export function contextFromBody(body: unknown, remoteAddress: string | null): Context {
  const source =
    body !== null && typeof body === 'object' && !Array.isArray(body) && Object.hasOwn(body, 'context')
      ? (body as { context: unknown }).context
      : body;
  const fields = entriesOf(source);
  const properties = entriesOf(fields.find(([name]) => name === 'properties')?.[1]);
  return buildContext(fields, properties, { remoteAddress });
}
