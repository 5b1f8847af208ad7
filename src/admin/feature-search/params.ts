/**
 * The query string of `GET /api/admin/search/features`, checked against the seed's patterns.
 * The patterns are not run as regular expressions: the seed's `tag` pattern backtracks
 * without bound on hostile input, so each parameter is checked by a small linear parser
 * that accepts exactly what the pattern accepts, and the pattern is quoted in the 400.
 */
import { invalidQueryParam, singleQueryParams } from '../../http/params';

export const PATTERNS = {
  operator: '^(IS|IS_NOT|IS_ANY_OF|IS_NONE_OF):(.*?)(,([a-zA-Z0-9_]+))*$',
  tag: '^(INCLUDE|DO_NOT_INCLUDE|INCLUDE_ALL_OF|INCLUDE_ANY_OF|EXCLUDE_IF_ANY_OF|EXCLUDE_ALL):(?:\\s*[^,:]+:[^,:]+\\s*)(?:,\\s*[^,:]+:[^,:]+\\s*)*$',
  segment: '^(INCLUDE|DO_NOT_INCLUDE|INCLUDE_ALL_OF|INCLUDE_ANY_OF|EXCLUDE_IF_ANY_OF|EXCLUDE_ALL):(.*?)(,([a-zA-Z0-9_]+))*$',
  date: '^(IS_BEFORE|IS_ON_OR_AFTER):\\d{4}-\\d{2}-\\d{2}$',
  favorite: '^(IS|IS_ANY_OF):(true|false)(,(true|false))*$',
  archived: '^IS:(true|false)$',
} as const;

/** Longest value accepted for any parameter; enough for hundreds of list items. */
const MAX_QUERY_TERMS = 20;

const LIST_OPERATORS = ['IS', 'IS_NOT', 'IS_ANY_OF', 'IS_NONE_OF'] as const;
const SET_OPERATORS = ['INCLUDE', 'DO_NOT_INCLUDE', 'INCLUDE_ALL_OF', 'INCLUDE_ANY_OF', 'EXCLUDE_IF_ANY_OF', 'EXCLUDE_ALL'] as const;
type ListOperator = (typeof LIST_OPERATORS)[number];
type SetOperator = (typeof SET_OPERATORS)[number];

interface ListFilter {
  operator: ListOperator;
  values: string[];
}
interface SetFilter<T> {
  operator: SetOperator;
  values: T[];
}
interface DateFilter {
  operator: 'IS_BEFORE' | 'IS_ON_OR_AFTER';
  date: string;
}

export interface SearchParams {
  query: string[];
  project?: ListFilter;
  type?: ListFilter;
  state?: ListFilter;
  lifecycle?: ListFilter;
  createdBy?: { operator: ListOperator; values: number[] };
  tag?: SetFilter<{ type: string; value: string }>;
  segment?: SetFilter<string>;
  status: { environment: string; enabled: boolean }[];
  createdAt?: DateFilter;
  lastSeenAt?: DateFilter;
  favorite?: boolean;
  archived: boolean;
  offset: number;
  limit: number;
  sortBy: string;
  sortOrder: 'asc' | 'desc';
  favoritesFirst: boolean;
}

function patternError(name: string, pattern: string, sent: unknown): never {
  invalidQueryParam(name, `must match pattern "${pattern}"`, sent);
}

/** `OPERATOR:rest` with OPERATOR from `operators`; the pattern's tail accepts any rest. */
function splitOperator<T extends string>(input: string, operators: readonly T[]): { operator: T; rest: string } | undefined {
  const colon = input.indexOf(':');
  if (colon < 0) return undefined;
  const operator = input.slice(0, colon) as T;
  if (!operators.includes(operator)) return undefined;
  return { operator, rest: input.slice(colon + 1) };
}

/** Comma-separated values, trimmed, empty ones dropped (as Unleash splits them). */
function listValues(rest: string): string[] {
  return rest
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
}

function listFilter(name: string, input: string | undefined): ListFilter | undefined {
  if (input === undefined) return undefined;
  const parsed = splitOperator(input, LIST_OPERATORS);
  if (!parsed) patternError(name, PATTERNS.operator, input);
  const values = listValues(parsed.rest);
  // `IS:` with nothing after it passes the pattern and filters nothing.
  return values.length === 0 ? undefined : { operator: parsed.operator, values };
}

/** The seed's tag pattern: every comma-separated item is `type:value` with exactly one colon. */
function tagFilter(input: string | undefined): SearchParams['tag'] {
  if (input === undefined) return undefined;
  const parsed = splitOperator(input, SET_OPERATORS);
  if (!parsed) patternError('tag', PATTERNS.tag, input);
  const values = parsed.rest.split(',').map((item) => {
    const parts = item.split(':');
    if (parts.length !== 2 || parts[0] === '' || parts[1] === '') patternError('tag', PATTERNS.tag, input);
    const type = parts[0]!.trim();
    const value = parts[1]!.trim();
    return { type, value };
  });
  return { operator: parsed.operator, values };
}

