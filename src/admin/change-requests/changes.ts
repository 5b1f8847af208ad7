/**
 * What each kind of change is: the permission a direct write of it needs, its payload's
 * schema, the state it saw when drafted (a different state now is a conflict), and the
 * statements that apply it — the very builders the direct writes use, so that applying a
 * change request writes the same rows and the same audit events (and so moves SDKs' revision,
 * the change feed and the integrations the same way).
 */
import * as v from 'valibot';
import type { Db, Statement } from '../../db/client';
import { SYSTEM_ACTOR, type Actor } from '../../db/events';
import type { VariantDoc } from '../../db/schema';
import {
  CREATE_FEATURE_STRATEGY,
  DELETE_FEATURE,
  DELETE_FEATURE_STRATEGY,
  UPDATE_FEATURE_DEPENDENCY,
  UPDATE_FEATURE_ENVIRONMENT,
  UPDATE_FEATURE_ENVIRONMENT_VARIANTS,
  UPDATE_FEATURE_STRATEGY,
  UPDATE_PROJECT_SEGMENT,
  UPDATE_SEGMENT,
  DELETE_SEGMENT,
  type Permission,
  type PermissionHolder,
} from '../../auth/permissions';
import { ApiError } from '../../http/errors';
import { parseInput } from '../../http/validation';
import { environmentToggleStatements } from '../feature-environments/service';
import {
  addStrategyStatements,
  deleteStrategyStatements,
  getStrategy,
  listStrategies,
  strategySortOrderStatements,
  updateStrategyStatements,
} from '../feature-strategies/service';
import { addDependencyStatements, removeDependencyStatements } from '../feature-dependencies/service';
import { DependencySchema } from '../feature-dependencies/schema';
import { StrategySchema, StrategySortOrderSchema } from '../feature-strategies/schema';
import { environmentVariantsStatements, getEnvironmentVariants } from '../feature-variants/service';
import { VariantsSchema } from '../feature-variants/schema';
import { archiveFeatureStatements, requireFeatureEnvironment, requireNoActiveChildren } from '../features/service';
import { SEGMENT_ACTIONS, type ChangeAction } from './schema';
import { draftSegmentPayload, segmentConflict, segmentStatements } from './segment-changes';

/** Where a change applies. */
export interface Target {
  project: string;
  environment: string;
  feature: string;
}

/** The permissions (any of them) the direct write of each action needs; drafting the change needs the same. */
export const ACTION_PERMISSION: Record<ChangeAction, readonly Permission[]> = {
  updateEnabled: [UPDATE_FEATURE_ENVIRONMENT],
  addStrategy: [CREATE_FEATURE_STRATEGY],
  updateStrategy: [UPDATE_FEATURE_STRATEGY],
  deleteStrategy: [DELETE_FEATURE_STRATEGY],
  reorderStrategy: [UPDATE_FEATURE_STRATEGY],
  patchVariant: [UPDATE_FEATURE_ENVIRONMENT_VARIANTS],
  archiveFeature: [DELETE_FEATURE],
  addDependency: [UPDATE_FEATURE_DEPENDENCY],
  deleteDependency: [UPDATE_FEATURE_DEPENDENCY],
  updateSegment: [UPDATE_SEGMENT, UPDATE_PROJECT_SEGMENT],
  deleteSegment: [DELETE_SEGMENT, UPDATE_PROJECT_SEGMENT],
};

const EnabledPayload = v.object({ enabled: v.boolean() });
const StrategyIdPayload = v.object({ id: v.pipe(v.string(), v.maxLength(100)) });
const VariantsPayload = v.object({ variants: VariantsSchema });
const ReorderPayload = v.union([StrategySortOrderSchema, v.object({ strategies: StrategySortOrderSchema })]);

function orders(payload: unknown) {
  const parsed = parseInput(ReorderPayload, payload, '/body');
  return Array.isArray(parsed) ? parsed : parsed.strategies;
}

/**
 * The payload as it is stored, checked against the action's schema and the flag (400/404 as
 * the direct write would answer), with `snapshot`: what the change saw (the strategy it edits
 * or removes, the variants it replaces, the strategies' order), shown as the diff and compared
 * at apply time.
 */
