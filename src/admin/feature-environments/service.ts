/**
 * A flag in one environment: reading it with its strategies, and turning it on or off there,
 * one flag at a time or several of a project's flags at once (all or none).
 */
import type { Db, Statement } from '../../db/client';
import { runBatch } from '../../db/client';
import { refuseUnlessMaySkipChangeRequests } from '../../db/change-request-guard';
import { auditEvent, type Actor } from '../../db/events';
import { CREATE_FEATURE_STRATEGY, requireAnyPermission, type PermissionHolder } from '../../auth/permissions';
import { requireFeatureEnvironment } from '../features/service';
import { defaultStrategyStatements, hasNoStrategies, strategiesIn } from '../feature-strategies/service';
import * as store from './store';

/** One environment of a flag as Unleash shows it: `name` is the flag's, strategies without their segments. */
export async function getFeatureEnvironment(db: Db, projectId: string, name: string, environment: string) {
  const { featureEnvironment } = await requireFeatureEnvironment(
    db,
    projectId,
    name,
    environment,
    `Could not find ${name} in ${environment}`,
  );
  const rows = await strategiesIn(db, name, environment);
  return {
    name,
    environment,
    enabled: featureEnvironment.enabled,
    strategies: rows.map((row) => ({
      id: row.id,
      featureName: row.featureName,
      title: row.title,
      parameters: row.parameters,
      constraints: row.constraints,
      variants: row.variants,
      sortOrder: row.sortOrder,
      disabled: row.disabled,
      name: row.strategyName,
    })),
  };
}

export async function setEnvironmentEnabled(
  db: Db,
  actor: Actor & PermissionHolder,
  projectId: string,
  name: string,
  environment: string,
  enabled: boolean,
) {
  await refuseUnlessMaySkipChangeRequests(db, actor, projectId, environment);
  await runBatch(db, await environmentToggleStatements(db, actor, projectId, name, environment, enabled));
}

/** Turns every named flag on or off in one environment: each flag passes Unleash's checks, or nothing changes. */
export async function bulkToggle(
  db: Db,
  actor: Actor & PermissionHolder,
  projectId: string,
  environment: string,
  names: readonly string[],
  enabled: boolean,
) {
  await refuseUnlessMaySkipChangeRequests(db, actor, projectId, environment);
  const statements: Statement[] = [];
  for (const name of new Set(names)) {
    statements.push(...(await environmentToggleStatements(db, actor, projectId, name, environment, enabled)));
  }
  if (statements.length > 0) await runBatch(db, statements);
}

/**
 * The statements that turn one flag on or off in one environment, after Unleash's checks (the
 * flag in the project, the environment on the flag, and, when turning on a flag with no
 * strategies, the right to add its default strategy): for one call's batch, a bulk one, or an
 * applied change request's.
 */
export async function environmentToggleStatements(
  db: Db,
  actor: Actor & PermissionHolder,
  projectId: string,
  name: string,
  environment: string,
  enabled: boolean,
): Promise<Statement[]> {
  const { feature, featureEnvironment } = await requireFeatureEnvironment(db, projectId, name, environment);
  const statements: Statement[] = [];
  if (enabled && (await hasNoStrategies(db, name, environment))) {
    // Unleash turns a flag with no strategies on for everyone by adding its default strategy,
    // so the caller must also be allowed to add one there (its stopWhenCannotCreateStrategies).
    requireAnyPermission(actor, [CREATE_FEATURE_STRATEGY], projectId, environment);
    statements.push(...(await defaultStrategyStatements(db, actor, projectId, name, environment)));
  }
  // As in Unleash, a flag already in that state changes nothing and records no event, so
  // SDKs' revision does not move for it.
  if (featureEnvironment.enabled === enabled) return statements;
  statements.push(
    store.setEnabled(db, name, environment, enabled),
    auditEvent(db, actor, {
      type: enabled ? 'feature-environment-enabled' : 'feature-environment-disabled',
      project: feature.project,
      environment,
      featureName: name,
      // 6.10.1 records neither `data` nor `preData`: the type says what changed.
    }),
  );
  return statements;
}
