/**
 * Seeded random flag sets and contexts (every operator, inverted and case-insensitive, segments
 * present and missing, dependencies of every kind, strategy and feature variants with overrides
 * and stickiness, every strategy): the differential test holds the engine to the reference
 * evaluator over them, and the binding test (test/binding.test.ts) holds the binding to
 * `POST /api/frontend` over them.
 */
import type { Constraint, Context, Feature, Segment, Strategy, VariantDefinition } from '../../src/sdk/evaluation/types';
import { seededRandom } from './random';

export const OPERATORS = [
  'IN',
  'NOT_IN',
  'STR_STARTS_WITH',
  'STR_ENDS_WITH',
  'STR_CONTAINS',
  'NUM_EQ',
  'NUM_GT',
  'NUM_GTE',
  'NUM_LT',
  'NUM_LTE',
  'DATE_AFTER',
  'DATE_BEFORE',
  'SEMVER_EQ',
  'SEMVER_GT',
  'SEMVER_GTE',
  'SEMVER_LT',
  'SEMVER_LTE',
  'REGEX',
  'IN_CIDR',
  'NO_SUCH_OPERATOR',
];
export const STRATEGIES = [
  'default',
  'flexibleRollout',
  'userWithId',
  'gradualRolloutUserId',
  'gradualRolloutSessionId',
  'gradualRolloutRandom',
  'remoteAddress',
  'applicationHostname',
  'noSuchStrategy',
];
const FIELDS = ['userId', 'sessionId', 'remoteAddress', 'environment', 'appName', 'region', 'plan', 'version', 'age', 'email'];
const USER_IDS = ['1', '2', '17', '123', 'alice', 'bob', 'Ünïcode', '😊', ''];
const WORDS = ['eu', 'us', 'apac', 'EU', ' eu ', 'pro', 'free', 'alice@example.com', 'bob@test.org', '', 'x'];
const NUMBERS = ['0', '1', '5', '17', '18', '42', '-3', '2.5', 'abc', '', '1e3'];
const VERSIONS = ['1.0.0', '1.2.3', '2.0.0-beta.1', '2.0.0', '1.2.3-alpha', 'v1.2.3', '=1.0.0', '1.2', 'banana', '10.0.0'];
const ADDRESSES = ['10.0.0.1', '10.1.2.3', '192.168.1.20', '127.0.0.1', '::1', '2001:db8::1', 'not-an-ip', ''];
const RANGES = ['10.0.0.0/8', '192.168.1.0/24', '127.0.0.1', '2001:db8::/32', '10.0.0.0/33', 'garbage', ' 192.168.0.0/16 '];
const DATES = ['2000-01-01T00:00:00.000Z', '2026-06-01T12:00:00.000Z', '2099-01-01T00:00:00.000Z', 'not a date'];
const PATTERNS = ['^a', 'example\\.com$', '[0-9]+', '(', 'EU|US', '.*'];

export function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

function someOf<T>(random: () => number, list: readonly T[], max: number): T[] {
  const count = Math.floor(random() * (max + 1));
  return Array.from({ length: count }, () => pick(random, list));
}

function constraint(random: () => number): Constraint {
  const operator = pick(random, OPERATORS);
  const field = operator.startsWith('NUM')
    ? pick(random, ['age', 'userId', 'plan'])
    : operator.startsWith('SEMVER')
      ? pick(random, ['version', 'appName'])
      : operator === 'IN_CIDR'
        ? pick(random, ['remoteAddress', 'region'])
        : pick(random, FIELDS);
  const base = { contextName: field, operator, inverted: random() < 0.3, caseInsensitive: random() < 0.4 };
  if (operator.startsWith('NUM')) return { ...base, value: pick(random, NUMBERS) };
  if (operator.startsWith('SEMVER')) return { ...base, value: pick(random, VERSIONS) };
  if (operator.startsWith('DATE')) return { ...base, contextName: 'currentTime', value: pick(random, DATES) };
  if (operator === 'REGEX') return { ...base, inverted: false, value: pick(random, PATTERNS) };
  if (operator === 'IN_CIDR') return { ...base, values: someOf(random, RANGES, 3) };
  const pool = field === 'userId' ? USER_IDS : field === 'remoteAddress' ? ADDRESSES : WORDS;
  return { ...base, values: someOf(random, pool, 6) };
}

