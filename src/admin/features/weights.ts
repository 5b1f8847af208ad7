/**
 * Unleash's variant weight rule (its fixVariantWeights), the one copy for every path that
 * stores variants (strategy and environment variants through the admin API, import):
 * `fix` variants keep their weight, `variable` ones (the default) share what is left of 1000
 * equally, the remainder going to the first ones. Variants without a variable one, or whose
 * fixed weights pass 1000, are refused.
 */
import { badData } from '../../http/errors';

export type WeightProblem = 'no-variable' | 'over';

const WEIGHT_PROBLEMS: Record<WeightProblem, string> = {
  'no-variable': 'There must be at least one "variable" variant',
  over: 'The traffic distribution total must equal 100%',
};

function fixWeights<T extends { weight: number; weightType?: 'variable' | 'fix' | undefined }>(variants: T[]): T[] | WeightProblem {
  if (variants.length === 0) return variants;
  const isVariable = (variant: T) => (variant.weightType ?? 'variable') === 'variable';
  const variable = variants.filter(isVariable);
  if (variable.length === 0) return 'no-variable';
  const fixed = variants.reduce((sum, variant) => (isVariable(variant) ? sum : sum + variant.weight), 0);
  if (fixed > 1000) return 'over';
  const share = Math.floor((1000 - fixed) / variable.length);
  let remainder = (1000 - fixed) % variable.length;
  return variants.map((variant) => {
    if (!isVariable(variant)) return variant;
    const extra = remainder > 0 ? 1 : 0;
    remainder -= extra;
    return { ...variant, weightType: 'variable', weight: share + extra };
  });
}

/**
 * The import's rule: variants whose `variable` weights already are an equal split of what the
 * fixed ones leave (each the share or one more, as many extras as the remainder) keep them as
 * given; any other list gets fixWeights. An export lists variants by name, not in the order
 * their weights were computed in, so splitting again would move the remainder to the first
 * name (333/334/333 becoming 334/333/333) and move users to another variant on a migration.
 */
export function importedWeights<T extends { weight: number; weightType?: 'variable' | 'fix' | undefined }>(
  variants: T[],
): T[] | WeightProblem {
  const fixed = fixWeights(variants);
  if (typeof fixed === 'string') return fixed;
  const isVariable = (variant: T) => (variant.weightType ?? 'variable') === 'variable';
  const given = variants.filter(isVariable).map((variant) => variant.weight);
  const expected = fixed.filter(isVariable).map((variant) => variant.weight);
  const sorted = (list: number[]) => [...list].sort((a, b) => a - b).join(',');
  return sorted(given) === sorted(expected)
    ? variants.map((variant) => (isVariable(variant) ? { ...variant, weightType: 'variable' } : variant))
    : fixed;
}

/**
 * The variants with their weights fixed and sorted by name, as Unleash stores and answers
 * them; or its 400 BadDataError saying why not.
 */
export function balanceWeights<T extends { name: string; weight: number; weightType?: 'variable' | 'fix' }>(variants: T[]): T[] {
  const balanced = fixWeights(variants);
  if (typeof balanced === 'string') throw badData(WEIGHT_PROBLEMS[balanced]);
  return balanced.sort((a, b) => VARIANT_ORDER.compare(a.name, b.name));
}

/** Unleash sorts with `localeCompare` in its (English) locale: `_x`, `10`, `9`, `alpha`, `Zeta`. */
const VARIANT_ORDER = new Intl.Collator('en');