export async function draftPayload(
  db: Db,
  author: Actor & PermissionHolder,
  target: Target,
  action: ChangeAction,
  payload: Record<string, unknown>,
): Promise<{ payload: Record<string, unknown>; base?: string }> {
  const { project, environment, feature } = target;
  if (SEGMENT_ACTIONS.includes(action)) return draftSegmentPayload(db, author, project, action, payload);
  await requireFeatureEnvironment(db, project, feature, environment);
  switch (action) {
    case 'updateEnabled':
      return { payload: parseInput(EnabledPayload, payload, '/body') };
    case 'addStrategy':
      return { payload: parseInput(StrategySchema, payload, '/body') };
    case 'updateStrategy': {
      const { id } = parseInput(StrategyIdPayload, payload, '/body');
      const strategy = parseInput(StrategySchema, payload, '/body');
      const snapshot = await getStrategy(db, project, feature, environment, id);
      return { payload: { ...strategy, id, snapshot }, base: JSON.stringify(snapshot) };
    }
    case 'deleteStrategy': {
      const { id } = parseInput(StrategyIdPayload, payload, '/body');
      const snapshot = await getStrategy(db, project, feature, environment, id);
      return {
        payload: { id, name: snapshot.name, title: snapshot.title, disabled: snapshot.disabled, snapshot },
        base: JSON.stringify(snapshot),
      };
    }
    case 'reorderStrategy': {
      const list = orders(payload);
      return { payload: { strategies: list }, base: await strategyOrder(db, target) };
    }
    case 'patchVariant': {
      const { variants } = parseInput(VariantsPayload, payload, '/body');
      const { variants: snapshot } = await getEnvironmentVariants(db, project, feature, environment);
      return { payload: { variants, snapshot }, base: JSON.stringify(snapshot) };
    }
    case 'archiveFeature':
      await requireNoActiveChildren(db, feature);
      return { payload: {} };
    case 'addDependency': {
      const dependency = parseInput(DependencySchema, payload, '/body');
      await addDependencyStatements(db, SYSTEM_ACTOR, project, feature, dependency);
      return { payload: dependency };
    }
    case 'deleteDependency':
      return { payload: {} };
  }
  throw new ApiError(400, 'ValidationError', `Unknown change action ${action}`);
}

async function strategyOrder(db: Db, target: Target): Promise<string> {
  const strategies = await listStrategies(db, target.project, target.feature, target.environment);
  return JSON.stringify(strategies.map((strategy) => strategy.id));
}

/** What the change's target looks like now, comparable with what it saw when drafted. */
async function currentBase(db: Db, target: Target, action: string, payload: Record<string, unknown>): Promise<string | null> {
  const { project, environment, feature } = target;
  if (action === 'updateStrategy' || action === 'deleteStrategy') {
    return JSON.stringify(await getStrategy(db, project, feature, environment, String(payload.id)));
  }
  if (action === 'reorderStrategy') return strategyOrder(db, target);
  if (action === 'patchVariant') return JSON.stringify((await getEnvironmentVariants(db, project, feature, environment)).variants);
  return null;
}

/** Why the change can no longer apply as drafted, in words for the request page (undefined: it can). */
export async function conflictOf(db: Db, target: Target, action: string, payload: Record<string, unknown>, base: string | null) {
  if (SEGMENT_ACTIONS.includes(action)) return segmentConflict(db, action, payload, base);
  try {
    await requireFeatureEnvironment(db, target.project, target.feature, target.environment);
    if (action === 'archiveFeature') await requireNoActiveChildren(db, target.feature);
    if (action === 'addDependency')
      await addDependencyStatements(db, SYSTEM_ACTOR, target.project, target.feature, parseInput(DependencySchema, payload, '/body'));
    const now = await currentBase(db, target, action, payload);
    if (base !== null && now !== base)
      return `The ${action === 'patchVariant' ? 'variants' : 'strategy'} of ${target.feature} changed since this change was drafted`;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      return action === 'updateStrategy' || action === 'deleteStrategy'
        ? 'The strategy this change edits no longer exists'
        : `The flag ${target.feature} no longer exists or was archived`;
    }
    if (error instanceof ApiError && error.name === 'InvalidOperationError') return error.message;
    throw error;
  }
  return undefined;
}

/** The statements of one change, through the direct write's own checks and builders. */
export async function applyStatements(
  db: Db,
  actor: Actor & PermissionHolder,
  target: Target,
  action: string,
  payload: Record<string, unknown>,
): Promise<Statement[]> {
  const { project, environment, feature } = target;
  switch (action) {
    case 'updateEnabled':
      return environmentToggleStatements(db, actor, project, feature, environment, payload.enabled === true);
    case 'addStrategy':
      return (await addStrategyStatements(db, actor, project, feature, environment, parseInput(StrategySchema, payload, '/body')))
        .statements;
    case 'updateStrategy': {
      const body = parseInput(StrategySchema, payload, '/body');
      return (await updateStrategyStatements(db, actor, project, feature, environment, String(payload.id), body)).statements;
    }
    case 'deleteStrategy':
      return deleteStrategyStatements(db, actor, project, feature, environment, String(payload.id));
    case 'reorderStrategy':
      return strategySortOrderStatements(db, actor, project, feature, environment, orders(payload));
    case 'patchVariant':
      return (await environmentVariantsStatements(db, actor, project, feature, environment, payload.variants as VariantDoc[])).statements;
    case 'archiveFeature':
      return archiveFeatureStatements(db, actor, project, feature);
    case 'addDependency':
      return addDependencyStatements(db, actor, project, feature, parseInput(DependencySchema, payload, '/body'));
    case 'deleteDependency':
      return removeDependencyStatements(db, actor, project, feature);
    case 'updateSegment':
    case 'deleteSegment':
      return segmentStatements(db, actor, action, payload);
    default:
      throw new ApiError(400, 'ValidationError', `Unknown change action ${action}`);
  }
}
