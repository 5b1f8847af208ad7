/**
 * Writes a client-specification file's state into D1 (replacing every flag and segment), as
 * the tests that serve the suite through our storage need it. Two kinds of state cannot
 * exist in the database, because foreign keys forbid them: a strategy linked to a segment
 * that does not exist, and a dependency on a flag that does not exist (`unrepresentable`).
 */
import { env } from 'cloudflare:workers';
import type { Feature, Segment } from '../../src/sdk/evaluation/types';

/** Flags whose state the database cannot hold (see above). */
export function unrepresentable(features: Feature[], segments: Segment[]): Set<string> {
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

export async function storeSpecState(features: Feature[], segments: Segment[], skip: Set<string>): Promise<void> {
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