function variants(random: () => number, prefix: string): VariantDefinition[] {
  return Array.from({ length: Math.floor(random() * 4) }, (_, i) => ({
    name: `${prefix}${i}`,
    weight: pick(random, [0, 1, 33, 50, 100, 500, 1000]),
    weightType: 'variable',
    stickiness: pick(random, ['default', 'default', 'userId', 'sessionId', 'region', 'random', null]),
    ...(random() < 0.4 ? { payload: { type: 'string', value: `${prefix}${i}-payload` } } : {}),
    ...(random() < 0.25
      ? { overrides: [{ contextName: pick(random, ['userId', 'region']), values: someOf(random, [...USER_IDS, ...WORDS], 3) }] }
      : {}),
  }));
}

function parametersFor(random: () => number, name: string): Record<string, string> {
  switch (name) {
    case 'flexibleRollout':
      return {
        rollout: pick(random, ['0', '1', '25', '50', '99', '100', 'x']),
        stickiness: pick(random, ['default', 'default', 'userId', 'sessionId', 'random', 'region', '']),
        ...(random() < 0.8 ? { groupId: pick(random, ['g1', 'some.long.group-id.name', '']) } : {}),
      };
    case 'userWithId':
      return { userIds: someOf(random, USER_IDS, 4).join(random() < 0.5 ? ',' : ', ') };
    case 'gradualRolloutUserId':
    case 'gradualRolloutSessionId':
      return { percentage: pick(random, ['0', '10', '50', '100']), groupId: pick(random, ['g', 'grp.x']) };
    case 'gradualRolloutRandom':
      return { percentage: pick(random, ['0', '30', '70', '100']) };
    case 'remoteAddress':
      return { IPs: someOf(random, [...ADDRESSES, ...RANGES], 3).join(', ') };
    default:
      return {};
  }
}

function strategy(random: () => number, segmentIds: number[], name: string, index: number): Strategy {
  const strategyName = pick(random, STRATEGIES);
  return {
    name: strategyName,
    parameters: parametersFor(random, strategyName),
    constraints: Array.from({ length: Math.floor(random() * 3) }, () => constraint(random)),
    ...(random() < 0.25 ? { segments: someOf(random, [...segmentIds, 999], 2) } : {}),
    variants: random() < 0.4 ? variants(random, `${name}-s${index}-`) : [],
  };
}

export function state(seed: number): { features: Feature[]; segments: Segment[] } {
  const random = seededRandom(seed);
  const segments: Segment[] = Array.from({ length: 4 }, (_, i) => ({
    id: i + 1,
    constraints: Array.from({ length: 1 + Math.floor(random() * 2) }, () => constraint(random)),
  }));
  const names = Array.from({ length: 40 }, (_, i) => `flag.${seed}.${i}`);
  const features = names.map((name, i): Feature => {
    const strategies =
      random() < 0.1 ? [] : Array.from({ length: 1 + Math.floor(random() * 3) }, (_, s) => strategy(random, [1, 2, 3, 4], name, s));
    const dependencies =
      i > 0 && random() < 0.25
        ? Array.from({ length: 1 + Math.floor(random() * 2) }, () => {
            const parent = random() < 0.9 ? pick(random, names.slice(0, i)) : 'no.such.parent';
            const kind = random();
            return kind < 0.3
              ? { feature: parent, enabled: false }
              : kind < 0.6
                ? { feature: parent, enabled: true, variants: someOf(random, [`${parent}-v0`, `${parent}-v1`, 'disabled'], 2) }
                : { feature: parent, enabled: true };
          })
        : undefined;
    return {
      name,
      enabled: random() < 0.85,
      strategies: random() < 0.03 ? null : strategies,
      variants: variants(random, `${name}-v`),
      impressionData: random() < 0.3,
      ...(dependencies ? { dependencies } : {}),
    };
  });
  return { features, segments };
}

export function context(random: () => number): Context {
  const properties: Record<string, string> = {};
  for (const field of someOf(random, ['region', 'plan', 'version', 'age', 'email', 'userId', 'currentTime'], 4)) {
    properties[field] = pick(random, field === 'version' ? VERSIONS : field === 'age' ? NUMBERS : field === 'currentTime' ? DATES : WORDS);
  }
  const maybe = <T>(value: T) => (random() < 0.8 ? value : undefined);
  const ctx: Context = {
    appName: pick(random, ['web', '1.2.3', 'bench']),
    environment: 'default',
    properties,
  };
  const userId = maybe(random() < 0.5 ? pick(random, USER_IDS) : `u${Math.floor(random() * 1e6)}`);
  const sessionId = maybe(String(Math.floor(random() * 1e6)));
  const remoteAddress = maybe(pick(random, ADDRESSES));
  if (userId !== undefined) ctx.userId = userId;
  if (sessionId !== undefined) ctx.sessionId = sessionId;
  if (remoteAddress !== undefined) ctx.remoteAddress = remoteAddress;
  if (random() < 0.7) ctx.currentTime = pick(random, DATES.slice(0, 3));
  return ctx;
}
