/** Unleash's value rules an import applies element by element: variant weights and constraint values. */
import type { VariantDoc } from '../../db/schema';
import { parseDateTime } from '../../http/validation';
import type { ImportedConstraint, ImportedVariant } from './schema';
import { RE2JS } from 're2js';
import { regexProblem } from '../evaluation/constraints';

/** Unleash's weight rule: fixed weights stay, variable ones share what is left of 1000. */
export function fixWeights<T extends { weight: number; weightType?: 'variable' | 'fix' | undefined }>(variants: T[]): T[] | 'no-variable' | 'over' {
  if (variants.length === 0) return variants;
  const variable = variants.filter((variant) => (variant.weightType ?? 'variable') === 'variable');
  if (variable.length === 0) return 'no-variable';
  const fixed = variants.reduce((sum, variant) => ((variant.weightType ?? 'variable') === 'fix' ? sum + variant.weight : sum), 0);
  if (fixed > 1000) return 'over';
  const share = Math.floor((1000 - fixed) / variable.length);
  let remainder = (1000 - fixed) % variable.length;
  return variants.map((variant) => {
    if ((variant.weightType ?? 'variable') !== 'variable') return variant;
    const extra = remainder > 0 ? 1 : 0;
    remainder -= extra;
    return { ...variant, weightType: 'variable', weight: share + extra };
  });
}

const SINGLE_VALUE_OPERATORS = new Set(['NUM_EQ', 'NUM_GT', 'NUM_GTE', 'NUM_LT', 'NUM_LTE', 'DATE_AFTER', 'DATE_BEFORE', 'SEMVER_EQ', 'SEMVER_GT', 'SEMVER_LT', 'SEMVER_GTE', 'SEMVER_LTE', 'REGEX']);
const NUMBER = /^-?\d+(\.\d+)?$/;
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** What is wrong with a constraint's value(s), if anything (Unleash's constraint rules). */
export function constraintProblem(constraint: ImportedConstraint, legal: Set<string> | undefined): string | null {
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

export function toVariantDoc(variant: ImportedVariant): VariantDoc {
  const doc: VariantDoc = { name: variant.name, weight: variant.weight, weightType: variant.weightType ?? 'variable', stickiness: variant.stickiness ?? 'default' };
  if (variant.payload) doc.payload = variant.payload;
  if (variant.overrides) doc.overrides = variant.overrides;
  return doc;
}
