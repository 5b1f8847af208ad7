/**
 * A JSON value with its object keys in the order PostgreSQL's `jsonb` keeps them: shorter
 * keys first, keys of one length by their bytes. Unleash stores some documents as `jsonb` and
 * answers them back as read, so their key order is this one, whatever order they were sent in
 * (a project's default strategy: `name`, `title`, `segments`, `variants`, `parameters`,
 * `constraints`).
 */
export function jsonbOrder<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => jsonbOrder(item)) as T;
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  const ordered: Record<string, unknown> = {};
  for (const key of keys) ordered[key] = jsonbOrder((value as Record<string, unknown>)[key]);
  return ordered as T;
}
