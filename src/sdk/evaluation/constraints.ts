/** Constraint operators, with `inverted` applied to whatever the operator decided. */
import { RE2JS } from 're2js';
import { parseIpRange, rangeContains, type IpRange } from '../../lib/ip';
import { compareSemver, parseSemver } from './semver';
import type { Constraint, Context } from './types';
import { noteImpureRead } from './purity';
import { BoundedMap } from '../../lib/bounded-map';

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

/**
 * Why a REGEX constraint cannot be saved, as Unleash words it (RE2 syntax; an inverted REGEX
 * is refused), or null when it can.
 */
export function regexProblem(pattern: string | undefined, inverted: boolean | undefined): string | null {
  if (typeof pattern !== 'string') return 'the provided value is not a valid regex string.';
  try {
    RE2JS.compile(pattern);
  } catch (error) {
    return `the provided value is not a valid regex string. Error: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (inverted === true) return 'REGEX operator cannot be inverted.';
  return null;
}

/** A constraint made ready for one revision's data: it reads the context and nothing else. */
export type Check = (context: Context) => boolean;

const NEVER: Check = () => false;

function inCheck(field: string, values: readonly string[], positive: boolean, inverted: boolean): Check {
  // `found !== positive` is the NOT_IN answer, then `!== inverted` applies the inversion.
  const flip = positive === inverted;
  if (values.length <= 4) {
    return (context) => {
      const actual = contextValue(context, field);
      return (actual !== undefined && values.includes(actual)) !== flip;
    };
  }
  const set = new Set(values);
  return (context) => {
    const actual = contextValue(context, field);
    return (actual !== undefined && set.has(actual)) !== flip;
  };
}

function stringCheck(operator: string, field: string, values: string[], caseInsensitive: boolean, inverted: boolean): Check {
  const wanted = caseInsensitive ? values.map((value) => value.toLowerCase()) : values;
  const test =
    operator === 'STR_STARTS_WITH'
      ? (subject: string) => wanted.some((value) => subject.startsWith(value))
      : operator === 'STR_ENDS_WITH'
        ? (subject: string) => wanted.some((value) => subject.endsWith(value))
        : (subject: string) => wanted.some((value) => subject.includes(value));
  return (context) => {
    const actual = contextValue(context, field);
    if (actual === undefined) return inverted;
    return test(caseInsensitive ? actual.toLowerCase() : actual) !== inverted;
  };
}

function numberCheck(operator: string, field: string, value: unknown, inverted: boolean): Check {
  const expected = Number(value);
  if (Number.isNaN(expected)) return () => inverted;
  const compare: (actual: number) => boolean =
    operator === 'NUM_EQ'
      ? (actual) => actual === expected
      : operator === 'NUM_GT'
        ? (actual) => actual > expected
        : operator === 'NUM_GTE'
          ? (actual) => actual >= expected
          : operator === 'NUM_LT'
            ? (actual) => actual < expected
            : (actual) => actual <= expected;
  return (context) => {
    const raw = contextValue(context, field);
    const actual = raw === undefined ? Number.NaN : Number(raw);
    // NaN compares false with everything, as the NaN check did.
    return compare(actual) !== inverted;
  };
}

function dateCheck(operator: string, value: unknown, inverted: boolean): Check {
  const expected = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  const after = operator === 'DATE_AFTER';
  return (context) => {
    if (!context.currentTime) noteImpureRead();
    const current = context.currentTime ? new Date(context.currentTime).getTime() : Date.now();
    if (Number.isNaN(expected) || Number.isNaN(current)) return inverted;
    return (after ? current > expected : current < expected) !== inverted;
  };
}

function semverCheck(operator: string, field: string, value: unknown, inverted: boolean): Check {
  const expected = typeof value === 'string' ? parseSemver(value.replace(/^[v=]/, '')) : undefined;
  if (!expected) return () => inverted;
  const accept: (order: number) => boolean =
    operator === 'SEMVER_EQ'
      ? (order) => order === 0
      : operator === 'SEMVER_GT'
        ? (order) => order > 0
        : operator === 'SEMVER_GTE'
          ? (order) => order >= 0
          : operator === 'SEMVER_LT'
            ? (order) => order < 0
            : (order) => order <= 0;
  return (context) => {
    const raw = contextValue(context, field);
    if (!raw || raw.startsWith('v')) return inverted;
    const actual = parseSemver(raw);
    if (!actual) return inverted;
    return accept(compareSemver(actual, expected)) !== inverted;
  };
}

function regexCheck(field: string, value: unknown, caseInsensitive: boolean, inverted: boolean): Check {
  if (typeof value !== 'string') return () => inverted;
  const regex = compiled(value, caseInsensitive);
  if (regex === null) return () => inverted;
  return (context) => {
    const actual = contextValue(context, field);
    if (actual === undefined) return inverted;
    return regex.matcher(actual).find() !== inverted;
  };
}

function cidrCheck(field: string, values: string[], inverted: boolean): Check {
  const ranges = values.map((value) => parseIpRange(value)).filter((range): range is IpRange => range !== undefined);
  return (context) => {
    const raw = contextValue(context, field);
    const address = raw === undefined ? undefined : parseIpRange(raw);
    if (!address) return inverted;
    return ranges.some((range) => rangeContains(range, address)) !== inverted;
  };
}

/**
 * A constraint as a ready check: its values cleaned, set up for look-up, parsed (numbers,
 * dates, versions, CIDR ranges) and its pattern compiled once, `inverted` folded in. An
 * unknown operator (or a missing constraint) never matches, and `inverted` does not rescue it,
 * as in the SDKs.
 */
export function compileConstraint(constraint: Constraint | undefined | null): Check {
  if (!constraint) return NEVER;
  const field = constraint.contextName;
  const inverted = Boolean(constraint.inverted);
  switch (constraint.operator) {
    case 'IN':
    case 'NOT_IN':
      return inCheck(field, cleanValues(constraint.values), constraint.operator === 'IN', inverted);
    case 'STR_STARTS_WITH':
    case 'STR_ENDS_WITH':
    case 'STR_CONTAINS':
      return stringCheck(constraint.operator, field, cleanValues(constraint.values), Boolean(constraint.caseInsensitive), inverted);
    case 'NUM_EQ':
    case 'NUM_GT':
    case 'NUM_GTE':
    case 'NUM_LT':
    case 'NUM_LTE':
      return numberCheck(constraint.operator, field, constraint.value, inverted);
    case 'DATE_AFTER':
    case 'DATE_BEFORE':
      return dateCheck(constraint.operator, constraint.value, inverted);
    case 'SEMVER_EQ':
    case 'SEMVER_GT':
    case 'SEMVER_GTE':
    case 'SEMVER_LT':
    case 'SEMVER_LTE':
      return semverCheck(constraint.operator, field, constraint.value, inverted);
    case 'REGEX':
      return regexCheck(field, constraint.value, constraint.caseInsensitive === true, inverted);
    case 'IN_CIDR':
      return cidrCheck(field, cleanValues(constraint.values), inverted);
    default:
      return NEVER;
  }
}

/** One constraint against one context (compiles it: for checks made once, use compileConstraint). */
export function constraintMatches(constraint: Constraint | undefined, context: Context): boolean {
  return compileConstraint(constraint)(context);
}
