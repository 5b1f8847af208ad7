/**
 * Changes to a segment (`updateSegment`, `deleteSegment`), which the UI's segment form drafts
 * into the change request of the segment's project where change requests are on. They go
 * through the segment module's own checks and statement builders, so applying writes the rows
 * and the `segment-updated`/`segment-deleted` events a direct write would (and so moves SDKs'
 * revision). What the segment was when drafted is kept: a segment changed or gone since is a
 * conflict.
 */
import * as v from 'valibot';
import type { Db, Statement } from '../../db/client';
import type { Actor } from '../../db/events';
import type { PermissionHolder } from '../../auth/permissions';
import { ApiError, badRequest } from '../../http/errors';
import { parseInput } from '../../http/validation';
import { SegmentSchema } from '../segments/schema';
import { deleteSegmentStatements, inUseError, segmentById, segmentInUse, segmentShape, updateSegmentStatements } from '../segments/service';
import { failUnlessMoved } from './store';

const SegmentIdPayload = v.object({
  id: v.pipe(v.number(), v.integer('must be integer'), v.minValue(1, 'must be >= 1'), v.maxValue(2147483647, 'must be <= 2147483647')),
});

type Segment = Awaited<ReturnType<typeof segmentById>>;

/** What a change compares: the segment's own fields (not who made it, nor when). */
function baseOf(row: Segment): string {
  return JSON.stringify({ name: row.name, description: row.description, project: row.segmentProjectId, constraints: row.constraints });
}

function idOf(payload: Record<string, unknown>): number {
  return parseInput(SegmentIdPayload, payload, '/body').id;
}

/**
 * The payload of a segment's change as stored, checked as the direct write checks it, with
 * `snapshot` (the segment as it was, the UI's diff). The segment must be the request's
 * project's (now, or after the change), as a request belongs to one project.
 */
export async function draftSegmentPayload(
  db: Db,
  holder: Actor & PermissionHolder,
  project: string,
  action: string,
  payload: Record<string, unknown>,
) {
  const id = idOf(payload);
  const row = await segmentById(db, id);
  const snapshot = segmentShape(row);
  if (action === 'deleteSegment') {
    if (row.segmentProjectId !== project) throw badRequest(`Segment ${row.name} is not a segment of project ${project}`);
    if (await segmentInUse(db, id)) throw inUseError(row);
    return { payload: { id, name: row.name, snapshot }, base: baseOf(row) };
  }
  const body = parseInput(SegmentSchema, payload, '/body');
  if (row.segmentProjectId !== project && (body.project ?? null) !== project)
    throw badRequest(`Segment ${row.name} is not a segment of project ${project}`);
  // The direct write's checks (name, values, project, the right to move it), nothing written.
  await updateSegmentStatements(db, holder, id, body);
  return { payload: { id, ...body, snapshot }, base: baseOf(row) };
}

/** Why the segment's change can no longer apply as drafted (undefined: it can). */
export async function segmentConflict(db: Db, action: string, payload: Record<string, unknown>, base: string | null) {
  let row: Segment;
  try {
    row = await segmentById(db, idOf(payload));
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return `The segment ${String(payload.name)} no longer exists`;
    throw error;
  }
  if (base !== null && baseOf(row) !== base) return `The segment ${row.name} changed since this change was drafted`;
  if (action === 'deleteSegment' && (await segmentInUse(db, row.id))) return inUseError(row).message;
  return undefined;
}

/** The statements of a segment's change, through the segment module's checks and builders. */
export async function segmentStatements(
  db: Db,
  actor: Actor & PermissionHolder,
  action: string,
  payload: Record<string, unknown>,
): Promise<Statement[]> {
  const id = idOf(payload);
  if (action === 'updateSegment') return updateSegmentStatements(db, actor, id, parseInput(SegmentSchema, payload, '/body'));
  const { remove, event } = deleteSegmentStatements(db, actor, await segmentById(db, id));
  // A strategy that took the segment up meanwhile keeps it: the batch stops, nothing is applied.
  return [remove, failUnlessMoved(db), event];
}
