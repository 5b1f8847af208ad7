/**
 * A flag's strategies in one environment (Unleash's feature strategy operations): read, add,
 * replace, change with a JSON Patch, remove, reorder, and the project's default strategy a
 * flag gets when it is turned on without any. Every write is one batch ending in its event.
 */
import type { Db, Statement } from '../../db/client';
import { runBatch } from '../../db/client';
import { refuseUnlessMaySkipChangeRequests } from '../../db/change-request-guard';
import { failOnForeignSegments, isGuardAbort } from '../../db/segment-project-guard';
import { auditEvent, type Actor } from '../../db/events';
import type { PermissionHolder } from '../../auth/permissions';
import type { StrategyVariantDoc } from '../../db/schema';
import { badData, badRequest, notFound } from '../../http/errors';
import { checkConstraintValues, checkSegmentCount } from '../features/rules';
import { applyJsonPatch, type JsonPatch } from '../../http/json-patch';
import { parseInput } from '../../http/validation';
import { findFeature, invalidOperation, requireFeatureEnvironment } from '../features/service';
import { strategyEventData, strategyShape } from '../features/shapes';
import { balanceWeights } from '../features/weights';
import { StrategySchema, type StrategyRequest } from './schema';
import * as store from './store';

/**
 * The strategy's type and segments exist; a project's segment serves only that project's
 * strategies (Unleash's `validateProjectCanAccessSegments`, in its words).
 */
async function validateStrategyReferences(db: Db, projectId: string, body: StrategyRequest) {
  checkConstraintValues(body.constraints);
  checkSegmentCount(body.segments);
  if (!(await store.strategyExists(db, body.name))) throw badRequest(`Could not find strategy type with name ${body.name}`);
  const wanted = [...new Set(body.segments)];
  const found = await store.existingSegments(db, wanted);
  const missing = wanted.filter((id) => !found.has(id));
  if (missing.length > 0) throw badRequest(`Unsupported segments: ${missing.join(', ')}`);
  const foreign = wanted.find((id) => ![null, projectId].includes(found.get(id)!.project));
  if (foreign !== undefined)
    throw badData(`The segment "${found.get(foreign)!.name}" with id ${foreign} does not belong to project "${projectId}".`);
}

function isForeignKeyViolation(error: unknown): boolean {
  return error instanceof Error && /FOREIGN KEY constraint failed/.test(`${error.message} ${String(error.cause ?? '')}`);
}

/** The batch's re-check that the segments the strategy links are still global or its project's. */
function foreignSegmentGuard(db: Db, strategyId: string, body: StrategyRequest): Statement[] {
  return body.segments.length === 0 ? [] : [failOnForeignSegments(db, strategyId)];
}

/**
 * Writes a strategy and its segment links. The links' foreign keys re-check, inside the
 * batch, that the segments checked before still exist: a segment deleted meanwhile fails the
 * whole batch, reported as the 400 the check would have given (a strategy must never be
 * stored without a segment it was given, which would widen its rollout); so does one given
 * another project meanwhile (the guard's abort).
 */
async function writeStrategy(db: Db, projectId: string, body: StrategyRequest, statements: Statement[]): Promise<void> {
  try {
    await runBatch(db, statements);
  } catch (error) {
    if (isForeignKeyViolation(error) || isGuardAbort(error)) await validateStrategyReferences(db, projectId, body);
    throw error;
  }
}

/** The statements that write a strategy with its segment links, as it is (a clone copies them so). */
export function strategyStatements(db: Db, row: store.NewStrategyRow & { id: string }, segmentIds: readonly number[]): Statement[] {
  return [store.insertStrategy(db, row), ...store.linkSegments(db, row.id, segmentIds)];
}

/** The flag's strategies in one environment, in Unleash's order, without their segments. */
export async function strategiesIn(db: Db, name: string, environment: string) {
  return (await store.strategiesWithSegments(db, name, environment)).rows;
}

