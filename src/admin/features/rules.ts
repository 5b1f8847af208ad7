/**
 * Unleash's rules for the values a flag's parts hold, wherever they are written (the admin
 * API, context fields, import): a constraint's value(s) against its operator and the legal
 * values of its context field, and a project's naming pattern. Variant weights: weights.ts.
 */
import { badData, renamedBadRequest, validationError, type ApiError } from '../../http/errors';
import { parseDateTime } from '../../http/validation';
import { RE2JS } from 're2js';
import { regexProblem } from '../../sdk/evaluation/constraints';

/** What the rules read of a constraint (the admin API's and import's shapes both have it). */
export interface ConstrainedValues {
  operator: string;
  value?: string | undefined;
  values?: readonly string[] | undefined;
  inverted?: boolean | undefined;
}

const SINGLE_VALUE_OPERATORS = new Set([
  'NUM_EQ',
  'NUM_GT',
  'NUM_GTE',
  'NUM_LT',
  'NUM_LTE',
  'DATE_AFTER',
  'DATE_BEFORE',
  'SEMVER_EQ',
  'SEMVER_GT',
  'SEMVER_LT',
  'SEMVER_GTE',
  'SEMVER_LTE',
  'REGEX',
]);
const NUMBER = /^-?\d+(\.\d+)?$/;
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** What is wrong with a constraint's value(s), if anything (Unleash's constraint rules). */
export function constraintProblem(constraint: ConstrainedValues, legal: Set<string> | undefined): string | null {
  const single = SINGLE_VALUE_OPERATORS.has(constraint.operator);
  if (single) {
    const value = constraint.value;
    if (value === undefined) return 'value is required';
    if (constraint.operator.startsWith('NUM_') && !NUMBER.test(value.trim())) return `${value} is not a number`;
    if (constraint.operator.startsWith('DATE_') && parseDateTime(value) === undefined) return `${value} is not a date`;
    if (constraint.operator.startsWith('SEMVER_') && !SEMVER.test(value)) return `${value} is not a semver version`;
    if (constraint.operator === 'REGEX') {
      const problem = regexProblem(value, constraint.inverted);
      if (problem) return problem;
    }
    if (legal && !legal.has(value)) return `${value} is not a legal value`;
    return null;
  }
  if (legal) {
    const illegal = (constraint.values ?? []).find((value) => !legal.has(value));
    if (illegal !== undefined) return `${illegal} is not a legal value`;
  }
  return null;
}

const STRICT_SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;

/** A refusal worded as Unleash's second validator words it: one detail, no path, BadDataError. */
function wholeBadData(message: string): ApiError {
  return renamedBadRequest(validationError([{ message }]), 'BadDataError') as ApiError;
}

/**
 * Refuses a strategy's or segment's constraint whose single value its operator cannot read,
 * in Unleash's words (6.10.1 and 8.2.0 alike on strategies, 8.2.0 on segments too): a number
 * for `NUM_*`, a date for `DATE_*`, a strict semver version for `SEMVER_*`. An operator the
 * schema did not know never gets here.
 */
export function checkConstraintValues(constraints: readonly ConstrainedValues[]): void {
  for (const { operator, value } of constraints) {
    if (value === undefined) continue;
    if (operator.startsWith('NUM_') && (value.trim() === '' || !Number.isFinite(Number(value))))
      throw wholeBadData(`"value" must be a number. You provided "${value}".`);
    if (operator.startsWith('DATE_') && parseDateTime(value) === undefined)
      throw wholeBadData(`"value" must be a valid date. You provided "${value}".`);
    if (operator.startsWith('SEMVER_') && !STRICT_SEMVER.test(value))
      throw badData(`the provided value is not a valid semver format. The value provided was: ${value}`);
  }
}

/** How many segments one strategy may use (Unleash's default limit). */
const STRATEGY_SEGMENTS_LIMIT = 5;

/** Refuses more segments on one strategy than Unleash allows, in its words (6.10.1 and 8.2.0). */
export function checkSegmentCount(segmentIds: readonly number[]): void {
  if (new Set(segmentIds).size > STRATEGY_SEGMENTS_LIMIT)
    throw badData(`Strategies may not have more than ${STRATEGY_SEGMENTS_LIMIT} segments`);
}

/**
 * Project naming patterns are anchored like Unleash's; an unusable one checks nothing. RE2
 * matches in linear time, so a pathological pattern cannot stall an import.
 */
export function safePattern(pattern: string): { test(name: string): boolean } | null {
  try {
    const regex = RE2JS.compile(`^${pattern}$`);
    return { test: (name) => regex.matcher(name).find() };
  } catch {
    return null;
  }
}
