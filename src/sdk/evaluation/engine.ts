/**
 * Flag evaluation with the rules the Unleash SDKs share (the client-specification suite):
 * dependencies first, then strategies in order (first match wins), each needing all of its
 * constraints and its segments' constraints; then strategy variants, else feature variants.
 *
 * An Evaluator compiles its flags once (it is made once per data revision and token scope):
 * every constraint becomes a ready check (values in look-up form, numbers, dates, versions,
 * CIDR ranges parsed, patterns compiled), segments are resolved into their strategies,
 * strategy parameters are read, the rollout hash's groupId part is done, variant weights are
 * summed and every answer a flag can give (its `results`) exists before any request. Evaluating
 * a flag then reads the context and picks one of those answers by index, allocating nothing.
 * test/support/reference-evaluation/ keeps the evaluator this replaced; a differential test
 * holds the two to the same answers.
 */
import { compileConstraint, contextValue, type Check } from './constraints';
import { murmurAfter, variantPrefix } from './murmur';
import { compileStrategy, parameter, type Parameters, type StrategyCheck } from './strategies';
import type { Context, Feature, Segment, Strategy, VariantDefinition, VariantResult } from './types';
import { noteImpureRead } from './purity';

const NO_PARAMETERS: Parameters = Object.freeze({});
const NEVER: Check = () => false;

function randomSeed(): string {
  noteImpureRead();
  return String(Math.round(Math.random() * 100_000));
}

function stickinessSeed(context: Context, stickiness: string | null | undefined): string {
  if (stickiness && stickiness !== 'default') return contextValue(context, stickiness) || randomSeed();
  const { userId, sessionId, remoteAddress } = context;
  if (typeof userId === 'string' && userId !== '') return userId;
  if (typeof sessionId === 'string' && sessionId !== '') return sessionId;
  if (typeof remoteAddress === 'string' && remoteAddress !== '') return remoteAddress;
  return randomSeed();
}

/** Picks the index of a variant for a context, or -1 (weights summing to 0). */
type VariantPicker = (context: Context) => number;

const NO_VARIANT: VariantPicker = () => -1;

/**
 * A variant choice made ready: weights summed, overrides listed in the order they are tried,
 * the hash's groupId part done. An override wins outright; else the weights pick.
 */
function compileVariantPicker(
  variants: readonly VariantDefinition[],
  groupId: string,
  stickiness: string | null | undefined,
): VariantPicker {
  const totalWeight = variants.reduce((sum, variant) => sum + Number(variant.weight), 0);
  if (!(totalWeight > 0)) return NO_VARIANT;
  const overrides: { index: number; field: string; values: readonly unknown[] | null }[] = [];
  variants.forEach((variant, index) => {
    if (!Array.isArray(variant.overrides)) return;
    for (const override of variant.overrides)
      overrides.push({ index, field: override.contextName, values: Array.isArray(override.values) ? override.values : null });
  });
  const reachedAt: number[] = [];
  const indexAt: number[] = [];
  let reached = 0;
  variants.forEach((variant, index) => {
    if (variant.weight === 0) return;
    reached += Number(variant.weight);
    reachedAt.push(reached);
    indexAt.push(index);
  });
  const prefix = variantPrefix(groupId);
  return (context) => {
    for (const { index, field, values } of overrides) {
      const actual = contextValue(context, field);
      if (actual !== undefined && values !== null && values.includes(actual)) return index;
    }
    const target = (murmurAfter(prefix, stickinessSeed(context, stickiness)) % totalWeight) + 1;
    for (let i = 0; i < reachedAt.length; i++) if (reachedAt[i]! >= target) return indexAt[i]!;
    return -1;
  };
}

/** Picks a variant by weight (an override wins outright); null when the weights sum to 0. */
export function selectVariant(
  variants: readonly VariantDefinition[],
  groupId: string,
  stickiness: string | null | undefined,
  context: Context,
): VariantDefinition | null {
  const index = compileVariantPicker(variants, groupId, stickiness)(context);
  return index < 0 ? null : variants[index]!;
}

interface CompiledStrategy {
  checks: readonly Check[];
  isOn: StrategyCheck;
  /** Its variants' choice, and where their answers start in the flag's `results`. */
  pickVariant: VariantPicker;
  firstResult: number;
}

/**
 * One flag made ready. `outcome(context)` is -1 when the flag is off for the context, else the
 * index of its answer in `results` (0: on, with the `disabled` variant). Callers must not
 * change `results`: they are shared by every evaluation of this revision.
 */
export interface CompiledFlag {
  readonly name: string;
  readonly results: readonly VariantResult[];
  outcome(context: Context): number;
}

const ENABLED_WITHOUT_VARIANT: VariantResult = Object.freeze(disabledVariant(true));

class Flag implements CompiledFlag {
  readonly results: VariantResult[] = [ENABLED_WITHOUT_VARIANT];
  /** -1 when off whatever the context (disabled, or no strategy list). */
  private readonly state: -1 | 0 | 1;
  private strategies: CompiledStrategy[] = [];
  private pickFeatureVariant: VariantPicker = NO_VARIANT;
  private featureVariantsAt = 0;
  /** Parents resolved once the evaluator has compiled every flag. */
  dependencies: ((context: Context) => boolean) | null = null;
  readonly hasDependencies: boolean;