export async function listStrategies(db: Db, projectId: string, name: string, environment: string) {
  await requireFeatureEnvironment(db, projectId, name, environment, `Feature ${name} does not have environment ${environment}`);
  const { rows, links } = await store.strategiesWithSegments(db, name, environment);
  return rows.map((row) =>
    strategyShape(
      row,
      links.filter((link) => link.strategyId === row.id).map((link) => link.segmentId),
    ),
  );
}

export async function getStrategy(db: Db, projectId: string, name: string, environment: string, strategyId: string) {
  await requireFeatureEnvironment(db, projectId, name, environment);
  const found = await store.strategyWithSegments(db, name, environment, strategyId);
  // 6.10.1's read says "id: <id>"; its update and delete say "id <id>".
  if (!found) throw notFound(`Could not find strategy with id: ${strategyId}`);
  return strategyShape(found.row, found.segmentIds);
}

/** 6.10.1's answer to a strategy for an environment the flag's project does not have. */
function environmentNotInProject() {
  return badRequest('You have not added the current environment to the project');
}

/**
 * A strategy of a flag in another project, named through the wrong project's path: 6.10.1's
 * 403 (it refuses to move a strategy between projects) rather than a 404.
 */
async function refuseOtherProject(db: Db, projectId: string, name: string, environment: string, strategyId: string) {
  const owner = await findFeature(db, name);
  if (!owner || owner.project === projectId || owner.archivedAt !== null) return;
  if (await store.strategyWithSegments(db, name, environment, strategyId))
    throw invalidOperation('You can not change the projectId for an activation strategy.');
}

/** A direct strategy write's actor: who writes, with their permissions (for the change-request rule). */
type Writer = Actor & PermissionHolder;

export async function addStrategy(db: Db, actor: Writer, projectId: string, name: string, environment: string, body: StrategyRequest) {
  await refuseUnlessMaySkipChangeRequests(db, actor, projectId, environment);
  const { statements, shape } = await addStrategyStatements(db, actor, projectId, name, environment, body);
  await writeStrategy(db, projectId, body, statements);
  return shape;
}

/** The checks and statements of adding a strategy, for a direct write's batch or an applied change request's. */
export async function addStrategyStatements(
  db: Db,
  actor: Actor,
  projectId: string,
  name: string,
  environment: string,
  body: StrategyRequest,
) {
  const { feature } = await requireFeatureEnvironment(db, projectId, name, environment, environmentNotInProject());
  await validateStrategyReferences(db, projectId, body);
  const strategyVariants = balanceWeights(body.variants) as StrategyVariantDoc[];
  const id = crypto.randomUUID();
  const row = {
    id,
    featureName: name,
    projectName: feature.project,
    environment,
    strategyName: body.name,
    title: body.title ?? null,
    parameters: body.parameters,
    constraints: body.constraints,
    variants: strategyVariants,
    sortOrder: body.sortOrder ?? (await store.nextStrategySortOrder(db, name, environment)),
    disabled: body.disabled ?? false,
    createdByUserId: actor.userId,
  };
  const shape = strategyShape({ ...row, createdAt: new Date().toISOString() }, [...new Set(body.segments)]);
  const statements: Statement[] = [
    store.insertStrategy(db, row),
    ...store.linkSegments(db, id, body.segments),
    ...foreignSegmentGuard(db, id, body),
    auditEvent(db, actor, {
      type: 'feature-strategy-add',
      project: feature.project,
      environment,
      featureName: name,
      data: strategyEventData(row, [...new Set(body.segments)]),
    }),
  ];
  return { statements, shape };
}

export async function updateStrategy(
  db: Db,
  actor: Writer,
  projectId: string,
  name: string,
  environment: string,
  strategyId: string,
  body: StrategyRequest,
) {
  await refuseUnlessMaySkipChangeRequests(db, actor, projectId, environment);
  const { statements, shape } = await updateStrategyStatements(db, actor, projectId, name, environment, strategyId, body);
  await writeStrategy(db, projectId, body, statements);
  return shape;
}

