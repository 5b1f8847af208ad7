/**
 * Seeds flags for the SDK-side tests straight into D1 (the shared tables), each write with
 * an audit event in the same batch, as the admin API does, so the data revision moves.
 */
import { env } from 'cloudflare:workers';

export interface SeedStrategy {
  name: string;
  parameters?: Record<string, string>;
  constraints?: unknown[];
  variants?: unknown[];
  segments?: number[];
  sortOrder?: number;
  disabled?: boolean;
}

export interface SeedEnvironment {
  enabled: boolean;
  variants?: unknown[];
  strategies?: SeedStrategy[];
}

export interface SeedFlag {
  name: string;
  project?: string;
  type?: string;
  description?: string | null;
  impressionData?: boolean;
  stale?: boolean;
  archived?: boolean;
  environments?: Record<string, SeedEnvironment>;
  tags?: [string, string][];
  dependencies?: { parent: string; enabled?: boolean; variants?: string[] }[];
}

let strategyCounter = 0;

function eventStatement(type: string, featureName: string | null, project: string | null) {
  return env.DB.prepare('INSERT INTO events (type, created_by, created_by_user_id, project, feature_name) VALUES (?, ?, ?, ?, ?)').bind(
    type,
    'sdk-test',
    -1337,
    project,
    featureName,
  );
}

export async function seedFlag(flag: SeedFlag): Promise<void> {
  const project = flag.project ?? 'default';
  const statements: D1PreparedStatement[] = [
    env.DB.prepare(
      'INSERT INTO features (name, description, type, project, stale, impression_data, archived_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).bind(
      flag.name,
      flag.description ?? null,
      flag.type ?? 'release',
      project,
      flag.stale ? 1 : 0,
      flag.impressionData ? 1 : 0,
      flag.archived ? new Date().toISOString() : null,
    ),
  ];
  for (const [environment, settings] of Object.entries(flag.environments ?? {})) {
    statements.push(
      env.DB.prepare('INSERT INTO feature_environments (feature_name, environment, enabled, variants) VALUES (?, ?, ?, ?)').bind(
        flag.name,
        environment,
        settings.enabled ? 1 : 0,
        JSON.stringify(settings.variants ?? []),
      ),
    );
    (settings.strategies ?? []).forEach((strategy, index) => {
      const id = `strategy-${flag.name}-${environment}-${++strategyCounter}`;
      statements.push(
        env.DB.prepare(
          'INSERT INTO feature_strategies (id, feature_name, project_name, environment, strategy_name, parameters, constraints, variants, sort_order, disabled) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        ).bind(
          id,
          flag.name,
          project,
          environment,
          strategy.name,
          JSON.stringify(strategy.parameters ?? {}),
          JSON.stringify(strategy.constraints ?? []),
          JSON.stringify(strategy.variants ?? []),
          strategy.sortOrder ?? index,
          strategy.disabled ? 1 : 0,
        ),
      );
      for (const segment of strategy.segments ?? []) {
        statements.push(
          env.DB.prepare('INSERT INTO feature_strategy_segment (feature_strategy_id, segment_id) VALUES (?, ?)').bind(id, segment),
        );
      }
    });
  }
  for (const [type, value] of flag.tags ?? []) {
    statements.push(env.DB.prepare('INSERT OR IGNORE INTO tag_types (name) VALUES (?)').bind(type));
    statements.push(env.DB.prepare('INSERT OR IGNORE INTO tags (type, value) VALUES (?, ?)').bind(type, value));
    statements.push(
      env.DB.prepare('INSERT INTO feature_tag (feature_name, tag_type, tag_value) VALUES (?, ?, ?)').bind(flag.name, type, value),
    );
  }
  for (const dependency of flag.dependencies ?? []) {
    statements.push(
      env.DB.prepare('INSERT INTO dependent_features (parent, child, enabled, variants) VALUES (?, ?, ?, ?)').bind(
        dependency.parent,
        flag.name,
        dependency.enabled === false ? 0 : 1,
        JSON.stringify(dependency.variants ?? []),
      ),
    );
  }
  statements.push(eventStatement('feature-created', flag.name, project));
  await env.DB.batch(statements);
}

export async function seedSegment(name: string, constraints: unknown[]): Promise<number> {
  const [insert] = await env.DB.batch([
    env.DB.prepare('INSERT INTO segments (name, constraints) VALUES (?, ?) RETURNING id').bind(name, JSON.stringify(constraints)),
    eventStatement('segment-created', null, null),
  ]);
  return (insert!.results[0] as { id: number }).id;
}

export async function seedProject(id: string): Promise<void> {
  await env.DB.batch([
    env.DB.prepare('INSERT INTO projects (id, name) VALUES (?, ?)').bind(id, id),
    eventStatement('project-created', null, id),
  ]);
}

/** Runs a statement and records an event with it, as an admin write would. */
export async function writeWithEvent(sql: string, ...params: unknown[]): Promise<void> {
  await env.DB.batch([env.DB.prepare(sql).bind(...params), eventStatement('feature-updated', null, null)]);
}
