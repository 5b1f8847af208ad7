/**
 * One strategy evaluated on its own, with the result of each constraint and segment: what the
 * playground shows. The verdicts come from the same functions the Evaluator uses
 * (constraintMatches, strategyIsOn, selectVariant), so an explanation never contradicts an
 * evaluation. A strategy the engine does not know (a custom one, or `applicationHostname`,
 * which needs the SDK's host) is "unknown" when its constraints and segments hold, as in
 * Unleash's playground.
 */
import { constraintMatches } from './constraints';
import { selectVariant } from './engine';
import { parameter, strategyIsOn } from './strategies';
import type { Constraint, Context, Payload, VariantDefinition } from './types';

export type Verdict = boolean | 'unknown';

export interface ExplainedSegment {
  id: number;
  name: string;
  constraints: readonly Constraint[];
}

export interface ExplainedStrategy {
  enabled: Verdict;
  /** `complete`: evaluated; `incomplete`: the strategy is unknown here; `unevaluated`: disabled. */
  evaluationStatus: 'complete' | 'incomplete' | 'unevaluated';
  /** The variant this strategy would give when it is on (its own variants only). */
  variant?: { name: string; enabled: true; payload?: Payload };
  constraints: boolean[];
  segments: { result: boolean; constraints: boolean[] }[];
}

/** Strategies whose answer depends on the SDK's own machine, which a server cannot know. */
const SDK_ONLY = new Set(['applicationHostname']);

function results(constraints: readonly Constraint[], context: Context): boolean[] {
  return constraints.map((constraint) => constraintMatches(constraint, context));
}

export function explainStrategy(
  strategy: {
    name: string;
    parameters: Readonly<Record<string, unknown>>;
    constraints: readonly Constraint[];
    variants: readonly VariantDefinition[];
    disabled: boolean;
  },
  segments: readonly ExplainedSegment[],
  context: Context,
  featureName: string,
): ExplainedStrategy {
  const constraints = results(strategy.constraints, context);
  const segmentResults = segments.map((segment) => {
    const own = results(segment.constraints, context);
    return { result: own.every(Boolean), constraints: own };
  });
  if (strategy.disabled) return { enabled: 'unknown', evaluationStatus: 'unevaluated', constraints, segments: segmentResults };
  const gates = constraints.every(Boolean) && segmentResults.every((segment) => segment.result);
  const on = SDK_ONLY.has(strategy.name) ? undefined : strategyIsOn(strategy.name, strategy.parameters, context, featureName);
  if (on === undefined) {
    return { enabled: gates ? 'unknown' : false, evaluationStatus: 'incomplete', constraints, segments: segmentResults };
  }
  const explained: ExplainedStrategy = { enabled: gates && on, evaluationStatus: 'complete', constraints, segments: segmentResults };
  if (strategy.variants.length > 0) {
    const stickiness = strategy.variants[0]?.stickiness || parameter(strategy.parameters, 'stickiness');
    const chosen = selectVariant(strategy.variants, String(parameter(strategy.parameters, 'groupId')), stickiness, context);
    if (chosen) explained.variant = { name: chosen.name, enabled: true, ...(chosen.payload ? { payload: chosen.payload } : {}) };
  }
  return explained;
}
