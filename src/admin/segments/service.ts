/** Segments: named, reusable constraint sets that strategies refer to by id. */
import {
  CREATE_SEGMENT,
  UPDATE_PROJECT_SEGMENT,
  UPDATE_SEGMENT,
  requireAnyPermission,
  type PermissionHolder,
} from '../../auth/permissions';
import type { Principal } from '../../auth/principal';
import { runBatch, type Db, type Statement } from '../../db/client';
import { refuseUnlessMaySkipChangeRequests, refuseUnlessMaySkipChangeRequestsInProject } from '../../db/change-request-guard';
import { strategiesInOpenChangeRequests } from '../../db/change-request-segment-usage';
import type { Actor } from '../../db/events';
import { ApiError, badData, badRequest, conflict, notFound } from '../../http/errors';
import { checkConstraintValues, checkSegmentCount } from '../features/rules';
import { strategyShape } from '../features/shapes';
import type { SegmentInput, StrategySegmentsInput } from './schema';
import * as store from './store';
import { projectExists } from '../../db/lookups';

type ShapedRow = Omit<store.SegmentRow, 'createdBy'> & { createdBy: string | null; usedInProjects?: number; usedInFeatures?: number };

/** The usage counts, where the row has them (the list): typed as present for rows read with them. */
type UsageOf<R> = R extends { usedInProjects: number } ? { usedInProjects: number; usedInFeatures: number } : object;
function usageOf<R extends ShapedRow>(row: R): UsageOf<R> {
  return (row.usedInProjects === undefined ? {} : { usedInProjects: row.usedInProjects, usedInFeatures: row.usedInFeatures }) as UsageOf<R>;
}

/** A segment as Unleash answers it: `project` only for a project's segment, usage only in the list. */
export function segmentShape<R extends ShapedRow>(row: R) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    ...(row.segmentProjectId === null ? {} : { project: row.segmentProjectId }),
    constraints: row.constraints,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    ...usageOf(row),
  };
}

export async function listSegments(db: Db) {
  return { segments: (await store.listWithUsage(db)).map(segmentShape) };
}

function missing(id: number) {
  return notFound(`No segment exists with ID "${id}"`);
}

export async function segmentById(db: Db, id: number): Promise<store.SegmentRow> {
  const row = await store.byId(db, id);
  if (!row) throw missing(id);
  return row;
}

const NAME_TAKEN = 'Segment name already exists';

/** The form's check of a segment name: not empty and not taken. */
export async function validateName(db: Db, name: string): Promise<void> {
  if (name.trim() === '') throw badRequest('Segment name cannot be empty');
  if (await store.nameTaken(db, name)) throw conflict(NAME_TAKEN);
}

export async function segmentsOfStrategy(db: Db, strategyId: string) {
  return { segments: (await store.byStrategy(db, strategyId)).map(segmentShape) };
}

/**
 * The strategies using the segment (none for an unknown one), and those open change requests
 * would give it, as Unleash Enterprise lists them (both unfiltered: every admin caller sees every project).
 */
export async function strategiesOfSegment(db: Db, id: number) {
  return { strategies: await store.strategiesUsing(db, id), changeRequestStrategies: await strategiesInOpenChangeRequests(db, id) };
}

/**
 * Replaces the segments a strategy uses. The caller's permission was checked in the project
 * and environment the body names, so the strategy must be in them; the segments must exist.
 * Where change requests are on there, it is a strategy write like any other: refused without
 * SKIP_CHANGE_REQUEST (Unleash leaves this way around the review open; we close it).
 */
export async function setStrategySegments(db: Db, actor: Actor & PermissionHolder, body: StrategySegmentsInput): Promise<void> {
  await refuseUnlessMaySkipChangeRequests(db, actor, body.projectId, body.environmentId);
  const wanted = [...new Set(body.segmentIds)];
  checkSegmentCount(wanted);
  const strategy = await store.strategyById(db, body.strategyId);
  if (!strategy || strategy.projectName !== body.projectId || strategy.environment !== body.environmentId)
    throw notFound(`Could not find strategy with id ${body.strategyId}`);
  await checkStrategySegments(db, strategy.projectName, wanted);
  const before = (await store.byStrategy(db, strategy.id)).map((segment) => segment.id);
  try {
    await store.replaceStrategySegments(db, actor, strategy.id, wanted, {
      type: 'feature-strategy-update',
      project: strategy.projectName,
      environment: strategy.environment,
      featureName: strategy.featureName,
      data: strategyShape(strategy, wanted),
      preData: strategyShape(strategy, before),
    });
  } catch (error) {
    // A segment deleted or given another project since the check fails the batch: report it as the check would.
    await checkStrategySegments(db, strategy.projectName, wanted);
    throw error;
  }
}

/**
 * The segments exist and are global or the strategy's project's (as the strategy writes refuse
 * another project's, in their words: Unleash leaves this way open).
 */
async function checkStrategySegments(db: Db, project: string, wanted: readonly number[]): Promise<void> {
  const among = await store.segmentsAmong(db, wanted);
  const found = new Set(among.map((segment) => segment.id));
  const unknown = wanted.filter((id) => !found.has(id));
  if (unknown.length > 0) throw badRequest(`Unsupported segments: ${unknown.join(', ')}`);
  const foreign = among.find((segment) => segment.project !== null && segment.project !== project);
  if (foreign) throw badData(`The segment "${foreign.name}" with id ${foreign.id} does not belong to project "${project}".`);
}