  constructor(
    readonly name: string,
    readonly definition: Feature,
    segments: ReadonlyMap<number, readonly Check[]>,
  ) {
    this.hasDependencies = Array.isArray(definition.dependencies) && definition.dependencies.length > 0;
    this.state = !definition.enabled || !Array.isArray(definition.strategies) ? -1 : definition.strategies.length === 0 ? 0 : 1;
    if (Array.isArray(definition.strategies)) {
      for (const strategy of definition.strategies) this.strategies.push(this.compileStrategy(strategy, segments));
    }
    const variants = Array.isArray(definition.variants) ? definition.variants : [];
    if (variants.length > 0) {
      this.pickFeatureVariant = compileVariantPicker(variants, definition.name, variants[0]?.stickiness);
      this.featureVariantsAt = this.results.length;
      for (const variant of variants)
        this.results.push(
          Object.freeze({
            name: variant.name,
            ...(variant.payload ? { payload: variant.payload } : {}),
            enabled: true,
            feature_enabled: true,
            featureEnabled: true,
          }),
        );
    }
  }

  private compileStrategy(strategy: Strategy, segments: ReadonlyMap<number, readonly Check[]>): CompiledStrategy {
    const parameters = strategy.parameters ?? NO_PARAMETERS;
    const checks: Check[] = Array.isArray(strategy.constraints)
      ? strategy.constraints.map((constraint) => compileConstraint(constraint))
      : [];
    if (Array.isArray(strategy.segments)) {
      // A segment the state does not define fails the strategy.
      for (const id of strategy.segments) checks.push(...(segments.get(id) ?? [NEVER]));
    }
    const variants = Array.isArray(strategy.variants) ? strategy.variants : [];
    const firstResult = this.results.length;
    let pickVariant = NO_VARIANT;
    if (variants.length > 0) {
      const stickiness = variants[0]?.stickiness || parameter(parameters, 'stickiness');
      // The SDKs hash with the groupId parameter as is, "undefined" included.
      pickVariant = compileVariantPicker(variants, String(parameter(parameters, 'groupId')), stickiness);
      for (const { name, payload } of variants)
        this.results.push(
          Object.freeze({ name, enabled: true, ...(payload ? { payload } : {}), feature_enabled: true, featureEnabled: true }),
        );
    }
    return { checks, isOn: compileStrategy(strategy.name, parameters, this.name), pickVariant, firstResult };
  }

  /** -1 when off; 0 when on by a strategy without a variant for this context; else its variant's result. */
  hit(context: Context): number {
    if (this.state < 0) return -1;
    const dependencies = this.dependencies;
    if (dependencies !== null && !dependencies(context)) return -1;
    if (this.state === 0) return 0;
    const strategies = this.strategies;
    next: for (let s = 0; s < strategies.length; s++) {
      const strategy = strategies[s]!;
      const checks = strategy.checks;
      for (let c = 0; c < checks.length; c++) if (!checks[c]!(context)) continue next;
      if (!strategy.isOn(context)) continue;
      const variant = strategy.pickVariant(context);
      return variant < 0 ? 0 : strategy.firstResult + variant;
    }
    return -1;
  }

  outcome(context: Context): number {
    const hit = this.hit(context);
    if (hit !== 0) return hit;
    const variant = this.pickFeatureVariant(context);
    return variant < 0 ? 0 : this.featureVariantsAt + variant;
  }
}

export class Evaluator {
  private readonly flags: ReadonlyMap<string, Flag>;

  constructor(features: Iterable<Feature>, segments: Iterable<Segment> = []) {
    const segmentChecks = new Map<number, readonly Check[]>();
    for (const segment of segments)
      segmentChecks.set(
        segment.id,
        segment.constraints.map((constraint) => compileConstraint(constraint)),
      );
    const flags = new Map<string, Flag>();
    for (const feature of features) flags.set(feature.name, new Flag(feature.name, feature, segmentChecks));
    this.flags = flags;
    for (const flag of flags.values()) if (flag.hasDependencies) flag.dependencies = this.compileDependencies(flag.definition);
  }

  private compileDependencies(feature: Feature): (context: Context) => boolean {
    const checks = (feature.dependencies ?? []).map((dependency): ((context: Context) => boolean) => {
      const parent = this.flags.get(dependency.feature);
      // Only one level of dependencies exists: a parent that has parents itself never counts.
      if (!parent || parent.hasDependencies) return () => false;
      if (dependency.enabled === false) return (context) => parent.hit(context) < 0;
      if (Array.isArray(dependency.variants) && dependency.variants.length > 0) {
        const wanted = dependency.variants;
        return (context) => {
          const outcome = parent.outcome(context);
          return outcome >= 0 && wanted.includes(parent.results[outcome]!.name);
        };
      }
      return (context) => parent.hit(context) >= 0;
    });
    return (context) => checks.every((check) => check(context));
  }

  has(name: string): boolean {
    return this.flags.has(name);
  }

  /** The compiled flag, for callers that evaluate many contexts (the frontend API's answers). */
  flag(name: string): CompiledFlag | undefined {
    return this.flags.get(name);
  }

  isEnabled(name: string, context: Context): boolean {
    const flag = this.flags.get(name);
    return flag ? flag.hit(context) >= 0 : false;
  }

  getVariant(name: string, context: Context): VariantResult {
    const flag = this.flags.get(name);
    if (!flag) return disabledVariant(false);
    const outcome = flag.outcome(context);
    return outcome < 0 ? disabledVariant(false) : { ...flag.results[outcome]! };
  }

  /** One evaluation giving both answers, so a random rollout cannot disagree with itself. */
  evaluate(name: string, context: Context): { enabled: boolean; variant: VariantResult } {
    const flag = this.flags.get(name);
    if (!flag) return { enabled: false, variant: disabledVariant(false) };
    const outcome = flag.outcome(context);
    return outcome < 0 ? { enabled: false, variant: disabledVariant(false) } : { enabled: true, variant: { ...flag.results[outcome]! } };
  }
}

export function disabledVariant(featureEnabled: boolean): VariantResult {
  return { name: 'disabled', enabled: false, feature_enabled: featureEnabled, featureEnabled };
}
