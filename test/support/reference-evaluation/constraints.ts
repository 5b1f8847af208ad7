/** Constraint operators, with `inverted` applied to whatever the operator decided. */
import { RE2JS } from 're2js';
import { parseIpRange, rangeContains } from '../../../src/lib/ip';
import { compareSemver, parseSemver } from './semver';
import type { Constraint, Context } from '../../../src/sdk/evaluation/types';
import { noteImpureRead } from '../../../src/sdk/evaluation/purity';
import { BoundedMap } from '../../../src/lib/bounded-map';

const TOP_LEVEL_FIELDS = new Set(['userId', 'sessionId', 'remoteAddress', 'environment', 'appName', 'currentTime']);

/**
 * A context field as text: the top-level field when it is one, else `properties[field]`;
 * undefined when missing or null. Only own properties count, so `__proto__` or
 * `constructor` as a field name finds nothing.
 */
export function contextValue(context: Context, field: string): string | undefined {
  if (TOP_LEVEL_FIELDS.has(field) && Object.hasOwn(context, field)) {
    const value = (context as Record<string, unknown>)[field];
    if (value !== undefined && value !== null) return String(value);
  }
  const properties = context.properties;
  if (properties && Object.hasOwn(properties, field)) {
    const value = properties[field];
    if (value !== undefined && value !== null) return String(value);
  }
  return undefined;
}

function cleanValues(values: Constraint['values']): string[] {
  if (!Array.isArray(values)) return [];
  return values.filter((value): value is string => typeof value === 'string' && value !== '').map((value) => value.trim());
}

// Patterns come from flag definitions and are reused for every evaluation; keep a bounded
// set compiled. RE2 runs in linear time, so a hostile context value cannot stall a request.
const regexCache = new BoundedMap<string, RE2JS | null>({ entries: 200 });

function compiled(pattern: string, caseInsensitive: boolean): RE2JS | null {
  const key = `${caseInsensitive ? 1 : 0}:${pattern}`;
  const cached = regexCache.get(key);
  if (cached !== undefined) return cached;
  let regex: RE2JS | null;
  try {
    regex = RE2JS.compile(pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch {
    regex = null;
  }
  regexCache.set(key, regex);
  return regex;
}

function inOperator(constraint: Constraint, context: Context): boolean {
  const actual = contextValue(context, constraint.contextName);
  const found = actual !== undefined && cleanValues(constraint.values).includes(actual);
  return constraint.operator === 'IN' ? found : !found;
}

function stringOperator(constraint: Constraint, context: Context): boolean {
  let actual = contextValue(context, constraint.contextName);
  if (actual === undefined) return false;
  let values = cleanValues(constraint.values);
  if (constraint.caseInsensitive) {
    actual = actual.toLowerCase();
    values = values.map((value) => value.toLowerCase());
  }
  const subject = actual;
  switch (constraint.operator) {
    case 'STR_STARTS_WITH':
      return values.some((value) => subject.startsWith(value));
    case 'STR_ENDS_WITH':
      return values.some((value) => subject.endsWith(value));
    default:
      return values.some((value) => subject.includes(value));
  }
}

function numberOperator(constraint: Constraint, context: Context): boolean {
  const expected = Number(constraint.value);
  const raw = contextValue(context, constraint.contextName);
  const actual = raw === undefined ? Number.NaN : Number(raw);
  if (Number.isNaN(expected) || Number.isNaN(actual)) return false;
  switch (constraint.operator) {
    case 'NUM_EQ':
      return actual === expected;
    case 'NUM_GT':
      return actual > expected;
    case 'NUM_GTE':
      return actual >= expected;
    case 'NUM_LT':
      return actual < expected;
    default:
      return actual <= expected;
  }
}

function dateOperator(constraint: Constraint, context: Context): boolean {
  const expected = typeof constraint.value === 'string' ? Date.parse(constraint.value) : Number.NaN;
  if (!context.currentTime) noteImpureRead();
  const current = context.currentTime ? new Date(context.currentTime).getTime() : Date.now();
  if (Number.isNaN(expected) || Number.isNaN(current)) return false;
  return constraint.operator === 'DATE_AFTER' ? current > expected : current < expected;
}

function semverOperator(constraint: Constraint, context: Context): boolean {
  const raw = contextValue(context, constraint.contextName);
  if (!raw || raw.startsWith('v')) return false;
  const actual = parseSemver(raw);
  const expected = typeof constraint.value === 'string' ? parseSemver(constraint.value.replace(/^[v=]/, '')) : undefined;
  if (!actual || !expected) return false;
  const order = compareSemver(actual, expected);
  switch (constraint.operator) {
    case 'SEMVER_EQ':
      return order === 0;
    case 'SEMVER_GT':
      return order > 0;
    case 'SEMVER_GTE':
      return order >= 0;
    case 'SEMVER_LT':
      return order < 0;
    default:
      return order <= 0;
  }
}

function regexOperator(constraint: Constraint, context: Context): boolean {
  const actual = contextValue(context, constraint.contextName);
  if (actual === undefined || typeof constraint.value !== 'string') return false;
  const regex = compiled(constraint.value, constraint.caseInsensitive === true);
  return regex !== null && regex.matcher(actual).find();
}

function cidrOperator(constraint: Constraint, context: Context): boolean {
  const raw = contextValue(context, constraint.contextName);
  const address = raw === undefined ? undefined : parseIpRange(raw);
  if (!address) return false;
  return cleanValues(constraint.values).some((value) => {
    const range = parseIpRange(value);
    return range !== undefined && rangeContains(range, address);
  });
}

type Operator = (constraint: Constraint, context: Context) => boolean;

const OPERATORS: ReadonlyMap<string, Operator> = new Map<string, Operator>([
  ['IN', inOperator],
  ['NOT_IN', inOperator],
  ['STR_STARTS_WITH', stringOperator],
  ['STR_ENDS_WITH', stringOperator],
  ['STR_CONTAINS', stringOperator],
  ['NUM_EQ', numberOperator],
  ['NUM_GT', numberOperator],
  ['NUM_GTE', numberOperator],
  ['NUM_LT', numberOperator],
  ['NUM_LTE', numberOperator],
  ['DATE_AFTER', dateOperator],
  ['DATE_BEFORE', dateOperator],
  ['SEMVER_EQ', semverOperator],
  ['SEMVER_GT', semverOperator],
  ['SEMVER_GTE', semverOperator],
  ['SEMVER_LT', semverOperator],
  ['SEMVER_LTE', semverOperator],
  ['REGEX', regexOperator],
  ['IN_CIDR', cidrOperator],
]);

/** An unknown operator never matches (and `inverted` does not rescue it), as in the SDKs. */
function constraintMatches(constraint: Constraint | undefined, context: Context): boolean {
  if (!constraint) return false;
  const operator = OPERATORS.get(constraint.operator);
  if (!operator) return false;
  const result = operator(constraint, context);
  return constraint.inverted ? !result : result;
}

export function allConstraintsMatch(constraints: readonly (Constraint | undefined)[], context: Context): boolean {
  return constraints.every((constraint) => constraintMatches(constraint, context));
}
