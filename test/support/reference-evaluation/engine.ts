/**
 * REFERENCE COPY for test/evaluation-differential.test.ts: the evaluator as it was before flags
 * were compiled into matchers (src/sdk/evaluation/engine.ts). Not used by the Worker; do
 * not optimise it: it is what the compiled engine must agree with.
 */
/**
 * Flag evaluation with the rules the Unleash SDKs share (the client-specification suite):
 * dependencies first, then strategies in order (first match wins), each needing all of its
 * constraints and its segments' constraints; then strategy variants, else feature variants.
 */
import { allConstraintsMatch, contextValue } from './constraints';
import { variantBucket } from './murmur';
import { parameter, strategyIsOn, type Parameters } from './strategies';
import type {
  Constraint,
  Context,
  Feature,
  Payload,
  Segment,
  Strategy,
  VariantDefinition,
  VariantResult,
} from '../../../src/sdk/evaluation/types';
import { noteImpureRead } from '../../../src/sdk/evaluation/purity';

const NO_PARAMETERS: Parameters = Object.freeze({});

interface StrategyHit {
  enabled: boolean;
  variant?: { name: string; payload?: Payload };
}

function randomSeed(): string {
  noteImpureRead();
  return String(Math.round(Math.random() * 100_000));
}

function stickinessSeed(context: Context, stickiness: string | null | undefined): string {
  if (stickiness && stickiness !== 'default') return contextValue(context, stickiness) || randomSeed();
  for (const id of [context.userId, context.sessionId, context.remoteAddress]) {
    if (typeof id === 'string' && id !== '') return id;
  }
  return randomSeed();
}

function overrideMatches(variant: VariantDefinition, context: Context): boolean {
  if (!Array.isArray(variant.overrides)) return false;
  return variant.overrides.some((override) => {
    const actual = contextValue(context, override.contextName);
    return actual !== undefined && Array.isArray(override.values) && override.values.includes(actual);
  });
}

/** Picks a variant by weight (an override wins outright); null when the weights sum to 0. */
function selectVariant(
  variants: readonly VariantDefinition[],
  groupId: string,
  stickiness: string | null | undefined,
  context: Context,
): VariantDefinition | null {
  const totalWeight = variants.reduce((sum, variant) => sum + Number(variant.weight), 0);
  if (!(totalWeight > 0)) return null;
  const override = variants.find((variant) => overrideMatches(variant, context));
  if (override) return override;
  const target = variantBucket(stickinessSeed(context, stickiness), groupId, totalWeight);
  let reached = 0;
  for (const variant of variants) {
    if (variant.weight === 0) continue;
    reached += Number(variant.weight);
    if (reached >= target) return variant;
  }
  return null;
}

export class Evaluator {
  private readonly features: ReadonlyMap<string, Feature>;
  private readonly segments: ReadonlyMap<number, Segment>;

  constructor(features: Iterable<Feature>, segments: Iterable<Segment> = []) {
    this.features = new Map([...features].map((feature) => [feature.name, feature]));
    this.segments = new Map([...segments].map((segment) => [segment.id, segment]));
  }

  has(name: string): boolean {
    return this.features.has(name);
  }

  isEnabled(name: string, context: Context): boolean {
    const feature = this.features.get(name);
    return feature ? this.evaluateStrategies(feature, context).enabled : false;
  }

  getVariant(name: string, context: Context): VariantResult {
    const feature = this.features.get(name);
    if (!feature) return disabledVariant(false);
    return this.variantFor(feature, this.evaluateStrategies(feature, context), context);
  }

  /** One evaluation giving both answers, so a random rollout cannot disagree with itself. */
  evaluate(name: string, context: Context): { enabled: boolean; variant: VariantResult } {
    const feature = this.features.get(name);
    if (!feature) return { enabled: false, variant: disabledVariant(false) };
    const hit = this.evaluateStrategies(feature, context);
    return { enabled: hit.enabled, variant: this.variantFor(feature, hit, context) };
  }

  private variantFor(feature: Feature, hit: StrategyHit, context: Context): VariantResult {
    if (!hit.enabled) return disabledVariant(false);
    if (hit.variant) {
      const { name, payload } = hit.variant;
      return { name, enabled: true, ...(payload ? { payload } : {}), feature_enabled: true, featureEnabled: true };
    }
    const variants = Array.isArray(feature.variants) ? feature.variants : [];
    if (variants.length === 0) return disabledVariant(true);
    const chosen = selectVariant(variants, feature.name, variants[0]?.stickiness, context);
    if (!chosen) return disabledVariant(true);
    return {
      name: chosen.name,
      ...(chosen.payload ? { payload: chosen.payload } : {}),
      enabled: true,
      feature_enabled: true,
      featureEnabled: true,
    };
  }

  private dependenciesSatisfied(feature: Feature, context: Context): boolean {
    if (!Array.isArray(feature.dependencies) || feature.dependencies.length === 0) return true;
    return feature.dependencies.every((dependency) => {
      const parent = this.features.get(dependency.feature);
      // Only one level of dependencies exists: a parent that has parents itself never counts.
      if (!parent || (Array.isArray(parent.dependencies) && parent.dependencies.length > 0)) return false;
      if (dependency.enabled === false) return !this.isEnabled(parent.name, context);
      if (Array.isArray(dependency.variants) && dependency.variants.length > 0) {
        const variant = this.getVariant(parent.name, context);
        return variant.feature_enabled && dependency.variants.includes(variant.name);
      }
      return this.isEnabled(parent.name, context);
    });
  }

  private constraintsOf(strategy: Strategy): (Constraint | undefined)[] {
    const constraints: (Constraint | undefined)[] = Array.isArray(strategy.constraints) ? [...strategy.constraints] : [];
    if (Array.isArray(strategy.segments)) {
      for (const id of strategy.segments) {
        const segment = this.segments.get(id);
        // A segment the state does not define fails the strategy.
        if (!segment) constraints.push(undefined);
        else constraints.push(...segment.constraints);
      }
    }
    return constraints;
  }

  private evaluateStrategies(feature: Feature, context: Context): StrategyHit {
    if (!this.dependenciesSatisfied(feature, context) || !feature.enabled) return { enabled: false };
    if (!Array.isArray(feature.strategies)) return { enabled: false };
    if (feature.strategies.length === 0) return { enabled: true };
    for (const strategy of feature.strategies) {
      const parameters = strategy.parameters ?? NO_PARAMETERS;
      if (!allConstraintsMatch(this.constraintsOf(strategy), context)) continue;
      if (strategyIsOn(strategy.name, parameters, context, feature.name) !== true) continue;
      const variants = Array.isArray(strategy.variants) ? strategy.variants : [];
      if (variants.length > 0) {
        const stickiness = variants[0]?.stickiness || parameter(parameters, 'stickiness');
        // The SDKs hash with the groupId parameter as is, "undefined" included.
        const chosen = selectVariant(variants, String(parameter(parameters, 'groupId')), stickiness, context);
        if (chosen) return { enabled: true, variant: { name: chosen.name, ...(chosen.payload ? { payload: chosen.payload } : {}) } };
      }
      return { enabled: true };
    }
    return { enabled: false };
  }
}

function disabledVariant(featureEnabled: boolean): VariantResult {
  return { name: 'disabled', enabled: false, feature_enabled: featureEnabled, featureEnabled };
}
