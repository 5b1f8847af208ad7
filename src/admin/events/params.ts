/**
 * The query string of `GET /api/admin/search/events` (Unleash 6.10.1's eventSearchQueryParameters):
 * `feature`, `project`, `type`, `createdBy` as `IS:<v>` or `IS_ANY_OF:<v>,<v>`; `from`/`to` as
 * `IS:<yyyy-mm-dd>`; free text `query`; `offset` and `limit` normalised (limit 1..1000, else 50).
 * Checked by a linear parser, never a regular expression over the whole value.
 */
import { invalidQueryParam, singleQueryParams } from '../../http/params';

const LIST_PATTERN = '^(IS|IS_ANY_OF):(.*?)(,([a-zA-Z0-9_]+))*$';
const DATE_PATTERN = '^(IS):\\d{4}-\\d{2}-\\d{2}$';
const MAX_VALUES = 90;
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1000;

export interface EventSearch {
  query?: string;
  feature?: string[];
  project?: string[];
  type?: string[];
  createdBy?: number[];
  /** Inclusive start date and exclusive end (the day after `to`), `yyyy-mm-dd`. */
  from?: string;
  before?: string;
  offset: number;
  limit: number;
}

function listParam(name: string, input: string | undefined): string[] | undefined {
  if (input === undefined) return undefined;
  const colon = input.indexOf(':');
  const operator = colon < 0 ? '' : input.slice(0, colon);
  if (operator !== 'IS' && operator !== 'IS_ANY_OF') invalidQueryParam(name, `must match pattern "${LIST_PATTERN}"`, input);
  const values = input
    .slice(colon + 1)
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
  if (values.length > MAX_VALUES) invalidQueryParam(name, `must list at most ${MAX_VALUES} values`, input);
  return values.length === 0 ? undefined : values;
}

function dateParam(name: string, input: string | undefined): string | undefined {
  if (input === undefined) return undefined;
  const date = input.startsWith('IS:') ? input.slice(3) : '';
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) invalidQueryParam(name, `must match pattern "${DATE_PATTERN}"`, input);
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate())
    invalidQueryParam(name, 'must contain a real calendar date', input);
  return date;
}

function dayAfter(date: string): string {
  const next = new Date(`${date}T00:00:00.000Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return next.toISOString().slice(0, 10);
}

/** Unleash's normalisation: anything but a positive integer falls back to the default. */
function count(input: string | undefined, fallback: number, max: number, min: number): number {
  if (input === undefined || !/^\d{1,10}$/.test(input.trim())) return fallback;
  const value = Number(input.trim());
  if (value < min) return fallback;
  return Math.min(value, max);
}

const NAMES = ['query', 'feature', 'project', 'type', 'createdBy', 'from', 'to', 'offset', 'limit'] as const;

export function parseEventSearch(searchParams: URLSearchParams): EventSearch {
  const single = singleQueryParams(searchParams, NAMES);
  const createdBy = listParam('createdBy', single.createdBy);
  // Unleash answers a non-numeric id with a database error; we name the problem.
  if (createdBy && !createdBy.every((value) => /^-?\d{1,10}$/.test(value)))
    invalidQueryParam('createdBy', 'must list numeric user ids', single.createdBy);
  const to = dateParam('to', single.to);
  return {
    query: single.query === undefined || single.query.trim() === '' ? undefined : single.query,
    feature: listParam('feature', single.feature),
    project: listParam('project', single.project),
    type: listParam('type', single.type),
    createdBy: createdBy?.map(Number),
    from: dateParam('from', single.from),
    before: to === undefined ? undefined : dayAfter(to),
    offset: count(single.offset, 0, 2_147_483_647, 0),
    limit: count(single.limit, DEFAULT_LIMIT, MAX_LIMIT, 1),
  };
}
