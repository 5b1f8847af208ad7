/**
 * The compiled evaluator (src/sdk/evaluation/engine.ts) and the frontend API's answer
 * assembly (src/sdk/frontend-api/answer.ts) against the evaluator they replaced, kept in
 * test/support/reference-evaluation/: seeded random flag sets (every operator, inverted and
 * case-insensitive, segments present and missing, dependencies of every kind, strategy and
 * feature variants with overrides and stickiness, every strategy) and thousands of seeded random
 * contexts must give the same isEnabled, the same variant (key order included) and the same
 * frontend body, byte for byte.
 *
 * Random rollouts: Math.random is held at one value per context, so both evaluators draw the
 * same number however often they ask.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Evaluator } from '../src/sdk/evaluation/engine';
import { murmur3, murmurAfter, murmurPrefix } from '../src/sdk/evaluation/murmur';
import type { Feature } from '../src/sdk/evaluation/types';
import { FrontendPlan, weakEtag } from '../src/sdk/frontend-api/answer';
import { Evaluator as ReferenceEvaluator } from './support/reference-evaluation/engine';
import { seededRandom } from './support/random';
import { context, OPERATORS, pick, state, STRATEGIES } from './support/random-flags';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('compiled evaluator against the reference evaluator', () => {
  it('murmurAfter(prefix, rest) is murmur3(prefix + rest)', () => {
    const random = seededRandom(7);
    const alphabet = 'abc.:-_0123456789Üø😊';
    const text = (max: number) => Array.from({ length: Math.floor(random() * max) }, () => pick(random, [...alphabet])).join('');
    for (let i = 0; i < 2000; i++) {
      const prefix = text(12);
      const rest = text(12);
      const seed = pick(random, [0, 86028157]);
      expect(murmurAfter(murmurPrefix(prefix, seed), rest)).toBe(murmur3(prefix + rest, seed));
    }
  });

  it('gives the same toggles, variants and frontend bodies for thousands of seeded contexts', async () => {
    const decoder = new TextDecoder();
    const tally = { evaluations: 0, enabled: 0, variants: new Set<string>(), operators: new Set<string>(), strategies: new Set<string>() };
    const contextsPerState = 150;
    for (let seed = 1; seed <= 20; seed++) {
      const { features, segments } = state(seed);
      for (const feature of features)
        for (const s of feature.strategies ?? []) {
          tally.strategies.add(s.name);
          for (const c of s.constraints ?? []) tally.operators.add(c.operator);
        }
      const reference = new ReferenceEvaluator(features, segments);
      const compiled = new Evaluator(features, segments);
      const plan = new FrontendPlan(
        compiled,
        features.map((feature) => ({ name: feature.name, impressionData: feature.impressionData ?? false, definition: feature })),
      );
      const random = seededRandom(seed * 1000);
      for (let n = 0; n < contextsPerState; n++) {
        const ctx = context(random);
        const held = random();
        vi.spyOn(Math, 'random').mockImplementation(() => held);
        const toggles = [];
        for (const feature of features) {
          const label = `seed ${seed}, context ${n}, ${feature.name}`;
          const expected = reference.evaluate(feature.name, ctx);
          // Compared as text (key order counts); expect() only on a difference, for speed.
          const pairs: [unknown, unknown][] = [
            [JSON.stringify(compiled.evaluate(feature.name, ctx)), JSON.stringify(expected)],
            [compiled.isEnabled(feature.name, ctx), reference.isEnabled(feature.name, ctx)],
            [JSON.stringify(compiled.getVariant(feature.name, ctx)), JSON.stringify(reference.getVariant(feature.name, ctx))],
          ];
          for (const [actual, wanted] of pairs)
            if (actual !== wanted) expect(actual, `${label}: ${JSON.stringify({ feature, ctx })}`).toBe(wanted);
          tally.evaluations++;
          if (expected.enabled) {
            tally.enabled++;
            tally.variants.add(expected.variant.name);
            toggles.push({ name: feature.name, enabled: true, variant: expected.variant, impressionData: feature.impressionData ?? false });
          }
        }
        const body = JSON.stringify({ toggles });
        const assembled = decoder.decode(plan.body(ctx));
        if (assembled !== body) expect(assembled, `seed ${seed}, context ${n}: frontend body`).toBe(body);
        // The ETag path (bodies kept by answer vector) on some of them.
        if (n % 10 === 0) {
          const answer = await plan.answer(ctx);
          expect(decoder.decode(answer.body)).toBe(body);
          expect(answer.etag).toBe(await weakEtag(new TextEncoder().encode(body)));
        }
        vi.restoreAllMocks();
      }
    }
    // Not vacuous: both outcomes, many variants, every operator and strategy took part.
    expect(tally.evaluations).toBe(20 * contextsPerState * 40);
    expect(tally.enabled / tally.evaluations).toBeGreaterThan(0.1);
    expect(tally.enabled / tally.evaluations).toBeLessThan(0.9);
    expect(tally.variants.size).toBeGreaterThan(50);
    expect([...tally.operators].sort()).toEqual([...OPERATORS].sort());
    expect([...tally.strategies].sort()).toEqual([...STRATEGIES].sort());
  }, 180_000);

  it('keeps a body by its answer vector once that vector has come twice, and serves it again', async () => {
    const features: Feature[] = Array.from({ length: 5 }, (_, i) => ({
      name: `small.${i}`,
      enabled: true,
      strategies: [{ name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: `small.${i}` } }],
    }));
    const evaluator = new Evaluator(features);
    const plan = new FrontendPlan(
      evaluator,
      features.map((feature) => ({ name: feature.name, impressionData: false, definition: feature })),
    );
    const reference = new ReferenceEvaluator(features);
    const bodies = new Map<string, Uint8Array>();
    let reused = 0;
    for (let user = 0; user < 400; user++) {
      const ctx = { userId: `user-${user}`, sessionId: String(user) };
      const answer = await plan.answer(ctx);
      const text = new TextDecoder().decode(answer.body);
      const toggles = features
        .filter((feature) => reference.isEnabled(feature.name, ctx))
        .map((feature) => ({ name: feature.name, enabled: true, variant: reference.getVariant(feature.name, ctx), impressionData: false }));
      expect(text).toBe(JSON.stringify({ toggles }));
      if (bodies.get(text) === answer.body) reused++;
      bodies.set(text, answer.body);
    }
    // 2^5 answers at most: after each has come twice, every later request reuses its body.
    expect(bodies.size).toBeLessThanOrEqual(32);
    expect(reused).toBeGreaterThan(300);
  });
});
