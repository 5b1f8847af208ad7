/**
 * The client-specification suite once more, end to end through our storage: each file's
 * state is written into D1, served by GET /api/client/features (as an SDK announcing spec
 * 5.2.0 gets it), and the served JSON is what gets evaluated. This checks that nothing the
 * SDKs rely on is lost or changed between the tables and the wire.
 *
 * Two kinds of state cannot exist in the database, because foreign keys forbid them: a
 * strategy linked to a segment that does not exist, and a dependency on a flag that does
 * not exist. Flags built on those are named below and stay covered by
 * client-specification.test.ts, which runs the states as given. The delta files are there too.
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import index from '@unleash/client-specification/specifications/index.json';
import { Evaluator } from '../src/modules/evaluation/engine';
import type { Feature, Segment } from '../src/modules/evaluation/types';
import { bodyOf, call, createToken } from './support/http';
import { specFile } from './support/client-specification';

let clientToken: string;
beforeAll(async () => {
  clientToken = await createToken({ tokenName: 'spec-served', type: 'client', environment: 'development' });
});

/** Flags whose state the database cannot hold (see above). */
function unrepresentable(features: Feature[], segments: Segment[]): Set<string> {
  const names = new Set(features.map((feature) => feature.name));
  const segmentIds = new Set(segments.map((segment) => segment.id));
  const out = new Set<string>();
  for (const feature of features) {
    const missingSegment = (feature.strategies ?? []).some((strategy) => (strategy.segments ?? []).some((id) => !segmentIds.has(id)));
    const missingParent = (feature.dependencies ?? []).some((dependency) => !names.has(dependency.feature));
    if (missingSegment || missingParent) out.add(feature.name);
  }
  // A child of such a flag cannot be stored faithfully either.
  for (const feature of features) if ((feature.dependencies ?? []).some((dependency) => out.has(dependency.feature))) out.add(feature.name);
  return out;
}

async function store(features: Feature[], segments: Segment[], skip: Set<string>): Promise<void> {
  const db = env.DB;
  const statements: D1PreparedStatement[] = [
    db.prepare('DELETE FROM dependent_features'),
    db.prepare('DELETE FROM feature_strategy_segment'),
    db.prepare('DELETE FROM feature_strategies'),
    db.prepare('DELETE FROM feature_environments'),
    db.prepare('DELETE FROM features'),
    db.prepare('DELETE FROM segments'),
  ];
  for (const segment of segments) {
    statements.push(
      db
        .prepare('INSERT INTO segments (id, name, constraints) VALUES (?, ?, ?)')
        .bind(segment.id, `segment-${segment.id}`, JSON.stringify(segment.constraints ?? [])),
    );
  }
  const stored = features.filter((feature) => !skip.has(feature.name));
  for (const feature of stored) {
    statements.push(
      db
        .prepare('INSERT INTO features (name, project, impression_data) VALUES (?, ?, ?)')
        .bind(feature.name, 'default', feature.impressionData ? 1 : 0),
      db
        .prepare('INSERT INTO feature_environments (feature_name, environment, enabled, variants) VALUES (?, ?, ?, ?)')
        .bind(feature.name, 'development', feature.enabled ? 1 : 0, JSON.stringify(feature.variants ?? [])),
    );
    (feature.strategies ?? []).forEach((strategy, position) => {
      const id = `${feature.name}#${position}`;
      statements.push(
        db
          .prepare(
            'INSERT INTO feature_strategies (id, feature_name, project_name, environment, strategy_name, parameters, constraints, variants, sort_order) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
          )
          .bind(
            id,
            feature.name,
            'default',
            'development',
            strategy.name,
            JSON.stringify(strategy.parameters ?? {}),
            JSON.stringify(strategy.constraints ?? []),
            JSON.stringify(strategy.variants ?? []),
            position,
          ),
      );
      for (const segment of strategy.segments ?? [])
        statements.push(
          db.prepare('INSERT INTO feature_strategy_segment (feature_strategy_id, segment_id) VALUES (?, ?)').bind(id, segment),
        );
    });
  }
  for (const feature of stored) {
    for (const dependency of feature.dependencies ?? []) {
      statements.push(
        db
          .prepare('INSERT INTO dependent_features (parent, child, enabled, variants) VALUES (?, ?, ?, ?)')
          .bind(dependency.feature, feature.name, dependency.enabled === false ? 0 : 1, JSON.stringify(dependency.variants ?? [])),
      );
    }
  }
  statements.push(db.prepare("INSERT INTO events (type, created_by) VALUES ('features-imported', 'spec-served')"));
  await db.batch(statements);
}

const STATE_FILES = index.filter((name) => !specFile(name).state.events);

describe('client specification, served from D1 by /api/client/features', () => {
  it('leaves out only the flags the database cannot hold', () => {
    const skipped = STATE_FILES.flatMap((name) =>
      [...unrepresentable(specFile(name).state.features ?? [], specFile(name).state.segments ?? [])].map((flag) => `${name}: ${flag}`),
    );
    expect(skipped).toEqual([
      '15-global-constraints.json: F9.withMissingSegment',
      '17-dependent-features.json: parents.not.exist.child.enabled',
    ]);
  });

  for (const name of STATE_FILES) {
    it(`${name}: every test and variant test passes on the served payload`, async () => {
      const file = specFile(name);
      const features = file.state.features ?? [];
      const segments = file.state.segments ?? [];
      const skip = unrepresentable(features, segments);
      await store(features, segments, skip);
      const response = await call('GET', '/api/client/features', { token: clientToken, headers: { 'Unleash-Client-Spec': '5.2.0' } });
      expect(response.status).toBe(200);
      const served = await bodyOf<{ features: Feature[]; segments: Segment[] }>(response);
      expect(served.features.map((feature) => feature.name).sort()).toEqual(
        features
          .map((feature) => feature.name)
          .filter((flag) => !skip.has(flag))
          .sort(),
      );
      const evaluator = new Evaluator(served.features, served.segments);
      const tests = (file.tests ?? []).filter((test) => !skip.has(test.toggleName));
      expect(tests.map((test) => [test.description, evaluator.isEnabled(test.toggleName, test.context)])).toEqual(
        tests.map((test) => [test.description, test.expectedResult]),
      );
      const variantTests = (file.variantTests ?? []).filter((test) => !skip.has(test.toggleName));
      expect(variantTests.map((test) => [test.description, evaluator.getVariant(test.toggleName, test.context)])).toEqual(
        variantTests.map((test) => [test.description, { ...test.expectedResult, featureEnabled: test.expectedResult.feature_enabled }]),
      );
    });
  }
});
