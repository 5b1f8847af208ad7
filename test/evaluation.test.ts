/** Evaluator details the client-specification suite does not pin down, and hostile input. */
import { describe, expect, it } from 'vitest';
import { constraintMatches } from '../src/sdk/evaluation/constraints';
import { Evaluator, selectVariant } from '../src/sdk/evaluation/engine';
import { parseIpRange, rangeContains } from '../src/lib/ip';
import { murmur3, strategyBucket, variantBucket } from '../src/sdk/evaluation/murmur';
import { compareSemver, parseSemver } from '../src/sdk/evaluation/semver';
import type { Constraint, Context } from '../src/sdk/evaluation/types';

describe('MurmurHash3 buckets', () => {
  it('matches the reference vectors of murmurhash3js (low byte of each UTF-16 unit)', () => {
    const vectors: [string, number, number][] = [
      ['Feature.flexibleRollout.10:174', 10, 156],
      ['Feature.flexibleRollout.10:499', 32, 113],
      ['gr1:123', 73, 796],
      ['groupX:999', 25, 260],
      ['gr1:ø', 65, 617],
      ['gr1:😊', 85, 387],
    ];
    for (const [key, strategy, variant] of vectors) {
      const colon = key.indexOf(':');
      expect([
        strategyBucket(key.slice(colon + 1), key.slice(0, colon)),
        variantBucket(key.slice(colon + 1), key.slice(0, colon), 1000),
      ]).toEqual([strategy, variant]);
    }
  });

  it('hashes the empty string and long strings to unsigned 32-bit values', () => {
    expect(murmur3('')).toBe(0);
    const long = murmur3('x'.repeat(100_000), 86028157);
    expect(Number.isInteger(long) && long >= 0 && long < 2 ** 32).toBe(true);
  });
});

describe('semver', () => {
  it('orders pre-releases by semver precedence', () => {
    const order = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
    ];
    for (let i = 1; i < order.length; i++) expect(compareSemver(parseSemver(order[i - 1]!)!, parseSemver(order[i]!)!)).toBeLessThan(0);
  });

  it('refuses what is not a strict version', () => {
    for (const text of ['v1.0.0', '1.0', '01.0.0', '1.0.0-', '1.0.0-01', 'x'.repeat(300), '99999999999999999.0.0'])
      expect(parseSemver(text)).toBeUndefined();
    expect(parseSemver('1.2.3+build.5')).toEqual({ major: 1, minor: 2, patch: 3, prerelease: [] });
  });
});

describe('IP ranges', () => {
  it('parses IPv4, IPv6 (compressed, embedded IPv4) and prefixes', () => {
    const range = parseIpRange('2001:db8::/32')!;
    expect(rangeContains(range, parseIpRange('2001:db8:ffff::1')!)).toBe(true);
    expect(rangeContains(range, parseIpRange('2001:db9::1')!)).toBe(false);
    expect(rangeContains(parseIpRange('::ffff:10.0.0.0/120')!, parseIpRange('::ffff:10.0.0.77')!)).toBe(true);
    expect(rangeContains(parseIpRange('0.0.0.0/0')!, parseIpRange('203.0.113.9')!)).toBe(true);
    expect(rangeContains(parseIpRange('10.0.0.0/8')!, parseIpRange('::1')!)).toBe(false);
    for (const text of ['256.0.0.1', '1.2.3', '1:2:3:4:5:6:7:8:9', '1::2::3', '10.0.0.0/33', '::/129', 'abc', ''])
      expect(parseIpRange(text)).toBeUndefined();
  });
});