/** The checks and statements of replacing a strategy, for a direct write's batch or an applied change request's. */
export async function updateStrategyStatements(
  db: Db,
  actor: Actor,
  projectId: string,
  name: string,
  environment: string,
  strategyId: string,
  body: StrategyRequest,
) {
  await refuseOtherProject(db, projectId, name, environment, strategyId);
  const { feature } = await requireFeatureEnvironment(db, projectId, name, environment);
  const existing = await store.strategyWithSegments(db, name, environment, strategyId);
  if (!existing) throw notFound(`Could not find strategy with id ${strategyId}`);
  await validateStrategyReferences(db, projectId, body);
  const changes = {
    strategyName: body.name,
    title: body.title ?? null,
    parameters: body.parameters,
    constraints: body.constraints,
    variants: balanceWeights(body.variants) as StrategyVariantDoc[],
    sortOrder: body.sortOrder ?? existing.row.sortOrder,
    disabled: body.disabled ?? false,
  };
  const shape = strategyShape({ ...existing.row, ...changes }, [...new Set(body.segments)]);
  const statements: Statement[] = [
    store.updateStrategy(db, strategyId, changes),
    store.unlinkSegments(db, strategyId),
    ...store.linkSegments(db, strategyId, body.segments),
    ...foreignSegmentGuard(db, strategyId, body),
    auditEvent(db, actor, {
      type: 'feature-strategy-update',
      project: feature.project,
      environment,
      featureName: name,
      data: strategyEventData({ ...existing.row, ...changes }, [...new Set(body.segments)]),
      preData: strategyEventData(existing.row, existing.segmentIds),
    }),
  ];
  return { statements, shape };
}

export async function deleteStrategy(db: Db, actor: Writer, projectId: string, name: string, environment: string, strategyId: string) {
  await refuseUnlessMaySkipChangeRequests(db, actor, projectId, environment);
  await runBatch(db, await deleteStrategyStatements(db, actor, projectId, name, environment, strategyId));
}

/** The checks and statements of removing a strategy, for a direct write's batch or an applied change request's. */
export async function deleteStrategyStatements(
  db: Db,
  actor: Actor,
  projectId: string,
  name: string,
  environment: string,
  strategyId: string,
): Promise<Statement[]> {
  await refuseOtherProject(db, projectId, name, environment, strategyId);
  const { feature } = await requireFeatureEnvironment(db, projectId, name, environment);
  const existing = await store.strategyWithSegments(db, name, environment, strategyId);
  if (!existing) throw notFound(`Could not find strategy with id ${strategyId}`);
  return [
    store.deleteStrategy(db, strategyId),
    auditEvent(db, actor, {
      type: 'feature-strategy-remove',
      project: feature.project,
      environment,
      featureName: name,
      // 6.10.1 records the removed strategy without its segments.
      preData: strategyEventData(existing.row, []),
    }),
  ];
}

/** Applies a JSON Patch to the strategy as GET shows it; the result must be a valid strategy. */
export async function patchStrategy(
  db: Db,
  actor: Writer,
  projectId: string,
  name: string,
  environment: string,
  strategyId: string,
  patch: JsonPatch,
) {
  const current = await getStrategy(db, projectId, name, environment, strategyId);
  const patched = parseInput(StrategySchema, applyJsonPatch(current, patch), '/body');
  return updateStrategy(db, actor, projectId, name, environment, strategyId, patched);
}

/** Sets the sort order of some of a flag's strategies in one environment (the UI's drag and drop). */
export async function setStrategySortOrder(
  db: Db,
  actor: Writer,
  projectId: string,
  name: string,
  environment: string,
  orders: { id: string; sortOrder: number }[],
) {
  await refuseUnlessMaySkipChangeRequests(db, actor, projectId, environment);
  await runBatch(db, await strategySortOrderStatements(db, actor, projectId, name, environment, orders));
}

