/**
 * The calling Worker's side of the binding (`unleash-edge-worker/binding`): types of the
 * entrypoint and a one-line setup. Nothing here runs in our Worker.
 *
 * ```ts
 * const flags = unleashFlags(env.FLAGS, env.UNLEASH_KEY);
 * if (await flags.isEnabled('new-checkout', { userId })) ...
 * ```
 *
 * Each call is one RPC call with the key as its first argument, and our Worker checks the key
 * on every call (a revoked key stops working as on HTTP).
 */
import type { ScopedFlagsApi, UnleashContext, UnleashEvaluation, UnleashFlagsApi, UnleashToggles, UnleashVariant } from './types';

export type * from './types';
export { BINDING_ERRORS } from './types';

/** An impression event, as the frontend SDKs emit one for flags with `impressionData`. */
export interface ImpressionEvent {
  eventType: 'isEnabled' | 'getVariant';
  featureName: string;
  enabled: boolean;
  variant: string;
  context: UnleashContext;
}

export interface UnleashFlagsOptions {
  /** Called for each evaluation of a flag that has impression data enabled. */
  onImpression?: (event: ImpressionEvent) => void;
}

/**
 * The flags the key may read, through the binding (`[[services]] binding = "FLAGS", service =
 * "unleash-worker", entrypoint = "UnleashFlags"` in the calling Worker's wrangler.toml).
 */
export function unleashFlags(binding: UnleashFlagsApi, key: string, options: UnleashFlagsOptions = {}): ScopedFlagsApi {
  const { onImpression } = options;
  const evaluate = (name: string, context: UnleashContext = {}): Promise<UnleashEvaluation> => binding.evaluate(key, name, context);
  const impression = (eventType: ImpressionEvent['eventType'], answer: UnleashEvaluation, context: UnleashContext) => {
    if (answer.impressionData && onImpression)
      onImpression({ eventType, featureName: answer.name, enabled: answer.enabled, variant: answer.variant.name, context });
  };
  return {
    async isEnabled(name: string, context: UnleashContext = {}): Promise<boolean> {
      if (!onImpression) return binding.isEnabled(key, name, context);
      const answer = await evaluate(name, context);
      impression('isEnabled', answer, context);
      return answer.enabled;
    },
    async getVariant(name: string, context: UnleashContext = {}): Promise<UnleashVariant> {
      if (!onImpression) return binding.getVariant(key, name, context);
      const answer = await evaluate(name, context);
      impression('getVariant', answer, context);
      return answer.variant;
    },
    getAll: (context: UnleashContext = {}): Promise<UnleashToggles> => binding.getAll(key, context),
    evaluate,
  };
}