function segmentFilter(input: string | undefined): SearchParams['segment'] {
  if (input === undefined) return undefined;
  const parsed = splitOperator(input, SET_OPERATORS);
  if (!parsed) patternError('segment', PATTERNS.segment, input);
  const values = listValues(parsed.rest);
  return values.length === 0 ? undefined : { operator: parsed.operator, values };
}

function isCalendarDate(date: string): boolean {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function dateFilter(name: string, input: string | undefined): DateFilter | undefined {
  if (input === undefined) return undefined;
  const parsed = splitOperator(input, ['IS_BEFORE', 'IS_ON_OR_AFTER'] as const);
  if (!parsed || !/^\d{4}-\d{2}-\d{2}$/.test(parsed.rest)) patternError(name, PATTERNS.date, input);
  // Unleash answers an impossible date (2026-13-45) with a database error; we name it.
  if (!isCalendarDate(parsed.rest)) invalidQueryParam(name, 'must contain a real calendar date', input);
  return { operator: parsed.operator, date: parsed.rest };
}

function favoriteFilter(input: string | undefined): boolean | undefined {
  if (input === undefined) return undefined;
  const parsed = splitOperator(input, ['IS', 'IS_ANY_OF'] as const);
  if (!parsed) patternError('favorite', PATTERNS.favorite, input);
  const values = parsed.rest.split(',');
  if (!values.every((value) => value === 'true' || value === 'false')) patternError('favorite', PATTERNS.favorite, input);
  const wanted = new Set(values);
  return wanted.size === 2 ? undefined : wanted.has('true');
}

function integerParam(name: string, input: string | undefined): number | undefined {
  if (input === undefined || input === '') return undefined;
  if (!/^[+-]?\d{1,10}$/.test(input.trim())) invalidQueryParam(name, 'must be integer', input);
  return Number(input.trim());
}

const SINGLE_VALUED = [
  'query',
  'project',
  'type',
  'state',
  'lifecycle',
  'createdBy',
  'tag',
  'segment',
  'createdAt',
  'lastSeenAt',
  'favorite',
  'archived',
  'offset',
  'limit',
  'sortBy',
  'sortOrder',
  'favoritesFirst',
] as const;

export function parseSearchParams(searchParams: URLSearchParams): SearchParams {
  const single = singleQueryParams(searchParams, SINGLE_VALUED);
  const statusItems = [...searchParams.getAll('status'), ...searchParams.getAll('status[]')];
  if (statusItems.length > 100) invalidQueryParam('status', 'must have at most 100 items', statusItems.length);
  const status: SearchParams['status'] = [];
  for (const item of statusItems) {
    if (item.length > 200 || !item.isWellFormed())
      invalidQueryParam('status', 'items must be `<environment>:enabled` or `<environment>:disabled`', item);
    // As Unleash: an item that is not `env:enabled|disabled` is ignored.
    const parts = item.split(':');
    if (parts.length !== 2 || (parts[1] !== 'enabled' && parts[1] !== 'disabled')) continue;
    status.push({ environment: parts[0]!, enabled: parts[1] === 'enabled' });
  }

  const createdBy = listFilter('createdBy', single.createdBy);
  if (createdBy && !createdBy.values.every((value) => /^-?\d{1,10}$/.test(value)))
    invalidQueryParam('createdBy', 'must list numeric user ids', single.createdBy);

  const archived = single.archived;
  if (archived !== undefined && archived !== 'IS:true' && archived !== 'IS:false') patternError('archived', PATTERNS.archived, archived);

  const sortOrder = single.sortOrder ?? 'asc';
  if (sortOrder !== 'asc' && sortOrder !== 'desc')
    invalidQueryParam('sortOrder', 'must be equal to one of the allowed values: "asc", "desc"', sortOrder);

  const query = listValues(single.query ?? '');
  // Each term costs three bound parameters; D1 allows 100 per statement.
  if (new Set(query).size > MAX_QUERY_TERMS)
    invalidQueryParam('query', `must have at most ${MAX_QUERY_TERMS} comma-separated terms`, single.query);

  const limit = integerParam('limit', single.limit);
  const offset = integerParam('offset', single.offset);

  return {
    query,
    project: listFilter('project', single.project),
    type: listFilter('type', single.type),
    state: listFilter('state', single.state),
    lifecycle: listFilter('lifecycle', single.lifecycle),
    createdBy: createdBy ? { operator: createdBy.operator, values: createdBy.values.map(Number) } : undefined,
    tag: tagFilter(single.tag),
    segment: segmentFilter(single.segment),
    status,
    createdAt: dateFilter('createdAt', single.createdAt),
    lastSeenAt: dateFilter('lastSeenAt', single.lastSeenAt),
    favorite: favoriteFilter(single.favorite),
    archived: archived === 'IS:true',
    // Unleash's paging rules: a limit outside 1..100 means the default 50; a negative offset 0.
    limit: limit !== undefined && limit > 0 && limit <= 100 ? limit : 50,
    offset: offset !== undefined && offset > 0 ? offset : 0,
    sortBy: single.sortBy ?? 'createdAt',
    sortOrder,
    favoritesFirst: single.favoritesFirst === 'true',
  };
}