/** The checks and statements of reordering strategies, for a direct write's batch or an applied change request's. */
export async function strategySortOrderStatements(
  db: Db,
  actor: Actor,
  projectId: string,
  name: string,
  environment: string,
  orders: { id: string; sortOrder: number }[],
): Promise<Statement[]> {
  const { feature } = await requireFeatureEnvironment(db, projectId, name, environment);
  const { rows } = await store.strategiesWithSegments(db, name, environment);
  const known = new Set(rows.map((row) => row.id));
  const unknown = orders.find((order) => !known.has(order.id));
  if (unknown) throw badRequest(`Strategy ${unknown.id} is not one of the strategies of ${name} in ${environment}`);
  const wanted = new Map(orders.map((order) => [order.id, order.sortOrder]));
  const before = rows.map((row) => row.id);
  const after = rows
    .map((row, index) => ({ id: row.id, sortOrder: wanted.get(row.id) ?? row.sortOrder, index }))
    .sort((a, b) => a.sortOrder - b.sortOrder || a.index - b.index)
    .map((row) => row.id);
  return [
    ...orders.map((order) => store.setStrategySortOrder(db, name, environment, order.id, order.sortOrder)),
    auditEvent(db, actor, {
      type: 'strategy-order-changed',
      project: feature.project,
      environment,
      featureName: name,
      data: { strategyIds: after },
      preData: { strategyIds: before },
    }),
  ];
}

/** The project's default strategy for an environment, as its settings name it (or none). */
interface ConfiguredStrategy {
  name?: string;
  title?: string | null;
  parameters?: Record<string, string>;
  constraints?: [];
  variants?: StrategyVariantDoc[];
  segments?: number[];
}

/** Whether the flag has no strategy in the environment (turning it on then adds the default one). */
export async function hasNoStrategies(db: Db, name: string, environment: string): Promise<boolean> {
  return (await store.strategyCount(db, name, environment)) === 0;
}

/**
 * The statements that give a flag the project's default strategy in an environment, with
 * everything it names (its title, variants and the segments that still exist) and its
 * `feature-strategy-add` event: Unleash adds it when a flag with no strategies is turned on.
 */
export async function defaultStrategyStatements(
  db: Db,
  actor: Actor,
  projectId: string,
  name: string,
  environment: string,
): Promise<Statement[]> {
  const projectEnvironment = await store.projectEnvironment(db, projectId, environment);
  const configured = projectEnvironment?.defaultStrategy as ConfiguredStrategy | null | undefined;
  const strategyName = configured?.name ?? 'flexibleRollout';
  const parameters = { ...(configured?.parameters ?? { rollout: '100', stickiness: 'default', groupId: name }) };
  // As Unleash: a flexible rollout without a group id groups by the flag.
  if (strategyName === 'flexibleRollout' && !parameters.groupId) parameters.groupId = name;
  const segmentIds = [...new Set(configured?.segments ?? [])];
  const existing = await store.existingSegments(db, segmentIds);
  const strategy = {
    id: crypto.randomUUID(),
    featureName: name,
    projectName: projectId,
    environment,
    strategyName,
    title: configured?.title ?? null,
    parameters,
    constraints: configured?.constraints ?? [],
    variants: configured?.variants ?? [],
    sortOrder: 0,
    createdByUserId: actor.userId,
  };
  const linked = segmentIds.filter((id) => existing.has(id));
  return [
    store.insertStrategy(db, strategy),
    ...linked.map((segmentId) => store.linkSegments(db, strategy.id, [segmentId])).flat(),
    auditEvent(db, actor, {
      type: 'feature-strategy-add',
      project: projectId,
      environment,
      featureName: name,
      data: strategyEventData(strategy, linked),
    }),
  ];
}
