/**
 * The query of SCIM reads: `filter`, `startIndex` (1-based) and `count` of lists (RFC 7644
 * §3.4.2.4), and `attributes` / `excludedAttributes` (§3.4.2.5) of lists and single reads,
 * applied to top-level attributes (`id` and `schemas` are always returned).
 */
import { urlOf } from '../../http/request-url';
import { invalidValue } from './errors';
import { parseFilter, type Filter } from './filter';
import { MAX_RESULTS } from './discovery';

export interface Projection {
  attributes?: Set<string>;
  excluded?: Set<string>;
}

export interface ListQuery extends Projection {
  filter?: Filter;
  startIndex: number;
  count: number;
}

function integerParam(params: URLSearchParams, name: string): number | undefined {
  const raw = params.get(name);
  if (raw === null || raw.trim() === '') return undefined;
  if (!/^-?\d{1,9}$/.test(raw.trim())) throw invalidValue(`"${name}" must be an integer.`);
  return Number(raw.trim());
}

function nameSet(params: URLSearchParams, name: string): Set<string> | undefined {
  const raw = params.get(name);
  if (raw === null || raw.trim() === '') return undefined;
  if (raw.length > 2000) throw invalidValue(`"${name}" is too long.`);
  // `members.value` names `members`; a schema URN prefix is dropped.
  return new Set(
    raw.split(',').map(
      (part) =>
        part
          .trim()
          .toLowerCase()
          .replace(/^urn:.*:/, '')
          .split('.')[0]!,
    ),
  );
}

export function projectionOf(request: Request): Projection {
  const params = urlOf(request).searchParams;
  const attributes = nameSet(params, 'attributes');
  const excluded = nameSet(params, 'excludedAttributes');
  return { ...(attributes ? { attributes } : {}), ...(excluded ? { excluded } : {}) };
}

export function listQueryOf(request: Request): ListQuery {
  const params = urlOf(request).searchParams;
  const filterText = params.get('filter');
  const startIndex = Math.max(1, integerParam(params, 'startIndex') ?? 1);
  const count = Math.min(MAX_RESULTS, Math.max(0, integerParam(params, 'count') ?? MAX_RESULTS));
  return {
    ...projectionOf(request),
    ...(filterText !== null && filterText.trim() !== '' ? { filter: parseFilter(filterText) } : {}),
    startIndex,
    count,
  };
}

const ALWAYS = new Set(['id', 'schemas']);

/** The resource with only the attributes asked for (or without those excluded). */
export function project<T extends Record<string, unknown>>(resource: T, projection: Projection): Partial<T> {
  const { attributes, excluded } = projection;
  if (attributes === undefined && excluded === undefined) return resource;
  return Object.fromEntries(
    Object.entries(resource).filter(([key]) => {
      const name = key.toLowerCase();
      if (ALWAYS.has(name)) return true;
      if (attributes !== undefined) return attributes.has(name);
      return !excluded!.has(name);
    }),
  ) as Partial<T>;
}