/** How many constraint values one segment may hold, over all its constraints (6.10.1's default). */
const SEGMENT_VALUES_LIMIT = 1000;

function checkValuesLimit(body: SegmentInput): void {
  const total = body.constraints.reduce((sum, constraint) => sum + (constraint.values?.length ?? 0), 0);
  if (total > SEGMENT_VALUES_LIMIT) throw badData(`Segments may not have more than ${SEGMENT_VALUES_LIMIT} values`);
  checkConstraintValues(body.constraints);
}

/**
 * Unleash's checks of a segment's body, in its order: values, name, then (an update's) the
 * segment's users, then the project (Unleash's foreign key, after all of them).
 */
async function checkProjectAndName(db: Db, body: SegmentInput, exceptId?: number): Promise<void> {
  checkValuesLimit(body);
  if (await store.nameTaken(db, body.name, exceptId)) throw conflict(NAME_TAKEN);
  if (exceptId !== undefined) await checkUsedOnlyIn(db, exceptId, body.project);
  if (body.project && !(await projectExists(db, body.project))) throw badRequest(`Project=${body.project} does not exist`);
}

/**
 * A project's segment serves that project's strategies only, so Unleash refuses to give a
 * segment a project while strategies of another project use it: strategies of flags not
 * archived, and those open change requests would add or update with it (Enterprise). Judged on
 * every update naming a project, a move or not; a global segment may be used anywhere.
 */
async function checkUsedOnlyIn(db: Db, id: number, project: string | null | undefined): Promise<void> {
  if (!project) return;
  const { strategies, changeRequestStrategies } = await strategiesOfSegment(db, id);
  const used = [...new Set([...strategies, ...changeRequestStrategies].map((strategy) => strategy.projectId))];
  if (used.length > 1 || (used.length === 1 && used[0] !== project))
    throw badData(`Invalid project. Segment is being used by strategies in other projects: ${used.join(', ')}`);
}

function values(body: SegmentInput): store.SegmentValues {
  return {
    name: body.name,
    description: body.description ?? null,
    constraints: body.constraints,
    segmentProjectId: body.project ?? null,
  };
}

export async function createSegment(db: Db, principal: Principal, body: SegmentInput) {
  // A project segment may be made by whoever may edit that project's segments (Unleash's rule).
  requireAnyPermission(principal, [CREATE_SEGMENT, UPDATE_PROJECT_SEGMENT], body.project ?? undefined);
  await checkProjectAndName(db, body);
  const row = await store.insert(db, principal, values(body), { type: 'segment-created', project: body.project ?? null, data: body });
  return segmentShape(row);
}

/**
 * The statements of a segment's update, after the direct write's checks (values, project, name;
 * moving it to another project needs the same right there), for the caller to batch.
 */
export async function updateSegmentStatements(
  db: Db,
  holder: Actor & PermissionHolder,
  id: number,
  body: SegmentInput,
): Promise<Statement[]> {
  const row = await segmentById(db, id);
  // The route checked the segment's current project; moving it needs the same right where it goes.
  if ((body.project ?? null) !== row.segmentProjectId)
    requireAnyPermission(holder, [UPDATE_SEGMENT, UPDATE_PROJECT_SEGMENT], body.project ?? undefined);
  await checkProjectAndName(db, body, row.id);
  // Strategies using the segment change what SDKs evaluate, so this is a flag change too.
  return store.updateStatements(db, holder, row.id, values(body), {
    type: 'segment-updated',
    project: body.project ?? null,
    data: { id: row.id, ...body },
    preData: segmentShape(row),
  });
}

export async function updateSegment(db: Db, principal: Principal, id: number, body: SegmentInput): Promise<void> {
  // A project's segment is governed where change requests are on in any of its environments,
  // judged by the project it will have, as Unleash's segment service does.
  if (body.project) await refuseUnlessMaySkipChangeRequestsInProject(db, principal, body.project);
  const statements = await updateSegmentStatements(db, principal, id, body);
  try {
    await runBatch(db, statements);
  } catch (error) {
    // The update re-checks its users itself: one that came meanwhile is answered as the check would.
    await updateSegmentStatements(db, principal, id, body);
    throw error;
  }
}

/** The statements deleting a segment read before, for a change request's batch (nothing is deleted if a strategy uses it meanwhile). */
export function deleteSegmentStatements(db: Db, actor: Actor, row: store.SegmentRow) {
  return store.deleteUnusedStatements(db, actor, row.id, {
    type: 'segment-deleted',
    project: row.segmentProjectId,
    preData: segmentShape(row),
  });
}

export const segmentInUse = store.inUse;

export function inUseError(row: store.SegmentRow): ApiError {
  return new ApiError(409, 'SegmentInUseError', `Segment ${row.name} is in use by strategies and cannot be deleted.`);
}

/** The delete write, for a segment read before: false when a strategy uses it (or it is gone). */
export function deleteIfUnused(db: Db, actor: Actor, row: store.SegmentRow): Promise<boolean> {
  return store.deleteIfUnused(db, actor, row.id, { type: 'segment-deleted', project: row.segmentProjectId, preData: segmentShape(row) });
}

export async function deleteSegment(db: Db, principal: Principal, id: number): Promise<void> {
  const row = await segmentById(db, id);
  if (row.segmentProjectId) await refuseUnlessMaySkipChangeRequestsInProject(db, principal, row.segmentProjectId);
  if (!(await deleteIfUnused(db, principal, row))) {
    await segmentById(db, id); // 404 if it went meanwhile
    throw inUseError(row);
  }
}