describe('constraints', () => {
  const context: Context = { userId: 'Alice', properties: { version: '2.0.0', count: '12.0', empty: '' } };
  const check = (constraint: Constraint, ctx: Context = context) => constraintMatches(constraint, ctx);

  it('ignores caseInsensitive on IN, as the SDKs do, but applies it to STR_ operators and REGEX', () => {
    expect(check({ contextName: 'userId', operator: 'IN', values: ['alice'], caseInsensitive: true })).toBe(false);
    expect(check({ contextName: 'userId', operator: 'STR_STARTS_WITH', values: ['ali'], caseInsensitive: true })).toBe(true);
    expect(check({ contextName: 'userId', operator: 'REGEX', value: '^ali', caseInsensitive: true })).toBe(true);
  });

  it('inverts every operator result, but never rescues an unknown operator', () => {
    expect(check({ contextName: 'nothing', operator: 'IN', values: ['x'], inverted: true })).toBe(true);
    expect(check({ contextName: 'userId', operator: 'NO_SUCH_OPERATOR', values: ['x'], inverted: true })).toBe(false);
  });

  it('compares numbers numerically and dates strictly', () => {
    expect(check({ contextName: 'count', operator: 'NUM_EQ', value: '12' })).toBe(true);
    expect(check({ contextName: 'count', operator: 'NUM_GT', value: 'abc' })).toBe(false);
    const at = { currentTime: '2026-01-01T00:00:00.000Z' };
    expect(check({ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2026-01-01T00:00:00.000Z' }, at)).toBe(false);
    expect(check({ contextName: 'currentTime', operator: 'DATE_BEFORE', value: '2026-01-01T01:00:00+02:00' }, at)).toBe(false);
    expect(check({ contextName: 'currentTime', operator: 'DATE_AFTER', value: 'not a date' }, at)).toBe(false);
  });

  it('runs REGEX in linear time: a catastrophic pattern on a long value still answers', () => {
    const hostile = { properties: { text: `${'a'.repeat(50_000)}!` } };
    expect(check({ contextName: 'text', operator: 'REGEX', value: '^(a+)+$' }, hostile)).toBe(false);
    expect(check({ contextName: 'text', operator: 'REGEX', value: '(unclosed' }, hostile)).toBe(false);
  });

  it('finds nothing under prototype names', () => {
    expect(check({ contextName: '__proto__', operator: 'STR_CONTAINS', values: ['object'] })).toBe(false);
    expect(check({ contextName: 'constructor', operator: 'STR_CONTAINS', values: ['Function'] })).toBe(false);
    expect(check({ contextName: 'toString', operator: 'NOT_IN', values: ['x'] })).toBe(true);
  });
});

describe('variants', () => {
  it('skips zero weights, honours overrides first, and is null when weights sum to 0', () => {
    const variants = [
      { name: 'zero', weight: 0 },
      { name: 'all', weight: 100 },
      { name: 'vip', weight: 0, overrides: [{ contextName: 'userId', values: ['v'] }] },
    ];
    expect(selectVariant(variants, 'g', 'default', { userId: 'u' })!.name).toBe('all');
    expect(selectVariant(variants, 'g', 'default', { userId: 'v' })!.name).toBe('vip');
    expect(selectVariant([{ name: 'a', weight: 0 }], 'g', 'default', { userId: 'u' })).toBeNull();
  });

  it('evaluates once, so enabled and variant agree even for random rollouts', () => {
    const evaluator = new Evaluator([
      {
        name: 'random',
        enabled: true,
        strategies: [{ name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'random' } }],
        variants: [{ name: 'v', weight: 1000 }],
      },
    ]);
    for (let i = 0; i < 50; i++) {
      const result = evaluator.evaluate('random', {});
      expect(result.variant.feature_enabled).toBe(result.enabled);
    }
  });

  it('treats an unknown strategy as off and an enabled flag without strategies as on', () => {
    const evaluator = new Evaluator([
      { name: 'unknown', enabled: true, strategies: [{ name: 'mystery' }] },
      { name: 'bare', enabled: true, strategies: [] },
      { name: 'host', enabled: true, strategies: [{ name: 'applicationHostname', parameters: { hostNames: 'localhost' } }] },
    ]);
    expect(evaluator.isEnabled('unknown', {})).toBe(false);
    expect(evaluator.isEnabled('bare', {})).toBe(true);
    expect(evaluator.isEnabled('host', {})).toBe(false);
    expect(evaluator.getVariant('nope', {})).toEqual({ name: 'disabled', enabled: false, feature_enabled: false, featureEnabled: false });
  });
});
