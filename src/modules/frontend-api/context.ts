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
export function buildContext(
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

  const context: Context = {
    appName: top.appName ?? 'frontend-api',
    environment: top.environment ?? 'default',
    ...(top.userId ? { userId: top.userId } : {}),
    sessionId: top.sessionId ?? randomSessionId(),
    ...((top.remoteAddress ?? defaults.remoteAddress) ? { remoteAddress: (top.remoteAddress ?? defaults.remoteAddress)! } : {}),
    properties,
  };
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
