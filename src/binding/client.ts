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
 * on every call (a revoked key stops working as on HTTP). A refusal rejects with an
 * `UnleashBindingError` whose `kind` says which (`unauthorized`, `forbidden`, …).
 */
import {
  BINDING_ERRORS,
  type BindingErrorKind,
  type ScopedFlagsApi,
  type UnleashContext,
  type UnleashEvaluation,
  type UnleashFlagsApi,
  type UnleashToggles,
  type UnleashVariant,
} from './types';

export type * from './types';
export { BINDING_ERRORS };

const KINDS = Object.keys(BINDING_ERRORS) as BindingErrorKind[];

/**
 * A refusal of the binding, typed: `kind` says which (docs/binding.md, "Refusals"). Workers RPC
 * hands the caller a plain `Error`; `unleashFlags` rethrows refusals as this class, and
 * `bindingErrorKind` reads the kind of a rejection from a raw RPC call.
 */
export class UnleashBindingError extends Error {
  override readonly name = 'UnleashBindingError';
  constructor(
    readonly kind: BindingErrorKind,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The kind of a refusal the binding rejected with (its `kind`, else its message's prefix), or null for any other error. */
export function bindingErrorKind(error: unknown): BindingErrorKind | null {
  if (!(error instanceof Error)) return null;
  const { kind } = error as { kind?: unknown };
  if (typeof kind === 'string' && (KINDS as string[]).includes(kind)) return kind as BindingErrorKind;
  return KINDS.find((candidate) => error.message.startsWith(`${BINDING_ERRORS[candidate]}:`)) ?? null;
}

/** Awaits an RPC call, its refusal rethrown typed. */
async function typed<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const kind = bindingErrorKind(error);
    throw kind === null ? error : new UnleashBindingError(kind, (error as Error).message, { cause: error });
  }
}

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
  const evaluate = (name: string, context: UnleashContext = {}): Promise<UnleashEvaluation> =>
    typed(() => binding.evaluate(key, name, context));
  const impression = (eventType: ImpressionEvent['eventType'], answer: UnleashEvaluation, context: UnleashContext) => {
    if (answer.impressionData && onImpression)
      onImpression({ eventType, featureName: answer.name, enabled: answer.enabled, variant: answer.variant.name, context });
  };
  return {
    async isEnabled(name: string, context: UnleashContext = {}): Promise<boolean> {
      if (!onImpression) return typed(() => binding.isEnabled(key, name, context));
      const answer = await evaluate(name, context);
      impression('isEnabled', answer, context);
      return answer.enabled;
    },
    async getVariant(name: string, context: UnleashContext = {}): Promise<UnleashVariant> {
      if (!onImpression) return typed(() => binding.getVariant(key, name, context));
      const answer = await evaluate(name, context);
      impression('getVariant', answer, context);
      return answer.variant;
    },
    getAll: (context: UnleashContext = {}): Promise<UnleashToggles> => typed(() => binding.getAll(key, context)),
    evaluate,
  };
}
