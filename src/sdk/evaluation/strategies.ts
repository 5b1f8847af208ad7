/** The built-in activation strategies. Unknown strategy names never match. */
import { contextValue } from './constraints';
import { parseIpRange, rangeContains } from '../../lib/ip';
import { murmurAfter, strategyPrefix, type MurmurPrefix } from './murmur';
import type { Context } from './types';
import { noteImpureRead } from './purity';

export type Parameters = Readonly<Record<string, unknown>>;

/** A parameter as text; strategy parameters are strings on the wire, but states vary. */
export function parameter(parameters: Parameters, name: string): string | undefined {
  if (!Object.hasOwn(parameters, name)) return undefined;
  const value = parameters[name];
  return value === undefined || value === null ? undefined : String(value);
}

function listParameter(parameters: Parameters, name: string): string[] {
  const text = parameter(parameters, name);
  return text ? text.split(',').map((item) => item.trim()) : [];
}

const KNOWN = new Set([
  'default',
  'flexibleRollout',
  'userWithId',
  'gradualRolloutUserId',
  'gradualRolloutSessionId',
  'gradualRolloutRandom',
  'remoteAddress',
  'applicationHostname',
]);

/** Whether the named strategy is on for this context; undefined for an unknown strategy. */
export function strategyIsOn(name: string, parameters: Parameters, context: Context, featureName: string): boolean | undefined {
  return KNOWN.has(name) ? compileStrategy(name, parameters, featureName)(context) : undefined;
}

/** A strategy made ready for one revision's data: whether it is on for a context. */
export type StrategyCheck = (context: Context) => boolean;

const OFF: StrategyCheck = () => false;

function randomNumber(max: number): number {
  noteImpureRead();
  return Math.floor(Math.random() * max) + 1;
}

/** `inRollout` with the percentage and the hash prefix of the groupId made once. */
function rolloutCheck(groupId: string, percentageText: string | undefined): (id: string | undefined) => boolean {
  const percentage = Number(percentageText);
  const prefix: MurmurPrefix = strategyPrefix(groupId);
  if (!(percentage > 0)) return () => false;
  // Buckets run 1..100: at 100 % every id is in.
  if (percentage >= 100) return (id) => Boolean(id);
  return (id) => Boolean(id) && (murmurAfter(prefix, typeof id === 'string' ? id : String(id)) % 100) + 1 <= percentage;
}

/**
 * A strategy as a ready check (parameters read, lists split, address ranges parsed, the
 * rollout hash's groupId part done once); false for an unknown strategy.
 */
export function compileStrategy(name: string, parameters: Parameters, featureName: string): StrategyCheck {
  switch (name) {
    case 'default':
      return () => true;
    case 'flexibleRollout': {
      const stickiness = parameter(parameters, 'stickiness') || 'default';
      const inRolloutOf = rolloutCheck(parameter(parameters, 'groupId') || featureName, parameter(parameters, 'rollout'));
      if (stickiness === 'default') return (context) => inRolloutOf(context.userId || context.sessionId || String(randomNumber(10_000)));
      if (stickiness === 'random') return () => inRolloutOf(String(randomNumber(10_000)));
      return (context) => inRolloutOf(contextValue(context, stickiness));
    }
    case 'userWithId': {
      const ids = listParameter(parameters, 'userIds');
      return (context) => context.userId !== undefined && ids.includes(context.userId);
    }
    case 'gradualRolloutUserId': {
      const inRolloutOf = rolloutCheck(parameter(parameters, 'groupId') || '', parameter(parameters, 'percentage'));
      return (context) => inRolloutOf(context.userId);
    }
    case 'gradualRolloutSessionId': {
      const inRolloutOf = rolloutCheck(parameter(parameters, 'groupId') || '', parameter(parameters, 'percentage'));
      return (context) => inRolloutOf(context.sessionId);
    }
    case 'gradualRolloutRandom': {
      const percentage = Number(parameter(parameters, 'percentage'));
      return () => percentage >= randomNumber(100);
    }
    case 'remoteAddress': {
      const entries = listParameter(parameters, 'IPs').map((entry) => {
        const range = parseIpRange(entry);
        // Only IPv4 ranges, as the SDKs read this strategy; invalid entries are skipped.
        return { entry, range: range !== undefined && range.family === 4 ? range : undefined };
      });
      return (context) => {
        const remote = context.remoteAddress;
        if (!remote) return false;
        let address: ReturnType<typeof parseIpRange> | null = null;
        for (const { entry, range } of entries) {
          if (entry === remote) return true;
          if (range === undefined) continue;
          address ??= parseIpRange(remote);
          if (address !== undefined && rangeContains(range, address)) return true;
        }
        return false;
      };
    }
    // A server-side evaluator has no application host name to compare with.
    case 'applicationHostname':
      return OFF;
    default:
      return OFF;
  }
}
