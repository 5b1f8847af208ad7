/**
 * An OpenFeature server provider for Workers over the binding (`unleash-edge-worker/openfeature`):
 *
 * ```ts
 * await OpenFeature.setProviderAndWait(new UnleashBindingProvider(env.FLAGS, env.UNLEASH_KEY));
 * const enabled = await OpenFeature.getClient().getBooleanValue('new-checkout', false, { targetingKey: userId });
 * ```
 *
 * Resolution, on the flag's answer for the context:
 * - boolean: whether the flag is on (TARGETING_MATCH) or off (DISABLED);
 * - string: the variant's name; number: its payload of type `number`; object: its payload of
 *   type `json`, parsed. A flag that is on without a variant gives the default (DEFAULT); one that
 *   is off gives the default (DISABLED); a payload of another type is a TYPE_MISMATCH;
 * - a flag the key cannot see is FLAG_NOT_FOUND. A frontend key sees only flags that are on
 *   (as `/api/frontend` lists them), so for it a flag that is off reads as not found: use a
 *   backend (client) key in a Worker, the server-side key type.
 * The evaluation context maps to Unleash's: `targetingKey` is the `userId` (unless one is given),
 * the known fields stay at the top, everything else is a property; dates go as ISO text.
 * The OpenFeature server SDK needs the `nodejs_compat` compatibility flag (node:events, async_hooks).
 */
import {
  FlagNotFoundError,
  ParseError,
  StandardResolutionReasons,
  TypeMismatchError,
  type EvaluationContext,
  type JsonValue,
  type Provider,
  type ResolutionDetails,
} from '@openfeature/server-sdk';
import { unleashFlags, type UnleashFlagsOptions } from './client';
import type { ScopedFlagsApi, UnleashContext, UnleashEvaluation, UnleashFlagsApi } from './types';

const TOP_LEVEL = ['userId', 'sessionId', 'remoteAddress', 'environment', 'appName', 'currentTime'] as const;

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  return undefined;
}

/** OpenFeature's evaluation context as Unleash's. */
export function unleashContextOf(context: EvaluationContext): UnleashContext {
  const unleash: UnleashContext = {};
  const properties: Record<string, string> = {};
  for (const [name, value] of Object.entries(context)) {
    if (name === 'targetingKey') continue;
    if (name === 'properties' && value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)) {
      for (const [property, inner] of Object.entries(value)) {
        const asText = text(inner);
        if (asText !== undefined) properties[property] = asText;
      }
      continue;
    }
    const asText = text(value);
    if (asText === undefined) continue;
    if ((TOP_LEVEL as readonly string[]).includes(name)) unleash[name as (typeof TOP_LEVEL)[number]] = asText;
    else properties[name] = asText;
  }
  if (unleash.userId === undefined && typeof context.targetingKey === 'string') unleash.userId = context.targetingKey;
  if (Object.keys(properties).length > 0) unleash.properties = properties;
  return unleash;
}

export class UnleashBindingProvider implements Provider {
  readonly metadata = { name: 'unleash-worker-binding' } as const;
  readonly runsOn = 'server' as const;
  private readonly flags: ScopedFlagsApi;

  constructor(binding: UnleashFlagsApi, key: string, options: UnleashFlagsOptions = {}) {
    this.flags = unleashFlags(binding, key, options);
  }

  private async answer(flagKey: string, context: EvaluationContext): Promise<UnleashEvaluation> {
    const answer = await this.flags.evaluate(flagKey, unleashContextOf(context));
    if (!answer.found) throw new FlagNotFoundError(`flag ${flagKey} not found`);
    return answer;
  }

  async resolveBooleanEvaluation(flagKey: string, _defaultValue: boolean, context: EvaluationContext): Promise<ResolutionDetails<boolean>> {
    const answer = await this.answer(flagKey, context);
    return answer.enabled
      ? { value: true, reason: StandardResolutionReasons.TARGETING_MATCH, ...variantOf(answer), flagMetadata: metadataOf(answer) }
      : { value: false, reason: StandardResolutionReasons.DISABLED, flagMetadata: metadataOf(answer) };
  }

  async resolveStringEvaluation(flagKey: string, defaultValue: string, context: EvaluationContext): Promise<ResolutionDetails<string>> {
    return this.fromVariant(await this.answer(flagKey, context), defaultValue, (answer) => answer.variant.name);
  }

  async resolveNumberEvaluation(flagKey: string, defaultValue: number, context: EvaluationContext): Promise<ResolutionDetails<number>> {
    return this.fromVariant(await this.answer(flagKey, context), defaultValue, (answer) => {
      const payload = answer.variant.payload;
      if (payload?.type !== 'number') throw new TypeMismatchError(`variant ${answer.variant.name} of ${answer.name} has no number payload`);
      const value = Number(payload.value);
      if (payload.value.trim() === '' || !Number.isFinite(value)) throw new ParseError(`payload of ${answer.name} is not a number`);
      return value;
    });
  }

  async resolveObjectEvaluation<T extends JsonValue>(
    flagKey: string,
    defaultValue: T,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<T>> {
    return this.fromVariant(await this.answer(flagKey, context), defaultValue, (answer) => {
      const payload = answer.variant.payload;
      if (payload?.type !== 'json') throw new TypeMismatchError(`variant ${answer.variant.name} of ${answer.name} has no json payload`);
      try {
        return JSON.parse(payload.value) as T;
      } catch {
        throw new ParseError(`payload of ${answer.name} is not JSON`);
      }
    });
  }

  /** A value from the flag's variant: the default when it is off (DISABLED) or on without one (DEFAULT). */
  private fromVariant<T>(answer: UnleashEvaluation, defaultValue: T, valueOf: (answer: UnleashEvaluation) => T): ResolutionDetails<T> {
    const flagMetadata = metadataOf(answer);
    if (!answer.enabled) return { value: defaultValue, reason: StandardResolutionReasons.DISABLED, flagMetadata };
    if (!answer.variant.enabled) return { value: defaultValue, reason: StandardResolutionReasons.DEFAULT, flagMetadata };
    return { value: valueOf(answer), reason: StandardResolutionReasons.TARGETING_MATCH, ...variantOf(answer), flagMetadata };
  }
}

function variantOf(answer: UnleashEvaluation): { variant?: string } {
  return answer.variant.enabled ? { variant: answer.variant.name } : {};
}

function metadataOf(answer: UnleashEvaluation): { impressionData: boolean } {
  return { impressionData: answer.impressionData };
}
