/** The built-in activation strategies. Unknown strategy names never match. */
import { contextValue } from './constraints';
import { parseIpRange, rangeContains } from '../../../src/lib/ip';
import { strategyBucket } from './murmur';
import type { Context } from '../../../src/sdk/evaluation/types';
import { noteImpureRead } from '../../../src/sdk/evaluation/purity';

export type Parameters = Readonly<Record<string, unknown>>;

/** A parameter as text; strategy parameters are strings on the wire, but states vary. */
export function parameter(parameters: Parameters, name: string): string | undefined {
  if (!Object.hasOwn(parameters, name)) return undefined;
  const value = parameters[name];
  return value === undefined || value === null ? undefined : String(value);
}

function randomId(max: number): string {
  noteImpureRead();
  return String(Math.floor(Math.random() * max) + 1);
}

function inRollout(id: string | undefined, groupId: string, percentageText: string | undefined): boolean {
  if (!id) return false;
  const percentage = Number(percentageText);
  return percentage > 0 && strategyBucket(id, groupId) <= percentage;
}

function listParameter(parameters: Parameters, name: string): string[] {
  const text = parameter(parameters, name);
  return text ? text.split(',').map((item) => item.trim()) : [];
}

type StrategyImpl = (parameters: Parameters, context: Context, featureName: string) => boolean;

const STRATEGIES: ReadonlyMap<string, StrategyImpl> = new Map<string, StrategyImpl>([
  ['default', () => true],
  [
    'flexibleRollout',
    (parameters, context, featureName) => {
      const stickiness = parameter(parameters, 'stickiness') || 'default';
      let id: string | undefined;
      if (stickiness === 'default') id = context.userId || context.sessionId || randomId(10_000);
      else if (stickiness === 'random') id = randomId(10_000);
      else id = contextValue(context, stickiness);
      return inRollout(id, parameter(parameters, 'groupId') || featureName, parameter(parameters, 'rollout'));
    },
  ],
  ['userWithId', (parameters, context) => context.userId !== undefined && listParameter(parameters, 'userIds').includes(context.userId)],
  [
    'gradualRolloutUserId',
    (parameters, context) => inRollout(context.userId, parameter(parameters, 'groupId') || '', parameter(parameters, 'percentage')),
  ],
  [
    'gradualRolloutSessionId',
    (parameters, context) => inRollout(context.sessionId, parameter(parameters, 'groupId') || '', parameter(parameters, 'percentage')),
  ],
  ['gradualRolloutRandom', (parameters) => Number(parameter(parameters, 'percentage')) >= Number(randomId(100))],
  [
    'remoteAddress',
    (parameters, context) => {
      const remote = context.remoteAddress;
      if (!remote) return false;
      const address = parseIpRange(remote);
      return listParameter(parameters, 'IPs').some((entry) => {
        if (entry === remote) return true;
        const range = parseIpRange(entry);
        // Only IPv4 ranges, as the SDKs read this strategy; invalid entries are skipped.
        return range !== undefined && range.family === 4 && address !== undefined && rangeContains(range, address);
      });
    },
  ],
  // A server-side evaluator has no application host name to compare with.
  ['applicationHostname', () => false],
]);

/** Whether the named strategy is on for this context; undefined for an unknown strategy. */
export function strategyIsOn(name: string, parameters: Parameters, context: Context, featureName: string): boolean | undefined {
  const impl = STRATEGIES.get(name);
  return impl ? impl(parameters, context, featureName) : undefined;
}
